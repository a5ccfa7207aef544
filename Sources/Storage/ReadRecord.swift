/// What a group of reads answered, kept so that a later write of the same rows can offer the answers back
/// (`SQLDatabase.recordingReads`, `SQLDatabase.offer`) instead of asking again: a merge plan keeps the rows it read,
/// and its apply on D1 checks them in its one write request rather than reading them first.
///
/// It holds row values as read (a token, a password hash): store it where the rows themselves may be, print it never.
/// Only the engine that made it reads its entries.
public struct ReadRecord: Sendable, Codable, Equatable {
    /// One read as the engine sent it and what it answered.
    public struct Entry: Sendable, Codable, Equatable {
        public let sql: String
        public let parameters: [String]
        public let columns: [String]
        public let rows: [[RecordedValue]]
    }

    /// The schema the reads were made against, as the engine describes it; an offer made against another is ignored.
    public let schema: String
    public let entries: [Entry]

    public init(schema: String, entries: [Entry]) {
        self.schema = schema
        self.entries = entries
    }
}

/// An `SQLValue` as JSON: null, `{"i":"…"}` (text, so no integer loses digits), `{"r":…}`, `{"t":"…"}`, `{"b":[…]}`.
public struct RecordedValue: Sendable, Codable, Equatable {
    public let value: SQLValue

    public init(_ value: SQLValue) { self.value = value }

    private enum Keys: String, CodingKey { case i, r, t, b }

    public init(from decoder: Decoder) throws {
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

    public func encode(to encoder: Encoder) throws {
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
