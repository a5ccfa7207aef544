import Storage

/// A summary of a store for `gatehouse status` and the console's `/api/status`.
public struct StoreStatus: Sendable, Codable {
    public let version: String
    public let store: String
    public let schema: String
    public let migrations: Int
    public let counts: [String: Int]

    /// Reads the counts in one snapshot.
    public static func read(_ store: Store) throws -> StoreStatus {
        let s = store.schema
        // Each count, and the sync table it needs (nil: a table every store has).
        let queries: [(name: String, sql: String, syncTable: String?)] = [
            ("users", "SELECT count(*) FROM \(s.user.sql)", nil),
            ("accounts", "SELECT count(*) FROM \(s.account.sql)", nil),
            ("sessions", "SELECT count(*) FROM \(s.session.sql)", nil),
            ("sync_users", "SELECT count(*) FROM users", "users"),
            ("workspaces", "SELECT count(*) FROM workspaces", "workspaces"),
            ("audit_entries", "SELECT count(*) FROM gatehouse_audit", nil),
        ]
        // A sync table the database does not have (a bare Better Auth store) is left out; any other failure (a lock
        // held past the busy timeout, a lost connection) is the answer, not a missing line.
        let present = try store.existingTables(["users", "workspaces"])
        let (counts, migrations) = try store.db.read {
            var counts: [String: Int] = [:]
            for (name, sql, syncTable) in queries where syncTable.map(present.contains) ?? true {
                if let count = try store.db.scalar(sql).int64 { counts[name] = Int(count) }
            }
            return (counts, try Migrator.applied(on: store.db).count)
        }
        return StoreStatus(version: GatehouseVersion.current, store: store.path, schema: s.shape, migrations: migrations, counts: counts)
    }
}
