import CCrypto

/// SHA-256, the one digest Gatehouse uses: migration checksums, the audit chain, key fingerprints.
///
///     let hex = SHA256.hex(Array("hello".utf8))
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                if let algorithm = FetchedSHA256.shared.algorithm {
                    var length: UInt32 = 0
                    _ = EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, algorithm, nil)
                } else {
                    _ = CCrypto.SHA256(input.baseAddress, input.count, output.baseAddress)
                }
            }
        }
        return out
    }

    /// The digest of `bytes` as 64 lowercase hex characters.
    public static func hex(_ bytes: [UInt8]) -> String {
        Hex.encode(hash(bytes))
    }

    /// The digest of a string's UTF-8 bytes as lowercase hex.
    public static func hex(_ string: String) -> String {
        hex(Array(string.utf8))
    }
}

/// SHA-512, for the one identifier that asks for it: a revoked refresh token named by Google's RISC
/// `hash_base64_sha512_sha512` (Base64 of SHA-512 of SHA-512 of the token).
public enum SHA512 {
    /// The 64-byte digest of `bytes`.
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                _ = CCrypto.SHA512(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return out
    }
}

/// SHA-256 fetched from the default provider once. OpenSSL 3's one-shot `SHA256()` looks the algorithm up on
/// every call, which shows when minting thousands of tokens a second. A fetched `EVP_MD` is immutable and may be
/// shared between threads.
private final class FetchedSHA256: @unchecked Sendable {
    static let shared = FetchedSHA256()
    let algorithm: OpaquePointer?

    private init() {
        algorithm = EVP_MD_fetch(nil, "SHA256", nil)
    }
}

/// Lowercase hexadecimal encoding.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lowercase hex, two characters a byte.
    public static func encode(_ bytes: [UInt8]) -> String {
        var chars = [UInt8]()
        chars.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            chars.append(digits[Int(byte >> 4)])
            chars.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: chars, as: UTF8.self)
    }

    /// The bytes of an even-length hex string, or nil if it is not one.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = value(chars[index]), let low = value(chars[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func value(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
