import Gatehouse
import Storage

/// `accounts check` on SQLite: the link checks as merges over the sorted indexes (`IntegrityMergeScan`, the sessions
/// on a second connection), and a larger page cache for the anti-joins that remain (put back afterwards). Kept for
/// ops/bench's `accounts check` row (< 5 s on 1,000,000 users).
struct SQLiteIntegrityPlan: IntegrityPlan {
    let store: Store
    let sampleLimit: Int
    /// Whether the link checks may use the sorted merge; off, every check is its anti-join.
    let mergeScan: Bool
    /// The page cache before the check.
    let previousCache: Int64

    init(_ store: Store, sampleLimit: Int, mergeScan: Bool) throws {
        self.store = store
        self.sampleLimit = sampleLimit
        self.mergeScan = mergeScan
        previousCache = try store.db.scalar("PRAGMA cache_size").int64 ?? -2000
    }

    /// The link checks as merges (`IntegrityMergeScan`); a column not in byte order (`IndexOrderUnavailable`) leaves
    /// its checks to the anti-joins: the same answers, slower.
    func tallies(antiJoins: [String: String]) throws -> [String: IntegrityTally] {
        guard mergeScan else { return [:] }
        let db = store.db, schema = store.schema, limit = sampleLimit
        let hasSync = try db.tableExists("users")
        var tallies: [String: IntegrityTally] = [:]
        // The sessions walk runs on a second connection (the other core) while this one walks accounts and subs. Its
        // snapshot is taken at the same moment; each check reads one snapshot throughout.
        let sessionWalk = SecondConnection(store.location, caller: store.db) { db in
            try IntegrityMergeScan(db: db, schema: schema, sampleLimit: limit).sessions()
        }
        let scan = IntegrityMergeScan(db: db, schema: schema, sampleLimit: limit)
        do { tallies.merge(try scan.accountsAndSubs(withSync: hasSync)) { $1 } } catch is IndexOrderUnavailable {}
        do {
            tallies.merge(try sessionWalk.wait()) { $1 }
        } catch is IndexOrderUnavailable {
        } catch {
            // No second connection (a read-only folder without the WAL index, say): walk here.
            do { tallies.merge(try scan.sessions()) { $1 } } catch is IndexOrderUnavailable {}
        }
        return tallies
    }

    /// An anti-join probes an index per row: a larger page cache keeps the probed index in memory. (The merge walks
    /// read each page once and need none; nor does the grouping of duplicate accounts.)
    func beforeAntiJoin(_ code: String) throws {
        if code != "duplicate_provider_account" { try store.db.execute("PRAGMA cache_size = -131072") }
    }

    func end() {
        try? store.db.execute("PRAGMA cache_size = \(previousCache)")
    }
}

extension SQLiteStoreEngine {
    func integrityPlan(_ store: Store, sampleLimit: Int, mergeScan: Bool) throws -> (any IntegrityPlan)? {
        try SQLiteIntegrityPlan(store, sampleLimit: sampleLimit, mergeScan: mergeScan)
    }
}
