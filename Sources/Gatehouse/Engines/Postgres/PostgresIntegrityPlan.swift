import Storage

/// How `accounts check` reads a Postgres store: the SQLite walk (`IntegrityMergeScan`) reads index pages
/// itself; here the server joins, told how. Fast path kept for ops/bench's `accounts check` row (< 5 s on
/// 1,000,000 users).
///
/// Two connections on one exported snapshot each run their share with one core (the planner's parallel
/// workers off: they would only contend with the other connection for the same two cores):
/// - this one, the links between ids, as merge joins over the two indexes read in key order (hash joins off),
///   selecting only indexed columns so both sides are index-only scans — 0.5-0.6 s a link on 1M users, where
///   the parallel hash joins took 0.9 s of wall time and three processes; then `sync_sub_malformed`;
/// - the other, both sub checks as one hash full join of the user ids with the `better_auth|` subs (a sub
///   names `'better_auth|' || id`, which no index orders: the join is hashed, in memory with the larger
///   `work_mem`, 1.7 s for both where one anti-join took as long), then the duplicate-account grouping.
///
/// The samples are the first rows in key order, as the SQLite walk finds them; an account's or a session's own
/// row is looked up for the few sampled keys only.
struct PostgresIntegrityPlan: Sendable {
    let schema: AuthSchema
    let sampleLimit: Int

    /// One core per connection, memory enough for a hash of a million keys, and (`merging`) merge joins.
    func prepare(_ db: SQLDatabase, merging: Bool) throws {
        try db.execute("SET LOCAL max_parallel_workers_per_gather = 0")
        try db.execute("SET LOCAL work_mem = '128MB'")
        try db.execute("SET LOCAL enable_hashjoin = \(merging ? "off" : "on")")
    }

    /// `account_user_missing`, `user_without_accounts` and `session_user_missing`.
    func userLinks(_ db: SQLDatabase) throws -> [String: IntegrityTally] {
        let user = schema.user, account = schema.account, session = schema.session
        let userID = "u.\(user.col(.id))"
        var tallies: [String: IntegrityTally] = [:]
        var lonely = IntegrityTally(limit: sampleLimit)
        try db.forEach("SELECT \(userID) FROM \(user.sql) u WHERE NOT EXISTS (SELECT 1 FROM \(account.sql) a WHERE a.\(account.col(.userId)) = \(userID))") {
            lonely.add($0.values)
        }
        tallies["user_without_accounts"] = lonely
        for (code, table) in [("account_user_missing", account), ("session_user_missing", session)] {
            let owner = "t.\(table.col(.userId))"
            var tally = IntegrityTally(limit: sampleLimit)
            try db.forEach("SELECT \(owner) FROM \(table.sql) t WHERE NOT EXISTS (SELECT 1 FROM \(user.sql) u WHERE \(userID) = \(owner))") {
                tally.add($0.values)
            }
            tallies[code] = try tally.withSamples(rowsOf: table, owners: tally.samples.map { $0[0] }, db)
        }
        return tallies
    }

    /// `sync_sub_user_missing` (rows `[id, sub]`) and `user_unprovisioned` (rows `[user id]`) from one join.
    func syncLinks(_ db: SQLDatabase) throws -> [String: IntegrityTally] {
        let user = schema.user
        let prefix = "'\(SyncSub.prefix)'", length = SyncSub.prefix.utf8.count
        var missing = IntegrityTally(limit: sampleLimit), unprovisioned = IntegrityTally(limit: sampleLimit)
        try db.forEach("""
            SELECT u.\(user.col(.id)), x.id, x.sub FROM \(user.sql) u
            FULL JOIN (SELECT id, sub FROM users WHERE substr(sub, 1, \(length)) = \(prefix) AND length(sub) > \(length)) x
              ON x.sub = \(prefix) || u.\(user.col(.id))
            WHERE u.\(user.col(.id)) IS NULL OR x.sub IS NULL
            ORDER BY 1 NULLS FIRST, 3
            """) { row in
            if row[0].isNull { missing.add([row[1], row[2]]) } else { unprovisioned.add([row[0]]) }
        }
        return ["sync_sub_user_missing": missing, "user_unprovisioned": unprovisioned]
    }
}

/// `accounts check` on a Postgres store, as the checker asks it (`IntegrityPlan`): every check here, the id links and
/// the malformed subs on the checker's connection, the sub links and the duplicate accounts on a second connection
/// reading this one's exported snapshot (here after the rest on a standby, which exports none).
struct PostgresIntegrityChecks: IntegrityPlan {
    let location: StoreLocation
    let db: PostgresConnection
    let plan: PostgresIntegrityPlan

    func tallies(antiJoins sql: [String: String]) throws -> [String: IntegrityTally] {
        // The second connection reads this one's snapshot, taken first thing (as an exported snapshot must be). A
        // standby cannot export one.
        let snapshot = db.isReadOnly ? nil : try? db.exportSnapshot()
        let hasSync = try db.tableExists("users")
        let duplicates = sql["duplicate_provider_account"] ?? "", malformed = sql["sync_sub_malformed"] ?? ""
        let plan = self.plan, limit = plan.sampleLimit
        let other: @Sendable (SQLDatabase) throws -> [String: IntegrityTally] = { db in
            try plan.prepare(db, merging: false)
            var tallies = hasSync ? try plan.syncLinks(db) : [:]
            var tally = IntegrityTally(limit: limit)
            try db.forEach(duplicates) { tally.add($0.values) }
            tallies["duplicate_provider_account"] = tally
            return tallies
        }
        let second = snapshot.map { SecondConnection(location, postgresSnapshot: $0, other) }
        try plan.prepare(db, merging: true)
        var tallies = try plan.userLinks(db)
        if hasSync {
            var tally = IntegrityTally(limit: limit)
            try db.forEach(malformed) { tally.add($0.values) }
            tallies["sync_sub_malformed"] = tally
        }
        tallies.merge(try second?.wait() ?? other(db)) { $1 }
        return tallies
    }

    func beforeAntiJoin(_ code: String) throws {}
    func end() {}
}

extension PostgresStoreEngine {
    func integrityPlan(_ store: Store, sampleLimit: Int, mergeScan: Bool) throws -> (any IntegrityPlan)? {
        guard let postgres = store.db as? PostgresConnection else { return nil }
        return PostgresIntegrityChecks(location: store.location, db: postgres,
                                       plan: PostgresIntegrityPlan(schema: store.schema, sampleLimit: sampleLimit))
    }
}

extension IntegrityTally {
    /// The same count, with samples `[row locator, owner]`: the first rows of `table` in (owner, locator) order
    /// whose owner is one of `owners` (the sampled keys of a scan that read only the owner column).
    func withSamples(rowsOf table: AuthSchema.Table, owners: [SQLValue], _ db: SQLDatabase) throws -> IntegrityTally {
        guard !owners.isEmpty else { return self }
        let owner = table.col(.userId)
        let known = owners.filter { !$0.isNull }
        var conditions = known.isEmpty ? [] : ["\(owner) IN (\(Array(repeating: "?", count: known.count).joined(separator: ", ")))"]
        if known.count < owners.count { conditions.append("\(owner) IS NULL") }
        var tally = IntegrityTally(limit: limit)
        try db.forEach("SELECT \(db.dialect.rowLocatorColumn), \(owner) FROM \(table.sql) WHERE \(conditions.joined(separator: " OR ")) ORDER BY 2, 1 LIMIT \(limit)",
                       known) { tally.add($0.values) }
        return tally.counting(count)
    }
}
