import CCrypto
import Foundation
import Locking

/// Signs SHA-256 digests with one P-256 key, reusing a prepared `EVP_PKEY_CTX`.
///
/// Preparing a context (fetching the provider's algorithm, copying the key reference) costs about as much as the
/// signature itself, so minting many client secrets in a row keeps one context per key. The context is not
/// thread-safe: a caller that finds it busy signs with a context of its own rather than waiting.
/// Fast path kept for ops/bench's client-secret mint row (≥ 0.80× `openssl speed ecdsap256`).
final class ECDSASigner: @unchecked Sendable {
    let key: OpenSSLKey
    /// The prepared context, made on first use (an `EVP_PKEY_CTX`; freed with the signer).
    private let cached = Locked<OpaquePointer?>(nil)

    init(key: OpenSSLKey) {
        self.key = key
    }

    deinit {
        if let context = cached.value { EVP_PKEY_CTX_free(context) }
    }

    /// The raw r‖s signature of a 32-byte digest.
    func sign(digest: [UInt8]) throws -> [UInt8] {
        if let signature = try cached.tryWithLock({ context -> [UInt8] in
            if context == nil { context = try makeContext() }
            return try sign(digest: digest, context: context!)
        }) {
            return signature
        }
        let context = try makeContext()
        defer { EVP_PKEY_CTX_free(context) }
        return try sign(digest: digest, context: context)
    }

    private func makeContext() throws -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            OpenSSL.clearErrors()
            throw P256.Failure.signing
        }
        guard EVP_PKEY_sign_init(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            OpenSSL.clearErrors()
            throw P256.Failure.signing
        }
        return context
    }

    private func sign(digest: [UInt8], context: OpaquePointer) throws -> [UInt8] {
        // An ECDSA P-256 signature in DER is at most 72 bytes; a stack buffer saves a heap allocation per token.
        let raw = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 80) { der -> [UInt8]? in
            var length = der.count
            let ok = digest.withUnsafeBufferPointer { input in
                EVP_PKEY_sign(context, der.baseAddress, &length, input.baseAddress, input.count)
            }
            guard ok == 1 else {
                OpenSSL.clearErrors()
                return nil
            }
            return ECDSASignature.raw(fromDER: UnsafeBufferPointer(rebasing: der[..<length]))
        }
        guard let raw else { throw P256.Failure.signing }
        return raw
    }
}

/// Converts between the two encodings of an ECDSA P-256 signature: DER `ECDSA-Sig-Value` (OpenSSL, X.509) and the
/// fixed 64-byte r‖s of JWS (RFC 7518 §3.4). Public so that a diagnosis can recognise a DER-encoded JWS signature.
public enum ECDSASignature {
    /// r‖s from DER, nil when `der` is not exactly one well-formed signature.
    public static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        der.withUnsafeBufferPointer { raw(fromDER: $0) }
    }

    /// r‖s from DER in a buffer.
    static func raw(fromDER buffer: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
        guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else {
            OpenSSL.clearErrors()
            return nil
        }
        defer { ECDSA_SIG_free(signature) }
        guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else { return nil }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        var out = [UInt8](repeating: 0, count: 64)
        let written = out.withUnsafeMutableBufferPointer { output -> Bool in
            guard let base = output.baseAddress else { return false }
            return BN_bn2binpad(r, base, 32) == 32 && BN_bn2binpad(s, base + 32, 32) == 32
        }
        return written ? out : nil
    }

    /// DER from r‖s, nil unless `raw` is 64 bytes with r and s both in [1, n - 1].
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64 else { return nil }
        let r = Array(raw[0..<32])
        let s = Array(raw[32..<64])
        guard isScalarInRange(r), isScalarInRange(s) else { return nil }
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let rNumber = r.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let sNumber = s.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        guard let rNumber, let sNumber else {
            BN_free(rNumber)
            BN_free(sNumber)
            return nil
        }
        // set0 takes ownership of both numbers.
        guard ECDSA_SIG_set0(signature, rNumber, sNumber) == 1 else {
            BN_free(rNumber)
            BN_free(sNumber)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? out : nil
    }

    /// Whether a 32-byte big-endian number is in [1, n - 1] for the P-256 order n.
    static func isScalarInRange(_ value: [UInt8]) -> Bool {
        guard value.count == 32, value.contains(where: { $0 != 0 }) else { return false }
        for (byte, limit) in zip(value, P256.order) where byte != limit {
            return byte < limit
        }
        return false  // equal to n
    }
}
