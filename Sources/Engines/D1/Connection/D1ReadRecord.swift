import Foundation
import Storage

/// D1's contents of a `ReadRecord`: each read as it was sent and what it answered, with the schema they were made
/// against (an offer made against another is ignored).
struct D1ReadRecord: Sendable, Codable, Equatable {
    /// One read as the engine sent it and what it answered.
    struct Entry: Sendable, Codable, Equatable {
        let sql: String
        let parameters: [String]
        let columns: [String]
        let rows: [[RecordedValue]]
    }

    let schema: String
    let entries: [Entry]

    /// As an opaque record.
    func record() throws -> ReadRecord {
        ReadRecord(engine: D1Dialect().name, contents: String(decoding: try JSONEncoder().encode(self), as: UTF8.self))
    }

    /// The contents of `record`, or nil when D1 did not make it or it does not parse.
    init?(_ record: ReadRecord) {
        guard record.engine == D1Dialect().name, let decoded = try? JSONDecoder().decode(Self.self, from: Data(record.contents.utf8)) else { return nil }
        self = decoded
    }

    init(schema: String, entries: [Entry]) {
        self.schema = schema
        self.entries = entries
    }
}

/// An `SQLValue` as JSON: null, `{"i":"…"}` (text, so no integer loses digits), `{"r":…}`, `{"t":"…"}`, `{"b":[…]}`.
struct RecordedValue: Sendable, Codable, Equatable {
    let value: SQLValue

    init(_ value: SQLValue) { self.value = value }

    private enum Keys: String, CodingKey { case i, r, t, b }

    init(from decoder: Decoder) throws {
        if let single = try? decoder.singleValueContainer(), single.decodeNil() {
            value = .null
            return
        }
        let keyed = try decoder.container(keyedBy: Keys.self)
        if let text = try keyed.decodeIfPresent(String.self, forKey: .i) {
            guard let integer = Int64(text) else {
                throw DecodingError.dataCorruptedError(forKey: .i, in: keyed, debugDescription: "not a 64-bit integer")
            }
            value = .integer(integer)
        } else if let real = try keyed.decodeIfPresent(Double.self, forKey: .r) {
            value = .real(real)
        } else if let text = try keyed.decodeIfPresent(String.self, forKey: .t) {
            value = .text(text)
        } else {
            value = .blob(try keyed.decode([UInt8].self, forKey: .b))
        }
    }

    func encode(to encoder: Encoder) throws {
        switch value {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .integer(let integer):
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(String(integer), forKey: .i)
        case .real(let real):
            var keyed = encoder.container(keyedBy: Keys.self)
            // A non-finite real cannot be JSON (D1 never answers one): recorded as 0, its guard fails and the read
            // is asked again.
            try keyed.encode(real.isFinite ? real : 0, forKey: .r)
        case .text(let text):
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(text, forKey: .t)
        case .blob(let bytes):
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(bytes, forKey: .b)
        }
    }
}
