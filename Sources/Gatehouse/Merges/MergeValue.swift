import Foundation
import JOSE
import Storage

/// A stored SQLite value in the form merge records keep it: exact for every storage class, so undo
/// writes back the very bytes and types that were there.
///
/// JSON form: `null`; text as a JSON string; `{"int": "42"}` (a string, so 64-bit values survive
/// JavaScript readers); `{"real": 1.5}`; `{"blob": "hex"}`.
public struct MergeValue: Sendable, Hashable, Codable {
    /// The value.
    public let sql: SQLValue

    public init(_ sql: SQLValue) { self.sql = sql }

    private enum Keys: String, CodingKey { case int, real, blob }

    public init(from decoder: Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { sql = .null; return }
        if let text = try? single.decode(String.self) { sql = .text(text); return }
        let keyed = try decoder.container(keyedBy: Keys.self)
        if let text = try keyed.decodeIfPresent(String.self, forKey: .int) {
            guard let value = Int64(text) else {
                throw DecodingError.dataCorruptedError(forKey: .int, in: keyed, debugDescription: "not a 64-bit integer: \(text)")
            }
            sql = .integer(value)
        } else if let value = try keyed.decodeIfPresent(Double.self, forKey: .real) {
            sql = .real(value)
        } else if let hex = try keyed.decodeIfPresent(String.self, forKey: .blob), let bytes = Hex.decode(hex) {
            sql = .blob(bytes)
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a stored SQLite value"))
        }
    }

    public func encode(to encoder: Encoder) throws {
        switch sql {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .text(let text):
            var single = encoder.singleValueContainer()
            try single.encode(text)
        case .integer(let value):
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(String(value), forKey: .int)
        case .real(let value):
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(value, forKey: .real)
        case .blob(let bytes):
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(Hex.encode(bytes), forKey: .blob)
        }
    }

    /// An unambiguous text form for fingerprints: the storage class, then the value.
    var fingerprintText: String {
        switch sql {
        case .null: return "n"
        case .integer(let value): return "i\(value)"
        case .real(let value): return "r\(value.bitPattern)"
        case .text(let text): return "t\(text.utf8.count):\(text)"
        case .blob(let bytes): return "b\(Hex.encode(bytes))"
        }
    }
}
