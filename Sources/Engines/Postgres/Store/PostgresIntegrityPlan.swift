import Gatehouse
import Locking
import Storage

/// How `accounts check` reads a Postgres store: the SQLite walk (`IntegrityMergeScan`) reads index pages
/// itself; here the server joins, told how. Fast path kept for ops/bench's `accounts check` rows (< 5 s on
/// 1,000,000 users, < 15 s on 10,000,000).
///
/// Two connections on one exported snapshot each run their share with one core (the planner's parallel workers
/// off: they would only contend with the other connection for the same two cores; JIT off: compiling costs more
/// than it saves on these plain scans):
/// - this one, the links between ids, as merge joins over two indexes read in key order (hash joins off), selecting
///   only indexed columns so both sides are index-only scans: the users and their accounts as one full join (both
///   `user_without_accounts` and `account_user_missing`), then the sessions' owners, then `sync_sub_malformed`;
/// - the other, the duplicate-account grouping;
/// - then both, the sub links (`sync_sub_user_missing`, `user_unprovisioned`), taking the next range of user ids
///   until none is left (`SyncLinkRanges`). A sub names `'better_auth|' || id`, which no index orders, so each
///   range is a hash full join of the range's user ids with its subs: a hash of about a hundredth of the ids, in
///   `work_mem`, where one hash of every id spilled to disk at 10,000,000 users (13.4 s; 7.3 s in ranges).
///
/// The samples are the first rows in key order, as the SQLite walk finds them; an account's, a session's or a sync
/// row's own columns are looked up for the few sampled keys only.
struct PostgresIntegrityPlan: Sendable {
    let schema: AuthSchema
    let sampleLimit: Int

    /// One core per connection, no JIT, memory enough for a hash of a range's keys, a custom plan for each range's
    /// bounds, and (`merging`) merge joins.
    func prepare(_ db: SQLDatabase, merging: Bool) throws {
        try db.execute("SET LOCAL max_parallel_workers_per_gather = 0")
        try db.execute("SET LOCAL jit = off")
        try db.execute("SET LOCAL work_mem = '128MB'")
        try db.execute("SET LOCAL plan_cache_mode = force_custom_plan")
        try db.execute("SET LOCAL enable_hashjoin = \(merging ? "off" : "on")")
    }

    /// `user_without_accounts` and `account_user_missing` from one full join of the user ids with the accounts'
    /// owners, then `session_user_missing`.
    func userLinks(_ db: SQLDatabase) throws -> [String: IntegrityTally] {
        let user = schema.user, account = schema.account, session = schema.session
        let userID = "u.\(user.col(.id))", accountUser = "a.\(account.col(.userId))"
        var lonely = IntegrityTally(limit: sampleLimit), dangling = IntegrityTally(limit: sampleLimit)
        // The user id is never NULL (a key): a row without one is an account's, its owner NULL or missing.
        try db.forEach("SELECT \(userID), \(accountUser) FROM \(user.sql) u FULL JOIN \(account.sql) a ON \(accountUser) = \(userID) WHERE \(userID) IS NULL OR \(accountUser) IS NULL") { row in
            if row[0].isNull { dangling.add([row[1]]) } else { lonely.add([row[0]]) }
        }
        var tallies = ["user_without_accounts": lonely,
                       "account_user_missing": try dangling.withSamples(rowsOf: account, owners: dangling.samples.map { $0[0] }, db)]
        let owner = "t.\(session.col(.userId))"
        var missing = IntegrityTally(limit: sampleLimit)
        try db.forEach("SELECT \(owner) FROM \(session.sql) t WHERE NOT EXISTS (SELECT 1 FROM \(user.sql) u WHERE \(userID) = \(owner))") {
            missing.add($0.values)
        }
        tallies["session_user_missing"] = try missing.withSamples(rowsOf: session, owners: missing.samples.map { $0[0] }, db)
        return tallies
    }

    /// `sync_sub_malformed`: where the subs sort in byte order, the index ranges outside `better_auth|…` (and the bare
    /// prefix); elsewhere `scan`, the check's own statement, which reads every sub.
    func malformedSubs(_ db: SQLDatabase, ranges: SyncLinkRanges, scan: String) throws -> IntegrityTally {
        var tally = IntegrityTally(limit: sampleLimit)
        let prefix = SyncSub.prefix
        if ranges.byteOrdered {
            try db.forEach("SELECT id, sub FROM users WHERE sub < ? OR sub >= ? OR sub = ? ORDER BY sub, id",
                           [prefix, SyncLinkRanges.prefixEnd, prefix]) { tally.add($0.values) }
        } else {
            try db.forEach(scan) { tally.add($0.values) }
        }
        return tally
    }

    /// The sub links of range `index`: rows `[sub]` of sync users naming a missing user, and `[user id]` of users with
    /// no sync row, each in key order.
    func syncLinks(_ db: SQLDatabase, ranges: SyncLinkRanges, index: Int) throws -> SyncLinkTallies {
        let user = schema.user
        let id = "u.\(user.col(.id))"
        let prefix = "'\(SyncSub.prefix)'", length = SyncSub.prefix.utf8.count
        let (low, high) = ranges.range(index)
        var userRange: [String] = [], subRange: [String] = [], arguments: [SQLBindable] = []
        if let low { userRange.append("\(id) >= ?"); arguments.append(low) }
        if let high { userRange.append("\(id) < ?"); arguments.append(high) }
        if ranges.byteOrdered {
            // The subs naming the range's ids: in byte order, the same range behind the prefix.
            subRange = ["sub >= ?", "sub < ?"]
            arguments += [SyncSub.prefix + (low ?? ""), high.map { SyncSub.prefix + $0 } ?? SyncLinkRanges.prefixEnd]
        }
        subRange += ["substr(sub, 1, \(length)) = \(prefix)", "length(sub) > \(length)"]
        var tallies = SyncLinkTallies(limit: sampleLimit)
        try db.forEach("""
            SELECT u.id, x.sub FROM (SELECT \(id) AS id FROM \(user.sql) u\(userRange.isEmpty ? "" : " WHERE " + userRange.joined(separator: " AND "))) u
            FULL JOIN (SELECT sub FROM users WHERE \(subRange.joined(separator: " AND "))) x ON x.sub = \(prefix) || u.id
            WHERE u.id IS NULL OR x.sub IS NULL
            ORDER BY 1 NULLS FIRST, 2
            """, arguments) { row in
            if row[0].isNull { tallies.missing.add([row[1]]) } else { tallies.unprovisioned.add([row[0]]) }
        }
        return tallies
    }

    /// The ranges' tallies joined in range order, the missing subs' samples given their sync rows (`[id, sub]`).
    func syncLinks(_ db: SQLDatabase, joining parts: [SyncLinkTallies]) throws -> [String: IntegrityTally] {
        var all = SyncLinkTallies(limit: sampleLimit)
        for part in parts {
            all.missing.append(part.missing)
            all.unprovisioned.append(part.unprovisioned)
        }
        var missing = IntegrityTally(limit: sampleLimit)
        let subs = all.missing.samples.map { $0[0] }
        if !subs.isEmpty {
            try db.forEach("SELECT id, sub FROM users WHERE sub IN (\(Array(repeating: "?", count: subs.count).joined(separator: ", "))) ORDER BY sub, id LIMIT \(sampleLimit)",
                           subs) { missing.add($0.values) }
        }
        return ["sync_sub_user_missing": missing.counting(all.missing.count), "user_unprovisioned": all.unprovisioned]
    }
}

/// One range's sub links (`PostgresIntegrityPlan.syncLinks(_:ranges:index:)`).
struct SyncLinkTallies: Sendable {
    var missing: IntegrityTally
    var unprovisioned: IntegrityTally

    init(limit: Int) {
        missing = IntegrityTally(limit: limit)
        unprovisioned = IntegrityTally(limit: limit)
    }
}

/// The ranges of user ids the sub links are joined in: half-open, between the bounds of the planner's histogram of
/// `user.id` (about a hundred ranges of equal size, from the last ANALYZE), each joined with the subs that name its
/// ids. The bounds only balance the work: the ranges cover every id whatever the table holds now.
///
/// A range of ids is a range of subs only when both sort in byte order (`"C"`, `"POSIX"`, `C.UTF-8`, or uuid ids, whose
/// order is their text's), and reading a range takes an index on `user.id` and one on `users.sub`. Otherwise, or
/// with no statistics yet, there is one range: every id, in one hash join.
struct SyncLinkRanges: Sendable {
    /// The least string above every string that starts with `better_auth|`, in byte order.
    static let prefixEnd = String(SyncSub.prefix.dropLast()) + String(UnicodeScalar(SyncSub.prefix.unicodeScalars.last!.value + 1)!)

    let bounds: [String]
    let byteOrdered: Bool

    var count: Int { bounds.count + 1 }

    /// Range `index`'s bounds (nil: unbounded).
    func range(_ index: Int) -> (low: String?, high: String?) {
        (index == 0 ? nil : bounds[index - 1], index == bounds.count ? nil : bounds[index])
    }

    /// At most this many ranges: a larger histogram (`ALTER … SET STATISTICS`) is thinned out.
    static let maximum = 200

    static func read(_ db: SQLDatabase, schema: AuthSchema) throws -> SyncLinkRanges {
        let user = schema.user
        let single = SyncLinkRanges(bounds: [], byteOrdered: false)
        guard AccountIndexes.leadingIndex(try db.indexes(of: user.name), column: user.column(.id), byteOrdered: false) != nil,
              AccountIndexes.leadingIndex(try db.indexes(of: "users"), column: "sub", byteOrdered: false) != nil else { return single }
        // Byte order: a string column collated so (or by a database that is), or a uuid.
        let byteOrder = """
            (a.atttypid = 'uuid'::regtype OR (a.atttypid IN ('text'::regtype, 'varchar'::regtype) AND EXISTS (
               SELECT 1 FROM pg_collation co, pg_database d WHERE co.oid = a.attcollation AND d.datname = current_database()
                 AND CASE WHEN co.collname = 'default'
                          THEN (coalesce(to_jsonb(d) ->> 'datlocprovider', 'c') = 'c' AND d.datcollate IN ('C', 'POSIX', 'C.UTF-8', 'C.utf8'))
                               OR coalesce(to_jsonb(d) ->> 'datlocprovider', 'c') = 'b'
                          ELSE co.collname IN ('C', 'POSIX') OR co.collprovider = 'b'
                               OR (co.collprovider = 'c' AND co.collcollate IN ('C', 'POSIX', 'C.UTF-8', 'C.utf8')) END)))
            """
        let ordered = try db.scalar("""
            SELECT count(*) FROM pg_attribute a
            WHERE ((a.attrelid = to_regclass(?) AND a.attname = ?) OR (a.attrelid = to_regclass('users') AND a.attname = 'sub'))
              AND NOT a.attisdropped AND \(byteOrder)
            """, [user.sql, user.column(.id)]).int64 == 2
        guard ordered else { return single }
        var bounds: [String] = []
        try db.forEach("""
            SELECT b.value FROM pg_stats s CROSS JOIN LATERAL unnest(s.histogram_bounds::text::text[]) WITH ORDINALITY AS b(value, n)
            WHERE s.schemaname = (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(?))
              AND s.tablename = ? AND s.attname = ? AND NOT s.inherited
            ORDER BY b.n
            """, [user.sql, user.name, user.column(.id)]) { row in
            if let value = row[0].string { bounds.append(value) }
        }
        let step = max(1, (bounds.count + maximum - 1) / maximum)
        return SyncLinkRanges(bounds: stride(from: 0, to: bounds.count, by: step).map { bounds[$0] }, byteOrdered: true)
    }
}

/// `accounts check` on a Postgres store, as the checker asks it (`IntegrityPlan`): every check here, shared between the
/// checker's connection and a second one reading its exported snapshot (`PostgresIntegrityPlan`); on a standby, which
/// exports none, all of it on the checker's connection.
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
        let ranges = hasSync ? try SyncLinkRanges.read(db, schema: plan.schema) : SyncLinkRanges(bounds: [], byteOrdered: false)
        // The ranges go to whichever connection is free first; each range's tallies are kept by its index.
        let total = hasSync ? ranges.count : 0
        let next = Locked(0), parts = Locked([SyncLinkTallies?](repeating: nil, count: total))
        let joinRanges: @Sendable (SQLDatabase) throws -> Void = { db in
            try db.execute("SET LOCAL enable_hashjoin = on")
            while true {
                let index = next.withLock { value -> Int in defer { value += 1 }; return value }
                guard index < total else { return }
                let tallies = try plan.syncLinks(db, ranges: ranges, index: index)
                parts.withLock { $0[index] = tallies }
            }
        }
        let other: @Sendable (SQLDatabase) throws -> IntegrityTally = { db in
            try plan.prepare(db, merging: false)
            var tally = IntegrityTally(limit: limit)
            try db.forEach(duplicates) { tally.add($0.values) }
            try joinRanges(db)
            return tally
        }
        let second = snapshot.map { SecondConnection(location, postgresSnapshot: $0, caller: db, other) }
        try plan.prepare(db, merging: true)
        var tallies = try plan.userLinks(db)
        if hasSync { tallies["sync_sub_malformed"] = try plan.malformedSubs(db, ranges: ranges, scan: malformed) }
        if let second {
            try joinRanges(db)
            tallies["duplicate_provider_account"] = try second.wait()
        } else {
            tallies["duplicate_provider_account"] = try other(db)
        }
        if hasSync { tallies.merge(try plan.syncLinks(db, joining: parts.value.map { $0 ?? SyncLinkTallies(limit: limit) })) { $1 } }
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
