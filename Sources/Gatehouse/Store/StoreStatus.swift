import Storage

/// A summary of a store for `gatehouse status` and the console's `/api/status`.
public struct StoreStatus: Sendable, Codable {
    public let version: String
    public let store: String
    public let schema: String
    public let migrations: Int
    /// Rows per table: counted, or the engine's estimate for the ones `estimatedCounts` names.
    public let counts: [String: Int]
    /// Whether any of `counts` is an estimate.
    public let estimated: Bool
    /// The names in `counts` whose number is the engine's estimate, not a count (empty when every one was counted).
    public let estimatedCounts: [String]

    /// An estimate below this many rows is replaced by the count: counting that few rows costs a few pages even on a
    /// cold store, and a small store (a test's, a new deployment's) gets exact numbers either way.
    public static let countedBelow = 10_000

    /// Reads the counts in one snapshot: every row counted when `exact`, else from the engine's statistics
    /// (`RowCountEstimating`), which take the same time on a store of any size; a table whose estimate is under
    /// `countedBelow`, or that the engine cannot estimate, is counted.
    public static func read(_ store: Store, exact: Bool = true) throws -> StoreStatus {
        let s = store.schema
        // Each count, its table, and the sync table it needs (nil: a table every store has).
        let queries: [(name: String, table: String, sql: String, syncTable: String?)] = [
            ("users", s.user.name, s.user.sql, nil),
            ("accounts", s.account.name, s.account.sql, nil),
            ("sessions", s.session.name, s.session.sql, nil),
            ("sync_users", "users", "users", "users"),
            ("workspaces", "workspaces", "workspaces", "workspaces"),
            ("audit_entries", "gatehouse_audit", "gatehouse_audit", nil),
        ]
        let estimator = exact ? nil : store.engine.rowEstimator
        // A sync table the database does not have (a bare Better Auth store) is left out; any other failure (a lock
        // held past the busy timeout, a lost connection) is the answer, not a missing line.
        let present = try store.existingTables(["users", "workspaces"])
        let wanted = queries.filter { $0.syncTable.map(present.contains) ?? true }
        let (counts, estimates, migrations) = try store.db.read {
            var counts: [String: Int] = [:], estimates: [String] = []
            let estimated = try estimator?.estimatedRows(store.db, tables: wanted.map(\.table)) ?? [:]
            for query in wanted {
                if let estimate = estimated[query.table], estimate >= countedBelow {
                    counts[query.name] = estimate
                    estimates.append(query.name)
                }
            }
            // The rest counted together (one round trip on a server).
            let counted = wanted.filter { counts[$0.name] == nil }
            for (query, rows) in zip(counted, try store.db.snapshot(counted.map { SQLStatement("SELECT count(*) FROM \($0.sql)") })) {
                if let count = rows.first?[0].int64 { counts[query.name] = Int(count) }
            }
            return (counts, estimates.sorted(), try Migrator.applied(on: store.db).count)
        }
        return StoreStatus(version: GatehouseVersion.current, store: store.path, schema: s.shape, migrations: migrations, counts: counts,
                           estimated: !estimates.isEmpty, estimatedCounts: estimates)
    }
}
