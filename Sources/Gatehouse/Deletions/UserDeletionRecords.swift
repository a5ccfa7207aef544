import Foundation
import Storage

/// The deletions applied, for `users delete list|show` and the console, and the purge that destroys the sealed copies
/// whose retention has ended. Never shows a row's values: only tables, counts, who, when and why.
public struct UserDeletionRecords {
    /// The store.
    public let store: Store

    public init(store: Store) { self.store = store }

    /// One deletion as listed and shown.
    public struct Record: Sendable, Codable {
        public let id: Int64
        public let planID: String
        public let userID: String
        public let ticket: String
        public let actor: String
        /// `applied` (restorable until `retainUntil`), `undone` or `purged`.
        public let status: String
        public let appliedAt: String
        public let retainUntil: String
        public let revocation: [DeletionRevocationOutcome]
        public let noRevokeReason: String?
        /// Rows deleted per table.
        public let deleted: [String: Int]
        public let undoneAt: String?
        public let undoneBy: String?
        public let undoReason: String?
        public let purgedAt: String?
    }

    /// What a purge did.
    public struct PurgeResult: Sendable, Codable {
        public let purgedAt: Timestamp
        /// The deletions whose sealed rows were destroyed.
        public let purged: [Int64]
    }

    /// The deletion row `input` names, or a not-found error.
    static func row(_ db: SQLDatabase, _ input: String) throws -> Row {
        guard input.count <= 20, let number = Int64(input), let row = try db.row("SELECT * FROM gatehouse_user_deletions WHERE id = ?", [number]) else {
            let shown = OperatorText.visible(input.count > 40 ? String(input.prefix(40)) + "…" : input)
            throw GatehouseError.notFound("no user deletion \"\(shown)\"", fix: "list deletions with \(command: .usersDeleteList)")
        }
        return row
    }

    /// Deletions, newest first.
    public func list(limit: Int = 100) throws -> [Record] {
        try store.db.rows("SELECT * FROM gatehouse_user_deletions ORDER BY id DESC LIMIT ?", [Int64(limit)]).map(record)
    }

    /// One deletion.
    public func show(_ id: String) throws -> Record { try record(try Self.row(store.db, id)) }

    /// Destroys the sealed rows of every applied deletion whose retention ended by `now`: after this they cannot be
    /// undone, and only the record (ids, ticket, who, when, why) remains. Audited once per deletion purged.
    public func purge(actor: Actor, now: Timestamp = .now()) throws -> PurgeResult {
        let db = store.db
        let purged: [Int64] = try db.write {
            let due = try db.rows("SELECT id, user_id, ticket FROM gatehouse_user_deletions WHERE status = 'applied' AND retain_until <= ? ORDER BY id",
                                  [now.iso8601])
            for row in due {
                let id = row["id"].int64 ?? 0
                try db.execute("UPDATE gatehouse_user_deletions SET status = 'purged', sealed_rows = NULL, purged_at = ? WHERE id = ? AND status = 'applied'",
                               [now.iso8601, id])
                try store.audit.append(db, actor: actor, action: "user.delete.purge", subject: String(id), details: [
                    "user_id": .string(row["user_id"].string ?? ""), "ticket": .string(row["ticket"].string ?? ""),
                ], at: now)
            }
            return due.map { $0["id"].int64 ?? 0 }
        }
        return PurgeResult(purgedAt: now, purged: purged)
    }

    private func record(_ row: Row) throws -> Record {
        Record(id: row["id"].int64 ?? 0, planID: try row.string("plan_id"), userID: try row.string("user_id"), ticket: try row.string("ticket"),
               actor: try row.string("actor"), status: try row.string("status"), appliedAt: try row.string("applied_at"),
               retainUntil: try row.string("retain_until"),
               revocation: try MergeJSON.decode([DeletionRevocationOutcome].self, row["revocation"].string ?? "[]", what: "revocation outcome"),
               noRevokeReason: row.optionalString("no_revoke_reason"),
               deleted: try MergeJSON.decode([String: Int].self, row["summary_json"].string ?? "{}", what: "deletion summary"),
               undoneAt: row.optionalString("undone_at"), undoneBy: row.optionalString("undone_by"), undoReason: row.optionalString("undo_reason"),
               purgedAt: row.optionalString("purged_at"))
    }
}
