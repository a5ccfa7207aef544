import CCrypto

/// Password hashes for console admins: scrypt (memory-hard), self-describing, verified in constant time.
///
/// The encoding is `scrypt$N$r$p$salt$hash`, with `salt` (16 bytes) and `hash` (32 bytes) in padded standard base64:
///
///     let stored = try PasswordHash.make(password: "correct horse")   // "scrypt$32768$8$1$…$…"
///     PasswordHash.verify(password: attempt, encoded: stored)         // true / false
///
/// N = 2^15, r = 8 uses 32 MiB and about 0.2 s of CPU a hash on the build machines: slow enough to make guessing
/// expensive, fast enough that a few concurrent logins on a two-core machine stay responsive. (N = 2^17 measured
/// 0.8 s and 128 MiB a hash: too slow for a login form.)
public enum PasswordHash {
    /// The cost parameters `make` uses.
    public struct Parameters: Equatable, Sendable {
        /// CPU/memory cost, a power of two.
        public var n: UInt64
        /// Block size.
        public var r: UInt64
        /// Parallelism.
        public var p: UInt64

        /// Parameters as given; `verify` only accepts N a power of two in [2^10, 2^20], r ≤ 32, p ≤ 16.
        public init(n: UInt64, r: UInt64, p: UInt64) {
            self.n = n
            self.r = r
            self.p = p
        }

        /// N = 2^15, r = 8, p = 1.
        public static let current = Parameters(n: 1 << 15, r: 8, p: 1)

        /// Bytes of memory scrypt needs: 128 · r · (N + p).
        var memory: UInt64 { 128 * r * (n + p) }

        /// Bounds for parameters read back from a stored hash, so a tampered row cannot ask for gigabytes.
        var isAcceptable: Bool {
            n >= 1 << 10 && n <= 1 << 20 && n & (n - 1) == 0 && (1...32).contains(r) && (1...16).contains(p)
                && memory <= 512 << 20
        }
    }

    /// Why hashing failed (only OpenSSL failures: any password can be hashed).
    public enum Failure: Error, CustomStringConvertible {
        /// `EVP_PBE_scrypt` failed (out of memory, say).
        case kdf
        public var description: String { "OpenSSL's scrypt failed" }
    }

    static let saltSize = 16
    static let hashSize = 32

    /// Hashes `password` with a fresh random salt and the current parameters.
    public static func make(password: String, parameters: Parameters = .current) throws -> String {
        let salt = try SecureRandom.bytes(saltSize)
        guard var hash = derive(password: password, salt: salt, parameters: parameters, length: hashSize) else {
            throw Failure.kdf
        }
        defer { OpenSSL.cleanse(&hash) }
        return "scrypt$\(parameters.n)$\(parameters.r)$\(parameters.p)$\(Base64.encode(salt))$\(Base64.encode(hash))"
    }

    /// Whether `password` matches `encoded`. A malformed encoding or out-of-range parameters give false.
    public static func verify(password: String, encoded: String) -> Bool {
        guard let stored = Stored(encoded),
              var candidate = derive(password: password, salt: stored.salt, parameters: stored.parameters,
                                     length: stored.hash.count)
        else { return false }
        defer { OpenSSL.cleanse(&candidate) }
        return constantTimeEquals(candidate, stored.hash)
    }

    /// Whether `encoded` was made with other parameters than `.current` (or cannot be read): rehash on next login.
    public static func needsRehash(_ encoded: String) -> Bool {
        Stored(encoded)?.parameters != .current
    }

    private struct Stored {
        var parameters: Parameters
        var salt: [UInt8]
        var hash: [UInt8]

        init?(_ encoded: String) {
            let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
            guard fields.count == 6, fields[0] == "scrypt",
                  let n = UInt64(fields[1]), let r = UInt64(fields[2]), let p = UInt64(fields[3]),
                  let salt = Base64.decode(String(fields[4])), let hash = Base64.decode(String(fields[5]))
            else { return nil }
            let parameters = Parameters(n: n, r: r, p: p)
            guard parameters.isAcceptable, salt.count >= 8, (16...64).contains(hash.count) else { return nil }
            self.parameters = parameters
            self.salt = salt
            self.hash = hash
        }
    }

    private static func derive(password: String, salt: [UInt8], parameters: Parameters, length: Int) -> [UInt8]? {
        var secret = Array(password.utf8)
        defer { OpenSSL.cleanse(&secret) }
        var out = [UInt8](repeating: 0, count: length)
        // A one-byte buffer stands in for an empty password: OpenSSL treats a null pointer as "no password".
        let passwordBytes = secret.isEmpty ? [0] : secret
        let ok = passwordBytes.withUnsafeBufferPointer { pass in
            out.withUnsafeMutableBufferPointer { key in
                EVP_PBE_scrypt(
                    UnsafeRawPointer(pass.baseAddress!).assumingMemoryBound(to: CChar.self), secret.count,
                    salt, salt.count, parameters.n, parameters.r, parameters.p,
                    parameters.memory + (1 << 20), key.baseAddress, length)
            }
        }
        guard ok == 1 else {
            OpenSSL.clearErrors()
            return nil
        }
        return out
    }
}
