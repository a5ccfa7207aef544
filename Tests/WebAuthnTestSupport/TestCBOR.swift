import Foundation

/// A small CBOR writer for the tests, independent of the reader under test: maps keep the order given, so a test
/// can also write what a canonical encoder never would.
indirect enum TestCBOR {
    case unsigned(UInt64)
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([TestCBOR])
    case map([(TestCBOR, TestCBOR)])
    case bool(Bool)
    case null
    /// Bytes written as they are.
    case raw([UInt8])

    static func int(_ value: Int64) -> TestCBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// The head of an item of `major` type with argument `value`, in shortest form.
    static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        let type = major << 5
        switch value {
        case 0..<24: return [type | UInt8(value)]
        case 24...0xFF: return [type | 24, UInt8(value)]
        case 0x100...0xFFFF: return [type | 25] + bigEndian(value, 2)
        case 0x1_0000...0xFFFF_FFFF: return [type | 26] + bigEndian(value, 4)
        default: return [type | 27] + bigEndian(value, 8)
        }
    }

    static func bigEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (UInt64($0) * 8)) }
    }

    var encoded: [UInt8] {
        switch self {
        case .unsigned(let n): return Self.head(0, n)
        case .negative(let n): return Self.head(1, n)
        case .bytes(let b): return Self.head(2, UInt64(b.count)) + b
        case .text(let t): return Self.head(3, UInt64(t.utf8.count)) + Array(t.utf8)
        case .array(let items): return Self.head(4, UInt64(items.count)) + items.flatMap(\.encoded)
        case .map(let entries):
            return Self.head(5, UInt64(entries.count)) + entries.flatMap { $0.0.encoded + $0.1.encoded }
        case .bool(let value): return [value ? 0xF5 : 0xF4]
        case .null: return [0xF6]
        case .raw(let bytes): return bytes
        }
    }
}

/// SplitMix64: a fixed-seed generator, so that a fuzz failure replays.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func hex(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        out.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return out
}

/// The package root, found from this file's path: Tests/WebAuthnTestSupport/TestCBOR.swift.
let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
