import CCrypto

/// Owns one `EVP_PKEY` and frees it when the last reference goes.
///
/// OpenSSL 3 allows concurrent use of a key that is not being modified, and nothing here modifies a key after
/// construction, hence `@unchecked Sendable`.
final class OpenSSLKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// `EVP_PKEY_get_base_id`: `EVP_PKEY_EC`, `EVP_PKEY_RSA`, `EVP_PKEY_ED25519`, …
    var baseID: Int32 { EVP_PKEY_get_base_id(pointer) }

    /// The size of the key in bits (the modulus for RSA, the field for EC).
    var bits: Int32 { EVP_PKEY_get_bits(pointer) }

    /// The EC group's name as OpenSSL spells it ("prime256v1", "secp384r1"), nil for non-EC keys.
    var ecGroupName: String? {
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        let ok = buffer.withUnsafeMutableBufferPointer {
            EVP_PKEY_get_utf8_string_param(pointer, "group", $0.baseAddress, $0.count, &length)
        }
        guard ok == 1 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// SubjectPublicKeyInfo DER (`i2d_PUBKEY`).
    func subjectPublicKeyInfoDER() -> [UInt8]? {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PUBKEY(pointer, &cursor)
        }
        guard written == length else { return nil }
        return out
    }
}

/// Helpers shared by the OpenSSL-backed types.
enum OpenSSL {
    /// Empties OpenSSL's thread-local error queue, so a failure handled here is not reported later by unrelated code.
    static func clearErrors() {
        ERR_clear_error()
    }

    /// Overwrites `bytes` with zeros in a way the optimiser does not remove.
    static func cleanse(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { OPENSSL_cleanse(base, buffer.count) }
        }
    }

    /// Parses SubjectPublicKeyInfo DER, nil when it does not parse or has trailing bytes.
    static func publicKey(fromSPKI der: [UInt8]) -> OpenSSLKey? {
        der.withUnsafeBufferPointer { buffer -> OpenSSLKey? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let key = d2i_PUBKEY(nil, &cursor, buffer.count) else {
                clearErrors()
                return nil
            }
            let wrapped = OpenSSLKey(taking: key)
            guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else { return nil }
            return wrapped
        }
    }

    /// A C string pointer for a literal. `OSSL_PARAM_BLD` keeps the key and value pointers it is given until
    /// `OSSL_PARAM_BLD_to_param`, so a temporary bridged Swift string would dangle; a static literal cannot.
    static func cString(_ literal: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(literal.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// Builds a key from OSSL_PARAMs with `EVP_PKEY_fromdata`: `algorithm` is "EC" or "RSA", `selection` says which
    /// parts (public only here). `build` pushes the parameters and returns false if a push failed; every pointer it
    /// pushes must stay valid until this function returns (use `cString(_:)` for names).
    static func keyFromData(
        algorithm: String,
        selection: Int32,
        build: (OpaquePointer) -> Bool
    ) -> OpenSSLKey? {
        defer { clearErrors() }
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard build(builder), let params = OSSL_PARAM_BLD_to_param(builder) else { return nil }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else { return nil }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata(context, &key, selection, params) == 1, let key else { return nil }
        let wrapped = OpenSSLKey(taking: key)
        // fromdata checks the encoding; the public check also proves an EC point is on the curve.
        guard let checker = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(checker) }
        guard EVP_PKEY_public_check(checker) == 1 else { return nil }
        return wrapped
    }
}
