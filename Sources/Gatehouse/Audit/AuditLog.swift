import Foundation
import JOSE
import Storage

/// A value in an audit entry's details: small, JSON-encodable, never a secret.
public enum AuditValue: Sendable, Equatable, Codable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case list([String])
    case null

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .int(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([String].self) { self = .list(value) }
        else { self = .string("(unreadable)") }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .list(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

/// One entry of the audit log.
public struct AuditEntry: Sendable, Codable, Equatable {
    public let id: Int64
    public let at: Timestamp
    public let actor: String
    public let action: String
    public let subject: String?
    public let details: [String: AuditValue]
    public let prevHash: String
    public let hash: String
}

/// The append-only, hash-chained audit log (`gatehouse_audit`). Every change Gatehouse makes to the
/// store is recorded here, in the same transaction as the change.
public struct AuditLog: Sendable {
    /// The hash before the first entry.
    public static let genesis = String(repeating: "0", count: 64)

    /// Detail keys that look like secrets: their values are replaced before they are written.
    static let secretLike = ["password", "secret", "privatekey", "private_key", "token", "p8", "pem"]

    public init() {}

    /// Appends an entry. Runs inside the caller's write transaction when there is one, so the entry
    /// commits or rolls back with the change it describes.
    ///
    /// `after` is the chain's head when the caller read it in the same write (`headStatement`, with its other reads)
    /// or appended the entry before this one: then it is not read again.
    @discardableResult
    public func append(_ db: SQLDatabase, actor: Actor, action: String, subject: String? = nil,
                       details: [String: AuditValue] = [:], at time: Timestamp = .now(), after head: Head? = nil) throws -> AuditEntry {
        try db.write {
            let last = try head ?? Self.head(try db.rows(Self.headStatement.sql))
            let id = last.id + 1
            let prev = last.hash
            let detailsJSON = try Self.encode(Self.redacted(details))
            let at = time.iso8601
            let hash = Self.hash(id: id, at: at, actor: actor.name, action: action, subject: subject, details: detailsJSON, prev: prev)
            try db.execute("INSERT INTO gatehouse_audit (id, at, actor, action, subject, details, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           [id, at, actor.name, action, subject, detailsJSON, prev, hash])
            return AuditEntry(id: id, at: time, actor: actor.name, action: action, subject: subject,
                              details: Self.redacted(details), prevHash: prev, hash: hash)
        }
    }

    /// The chain's last entry: its id and hash (`genesis` and 0 for an empty log).
    public struct Head: Sendable, Equatable {
        public let id: Int64
        public let hash: String
    }

    /// The read that gives the chain's head, for a caller that reads it together with its own reads.
    public static var headStatement: SQLStatement { SQLStatement("SELECT id, hash FROM gatehouse_audit ORDER BY id DESC LIMIT 1") }

    /// The head `headStatement`'s rows give.
    public static func head(_ rows: [Row]) -> Head {
        Head(id: rows.first?["id"].int64 ?? 0, hash: rows.first?["hash"].string ?? genesis)
    }

    /// A filter for `entries`.
    public struct Query: Sendable {
        public var since: Timestamp?
        /// An exact action, or a prefix ending in `*` (`apple.key.*`).
        public var action: String?
        public var actor: String?
        public var subject: String?
        public var limit: Int
        public init(since: Timestamp? = nil, action: String? = nil, actor: String? = nil, subject: String? = nil, limit: Int = 50) {
            self.since = since
            self.action = action
            self.actor = actor
            self.subject = subject
            self.limit = limit
        }
    }

    /// Entries matching `query`, newest first.
    public func entries(_ db: SQLDatabase, _ query: Query = Query()) throws -> [AuditEntry] {
        let statement = Self.entriesStatement(query)
        return try db.rows(statement.sql, statement.arguments).map(Self.entry)
    }

    /// The statement `entries` runs: each filter on an indexed column (`action`, `actor`, `subject`, `at`), newest first.
    static func entriesStatement(_ query: Query) -> (sql: String, arguments: [SQLBindable]) {
        var conditions: [String] = []
        var arguments: [SQLBindable] = []
        if let since = query.since { conditions.append("at >= ?"); arguments.append(since.iso8601) }
        if let action = query.action {
            if action.hasSuffix("*") {
                // A range on the indexed column, not LIKE: '%' and '_' in the input stay literal.
                let prefix = String(action.dropLast())
                conditions.append("action >= ? AND action < ?")
                arguments.append(prefix)
                arguments.append(prefix + "\u{10FFFF}")
            } else {
                conditions.append("action = ?")
                arguments.append(action)
            }
        }
        if let actor = query.actor { conditions.append("actor = ?"); arguments.append(actor) }
        if let subject = query.subject { conditions.append("subject = ?"); arguments.append(subject) }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments.append(max(0, query.limit))
        return ("SELECT * FROM gatehouse_audit \(whereClause) ORDER BY id DESC LIMIT ?", arguments)
    }

    /// The outcome of checking the chain.
    public struct Verification: Sendable, Codable, Equatable {
        public let entries: Int
        /// The hash of the newest entry: record it elsewhere to detect truncation later.
        public let head: String
        /// Human-readable breaks in the chain, oldest first; empty when intact.
        public let problems: [String]
        public var isIntact: Bool { problems.isEmpty }
    }

    /// Walks the whole chain, recomputing every hash. With `expectedHead`, also detects entries
    /// deleted from the end (which leave no break in what remains).
    public func verify(_ db: SQLDatabase, expectedHead: String? = nil) throws -> Verification {
        var problems: [String] = []
        var previousID: Int64 = 0
        var previousHash = Self.genesis
        var count = 0
        var sawExpectedHead = expectedHead == nil
        try db.read {
            try db.scan("gatehouse_audit", columns: ["*"], where: nil, [], orderedBy: "id") { row in
                count += 1
                let id = row["id"].int64 ?? -1
                if id != previousID + 1 {
                    problems.append(id > previousID + 1
                        ? "entries \(previousID + 1)–\(id - 1) are missing (deleted)"
                        : "entry \(id) is out of order")
                } else if row["prev_hash"].string != previousHash {
                    problems.append("entry \(id) does not chain to entry \(previousID) (an entry before it was edited or replaced)")
                }
                let recomputed = Self.hash(id: id, at: row["at"].string ?? "", actor: row["actor"].string ?? "",
                                           action: row["action"].string ?? "", subject: row["subject"].string,
                                           details: row["details"].string ?? "", prev: row["prev_hash"].string ?? "")
                if recomputed != row["hash"].string {
                    problems.append("entry \(id) was edited after it was written (its hash does not match its contents)")
                }
                previousID = id
                previousHash = row["hash"].string ?? ""
                if previousHash == expectedHead { sawExpectedHead = true }
            }
        }
        if !sawExpectedHead, let expectedHead {
            problems.append("the expected head \(expectedHead.prefix(16))… is not in the log: entries were deleted from its end or the log was replaced")
        }
        return Verification(entries: count, head: previousHash, problems: problems)
    }

    static func entry(_ row: Row) throws -> AuditEntry {
        let detailsText = row["details"].string ?? "{}"
        let details = (try? JSONDecoder().decode([String: AuditValue].self, from: Data(detailsText.utf8))) ?? [:]
        return AuditEntry(id: row["id"].int64 ?? 0, at: Timestamp(iso8601: row["at"].string ?? "") ?? Timestamp(milliseconds: 0),
                          actor: try row.string("actor"), action: try row.string("action"), subject: row["subject"].string,
                          details: details, prevHash: try row.string("prev_hash"), hash: try row.string("hash"))
    }

    static func redacted(_ details: [String: AuditValue]) -> [String: AuditValue] {
        details.reduce(into: [:]) { result, pair in
            let key = pair.key.lowercased()
            let looksSecret = secretLike.contains { key.contains($0) } && !key.hasSuffix("fingerprint") && !key.hasSuffix("_id") && !key.hasSuffix("id")
            result[pair.key] = looksSecret ? .string("[redacted]") : pair.value
        }
    }

    static func encode(_ details: [String: AuditValue]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(details), as: UTF8.self)
    }

    /// SHA-256 over length-prefixed fields, so no choice of field contents can imitate another entry.
    static func hash(id: Int64, at: String, actor: String, action: String, subject: String?, details: String, prev: String) -> String {
        var input = [UInt8]()
        for field in [prev, String(id), at, actor, action, subject ?? "\u{0}null", details] {
            let bytes = Array(field.utf8)
            input.append(contentsOf: Array("\(bytes.count):".utf8))
            input.append(contentsOf: bytes)
        }
        return SHA256.hex(input)
    }
}
