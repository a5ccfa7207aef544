import CCrypto

/// Cryptographically secure random bytes from OpenSSL's CSPRNG.
public enum SecureRandom {
    /// Errors from the random generator (it only fails when the OS has no entropy source).
    public struct Failure: Error, CustomStringConvertible {
        public var description: String { "the system's random number generator failed (RAND_bytes)" }
    }

    /// `count` random bytes.
    public static func bytes(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else { throw Failure() }
        return out
    }

    private static let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    /// A random string of `length` ASCII letters and digits, the shape of Better Auth's ids.
    public static func alphanumeric(_ length: Int) throws -> String {
        var result = [UInt8]()
        result.reserveCapacity(length)
        // Rejection sampling keeps the distribution uniform: 62 * 4 = 248 fits below 256.
        while result.count < length {
            for byte in try bytes(length * 2) where byte < 248 {
                result.append(alphanumerics[Int(byte % 62)])
                if result.count == length { break }
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
