import CCrypto
import Foundation
import JOSE

/// Hashes and verifies admin passwords with PBKDF2-HMAC-SHA256 at OWASP's current strength
/// (600,000 iterations), a 16-byte random salt and a 32-byte output, in a self-describing string:
///
///     pbkdf2-sha256$600000$<salt, base64>$<hash, base64>
///
/// The string names the algorithm and its cost, so stronger settings (or scrypt) can be introduced
/// later while old hashes still verify. Comparison is constant-time (`CRYPTO_memcmp`).
public struct PasswordHasher: Sendable {
    /// OWASP's 2023 recommendation for PBKDF2-HMAC-SHA256.
    public static let standardIterations = 600_000
    /// Hashes claiming more than this are refused rather than computed (a tampered row must not stall a login).
    static let maxIterations = 10_000_000
    static let prefix = "pbkdf2-sha256"

    /// The iterations used for new hashes.
    public let iterations: Int

    /// The production hasher.
    public static let standard = PasswordHasher(iterations: standardIterations)

    public init(iterations: Int) {
        self.iterations = iterations
    }

    /// A new hash of `password` with a fresh salt.
    public func hash(_ password: AdminPassword) throws -> String {
        let salt = try SecureRandom.bytes(16)
        let derived = try Self.derive(password.bytes, salt: salt, iterations: iterations)
        return "\(Self.prefix)$\(iterations)$\(Data(salt).base64EncodedString())$\(Data(derived).base64EncodedString())"
    }

    /// Whether `password` matches `stored`. A malformed stored hash never matches.
    public func verify(_ password: AdminPassword, against stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == Self.prefix, let iterations = Int(parts[1]), iterations >= 1, iterations <= Self.maxIterations,
              let salt = Data(base64Encoded: String(parts[2])), let expected = Data(base64Encoded: String(parts[3])),
              !salt.isEmpty, expected.count == 32,
              let derived = try? Self.derive(password.bytes, salt: Array(salt), iterations: iterations) else { return false }
        let expectedBytes = Array(expected)
        return derived.withUnsafeBytes { lhs in
            expectedBytes.withUnsafeBytes { rhs in CRYPTO_memcmp(lhs.baseAddress, rhs.baseAddress, 32) == 0 }
        }
    }

    /// Whether `stored` was made with fewer iterations than this hasher uses (rehash on next login).
    public func needsRehash(_ stored: String) -> Bool {
        let parts = stored.split(separator: "$")
        return parts.count != 4 || parts[0] != Self.prefix || (Int(parts[1]) ?? 0) < iterations
    }

    /// Spends the same time as a real verification, for logins naming no admin (no timing oracle on usernames).
    public func verifyNothing(_ password: AdminPassword) {
        _ = try? Self.derive(password.bytes, salt: Array(repeating: 0, count: 16), iterations: iterations)
    }

    static func derive(_ password: [UInt8], salt: [UInt8], iterations: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let pass = password.map { CChar(bitPattern: $0) }
        let ok = pass.withUnsafeBufferPointer { passBuffer in
            salt.withUnsafeBufferPointer { saltBuffer in
                out.withUnsafeMutableBufferPointer { output in
                    PKCS5_PBKDF2_HMAC(passBuffer.baseAddress, Int32(passBuffer.count), saltBuffer.baseAddress, Int32(saltBuffer.count),
                                      Int32(iterations), EVP_sha256(), 32, output.baseAddress)
                }
            }
        }
        guard ok == 1 else { throw GatehouseError("PBKDF2 failed in OpenSSL", code: .cryptoFailed) }
        return out
    }
}
