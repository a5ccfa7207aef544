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
        let queries: [(String, String)] = [
            ("users", "SELECT count(*) FROM \(s.user.sql)"),
            ("accounts", "SELECT count(*) FROM \(s.account.sql)"),
            ("sessions", "SELECT count(*) FROM \(s.session.sql)"),
            ("sync_users", "SELECT count(*) FROM users"),
            ("workspaces", "SELECT count(*) FROM workspaces"),
            ("audit_entries", "SELECT count(*) FROM gatehouse_audit"),
        ]
        let (counts, migrations) = try store.db.read {
            var counts: [String: Int] = [:]
            for (name, sql) in queries {
                // A table the database does not have (a sync table on a bare Better Auth store) is left out.
                if let count = (try? store.db.scalar(sql))?.int64 { counts[name] = Int(count) }
            }
            return (counts, try Migrator.applied(on: store.db).count)
        }
        return StoreStatus(version: GatehouseVersion.current, store: store.path, schema: s.shape, migrations: migrations, counts: counts)
    }
}
