/// Base64url without padding (RFC 4648 §5, RFC 7515 §2), the encoding of every JWS part and JWK member.
///
/// Decoding is strict: a token that another library would "repair" is rejected here, so that two parsers can never
/// disagree about what a signed token says.
///
///     let text = Base64URL.encode(Array("hi".utf8))   // "aGk"
///     let bytes = Base64URL.decode("aGk")             // [0x68, 0x69]
public enum Base64URL {
    /// `bytes` as unpadded base64url.
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64Codec.encode(bytes, alphabet: Base64Codec.urlAlphabet, pad: false)
    }

    /// The bytes of an unpadded base64url string, or nil when it is not canonical base64url: padding `=`, a character
    /// outside `A–Z a–z 0–9 - _`, a length that no byte string encodes to (length % 4 == 1), or set trailing bits.
    public static func decode(_ text: String) -> [UInt8]? {
        Base64Codec.decode(Array(text.utf8), table: Base64Codec.urlTable, padded: false)
    }

    /// As `decode(_:)`, for bytes already in hand (a slice of a compact JWS, say).
    public static func decode<Bytes: Collection>(bytes: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        Base64Codec.decode(Array(bytes), table: Base64Codec.urlTable, padded: false)
    }
}

/// Standard, padded base64 (RFC 4648 §4), the body of a PEM file.
public enum Base64 {
    /// `bytes` as padded standard base64 on one line.
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64Codec.encode(bytes, alphabet: Base64Codec.standardAlphabet, pad: true)
    }

    /// The bytes of padded standard base64, or nil when it is not: a character outside `A–Z a–z 0–9 + /`, a length
    /// that is not a multiple of 4, misplaced padding or set trailing bits. Whitespace is not skipped; a PEM reader
    /// joins the lines first.
    public static func decode(_ text: String) -> [UInt8]? {
        Base64Codec.decode(Array(text.utf8), table: Base64Codec.standardTable, padded: true)
    }
}

/// The one implementation behind `Base64URL` and `Base64`.
enum Base64Codec {
    static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let urlTable = table(for: urlAlphabet)
    static let standardTable = table(for: standardAlphabet)

    /// 0xFF marks a byte that is not in the alphabet.
    private static func table(for alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, char) in alphabet.enumerated() { table[Int(char)] = UInt8(value) }
        return table
    }

    static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var out: [UInt8] = []
        encode(bytes, alphabet: alphabet, pad: pad, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the encoding of `bytes` to `out` (the JWT minting path builds the whole token in one buffer).
    static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool, into out: inout [UInt8]) {
        let fullChunks = bytes.count / 3
        let remainder = bytes.count - fullChunks * 3
        let outputCount = fullChunks * 4 + (remainder == 0 ? 0 : (pad ? 4 : remainder + 1))
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: outputCount))
        bytes.withUnsafeBufferPointer { input in
            alphabet.withUnsafeBufferPointer { symbols in
                out.withUnsafeMutableBufferPointer { buffer in
                    var write = start
                    var read = 0
                    // `while`, not `for … in 0..<n`: the range iterator is generic and slow in debug builds.
                    while read < fullChunks * 3 {
                        let chunk = UInt32(input[read]) << 16 | UInt32(input[read + 1]) << 8 | UInt32(input[read + 2])
                        buffer[write] = symbols[Int(chunk >> 18 & 0x3F)]
                        buffer[write + 1] = symbols[Int(chunk >> 12 & 0x3F)]
                        buffer[write + 2] = symbols[Int(chunk >> 6 & 0x3F)]
                        buffer[write + 3] = symbols[Int(chunk & 0x3F)]
                        read += 3
                        write += 4
                    }
                    guard remainder > 0 else { return }
                    var chunk = UInt32(input[read]) << 16
                    if remainder == 2 { chunk |= UInt32(input[read + 1]) << 8 }
                    buffer[write] = symbols[Int(chunk >> 18 & 0x3F)]
                    buffer[write + 1] = symbols[Int(chunk >> 12 & 0x3F)]
                    if remainder == 2 {
                        buffer[write + 2] = symbols[Int(chunk >> 6 & 0x3F)]
                        if pad { buffer[write + 3] = UInt8(ascii: "=") }
                    } else if pad {
                        buffer[write + 2] = UInt8(ascii: "=")
                        buffer[write + 3] = UInt8(ascii: "=")
                    }
                }
            }
        }
    }

    static func decode(_ input: [UInt8], table: [UInt8], padded: Bool) -> [UInt8]? {
        var chars = input[...]
        if padded {
            guard chars.count % 4 == 0 else { return nil }
            // At most two `=`, and only at the very end.
            var padding = 0
            while padding < 2, let last = chars.last, last == UInt8(ascii: "=") {
                chars = chars.dropLast()
                padding += 1
            }
        }
        guard chars.count % 4 != 1 else { return nil }

        var out = [UInt8]()
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for char in chars {
            let value = table[Int(char)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, or two different strings would decode to the same bytes.
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
