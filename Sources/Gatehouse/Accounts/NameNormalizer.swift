import Foundation

/// Turns display names into the form that two spellings of one person's name share: lowercased,
/// accents folded, apostrophes dropped, any run of spaces, hyphens, dots and commas collapsed to one space.
///
///     var normalizer = NameNormalizer()
///     normalizer.normalized("  José  O'Brien-García ") == "jose obrien garcia"
///
/// Built for a scan of a million names: ASCII is handled byte by byte, and each non-ASCII scalar is
/// folded once through Foundation and remembered, so one normalizer belongs to one scan.
public struct NameNormalizer {
    private var folded: [UInt32: [UInt8]] = [:]

    public init() {}

    /// The normalized name as text.
    public mutating func normalized(_ name: String) -> String {
        String(decoding: bytes(name), as: UTF8.self)
    }

    /// A 64-bit key of the normalized name; 0 when the name has no letters or digits (no evidence).
    public mutating func key(_ name: String) -> UInt64 {
        if let key = Self.asciiKey(name) { return key }
        let normalized = bytes(name)
        return normalized.isEmpty ? 0 : FNV1a.hash(normalized)
    }

    /// `key` for an all-ASCII name, hashed as it is normalized (no array, no Unicode lookups); nil when the
    /// name has a non-ASCII byte and needs the full path. The rules are the ASCII branch of `bytes`.
    static func asciiKey(_ name: String) -> UInt64? {
        var name = name
        return name.withUTF8 { utf8 -> UInt64? in
            var hash = FNV1a.offsetBasis
            var empty = true, pendingSpace = false
            for byte in utf8 {
                let out: UInt8
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): out = byte
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): out = byte + 32
                case UInt8(ascii: "'"), UInt8(ascii: "`"): continue
                case 0...0x20, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ","), 0x7F: pendingSpace = true; continue
                case 0x80...: return nil
                default: out = byte
                }
                if pendingSpace && !empty { hash = (hash ^ 0x20) &* FNV1a.prime }
                pendingSpace = false
                empty = false
                hash = (hash ^ UInt64(out)) &* FNV1a.prime
            }
            return empty ? 0 : (hash == 0 ? 1 : hash)
        }
    }

    /// The normalized name as UTF-8 bytes.
    public mutating func bytes(_ name: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(name.utf8.count)
        var pendingSpace = false
        func emit(_ byte: UInt8) {
            if pendingSpace && !out.isEmpty { out.append(0x20) }
            pendingSpace = false
            out.append(byte)
        }
        for scalar in name.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {
                let byte = UInt8(value)
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): emit(byte)
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): emit(byte + 32)
                case UInt8(ascii: "'"), UInt8(ascii: "`"): continue
                case 0...0x20, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ","), 0x7F: pendingSpace = true
                // Other punctuation is kept as itself, so that `a%` in a query matches only a literal `a%`.
                default: emit(byte)
                }
                continue
            }
            if value == 0x2019 || value == 0x2018 || value == 0x02BC { continue } // typographic apostrophes
            let properties = scalar.properties
            if properties.generalCategory == .nonspacingMark { continue } // a combining accent: folded away
            guard properties.isAlphabetic || properties.numericType != nil else { pendingSpace = true; continue }
            let mapped: [UInt8]
            if let cached = folded[value] {
                mapped = cached
            } else {
                let text = String(Character(scalar)).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
                mapped = Array(text.utf8)
                folded[value] = mapped
            }
            for byte in mapped { emit(byte) }
        }
        return out
    }
}

/// FNV-1a, 64 bits: a fast, stable hash for grouping keys (not for anything secret).
enum FNV1a {
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    static func hash<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var hash = offsetBasis
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* prime
        }
        return hash == 0 ? 1 : hash
    }

    static func hash(_ text: String) -> UInt64 {
        var text = text
        return text.withUTF8 { hash($0) }
    }
}
