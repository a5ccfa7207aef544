import CCrypto

/// HMAC (RFC 2104): SHA-256 for tokens and fingerprints that need a secret key; SHA-1 only for TOTP (RFC 6238),
/// whose authenticator apps compute HMAC-SHA-1.
///
///     let mac = HMAC.sha256(key: secret, data: Array(message.utf8))
///     constantTimeEquals(mac, presented)
public enum HMAC {
    /// The 32-byte HMAC-SHA-256 of `data` under `key` (any length, empty included).
    public static func sha256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        mac(EVP_sha256(), size: 32, key: key, data: data, name: "HMAC-SHA-256")
    }

    /// The 20-byte HMAC-SHA-1 of `data` under `key`: what RFC 4226/6238 one-time codes are cut from. Not for
    /// anything new (SHA-1 is kept here for the authenticator apps that only speak it).
    public static func sha1(key: [UInt8], data: [UInt8]) -> [UInt8] {
        mac(EVP_sha1(), size: 20, key: key, data: data, name: "HMAC-SHA-1")
    }

    private static func mac(_ digest: OpaquePointer?, size: Int, key: [UInt8], data: [UInt8], name: String) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        // A one-byte buffer stands in for an empty key or message: OpenSSL wants a non-null pointer.
        let keyBytes = key.isEmpty ? [0] : key
        let dataBytes = data.isEmpty ? [0] : data
        let result = out.withUnsafeMutableBufferPointer { output in
            CCrypto.HMAC(digest, keyBytes, Int32(key.count), dataBytes, data.count, output.baseAddress, &length)
        }
        precondition(result != nil && Int(length) == size, "OpenSSL's \(name) failed")
        return out
    }
}

/// Whether `a` and `b` hold the same bytes, taking the same time wherever they differ (`CRYPTO_memcmp`), so that
/// comparing a secret against a guess leaks nothing but the lengths.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    guard !a.isEmpty else { return true }
    return a.withUnsafeBytes { left in
        b.withUnsafeBytes { right in CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0 }
    }
}

/// Whether two strings have the same UTF-8 bytes, compared in constant time.
public func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    constantTimeEquals(Array(a.utf8), Array(b.utf8))
}
