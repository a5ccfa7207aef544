/// What a group of reads answered, kept so that a later write of the same rows can offer the answers back
/// (`SQLDatabase.recordingReads`, `SQLDatabase.offer`) instead of asking again: a merge plan keeps the record its
/// reads made, and on an engine that pays a request per question its apply checks them in its one write request
/// rather than reading them first.
///
/// Opaque: only the engine that made it reads its contents, and every other engine (or a record that does not parse)
/// leaves it unused, so a record is only ever a saving. It holds row values as read (a token, a password hash): store
/// it where the rows themselves may be, print it never.
public struct ReadRecord: Sendable, Codable, Equatable {
    /// The engine that made it (`SQLDialect.name`).
    public let engine: String
    /// What the engine kept, in its own encoding.
    public let contents: String

    public init(engine: String, contents: String) {
        self.engine = engine
        self.contents = contents
    }

    private enum Keys: String, CodingKey { case engine, contents }

    /// A record in any other shape (written by another version) decodes as one no engine reads.
    public init(from decoder: Decoder) throws {
        let keyed = try? decoder.container(keyedBy: Keys.self)
        engine = (try? keyed?.decodeIfPresent(String.self, forKey: .engine)) ?? nil ?? ""
        contents = (try? keyed?.decodeIfPresent(String.self, forKey: .contents)) ?? nil ?? ""
    }
}
