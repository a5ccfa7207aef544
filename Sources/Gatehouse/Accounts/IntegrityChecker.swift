import Storage

/// One kind of integrity problem, with how many rows have it and a few of them.
public struct IntegrityFinding: Sendable, Codable, Equatable {
    /// A stable code: `account_user_missing`, `user_without_accounts`, `sync_sub_malformed`,
    /// `sync_sub_user_missing`, `user_unprovisioned`, `duplicate_provider_account`, `session_user_missing`.
    public let code: String
    /// `error` for dangling or duplicated rows, `warning` for states that can be legitimate for a while.
    public let severity: String
    public let title: String
    public let count: Int
    /// Up to `sampleLimit` rows, as short identifying text (ids, never token values).
    public let samples: [String]
    public let fix: String
}

/// What `accounts check` found.
public struct IntegrityReport: Sendable, Codable, Equatable {
    public let checkedAt: Timestamp
    public let schema: String
    /// Every check, including those that found nothing (count 0).
    public let findings: [IntegrityFinding]
    /// Checks that could not run on this database (a sync table is missing).
    public let skipped: [String]
    /// Gatehouse indexes that would speed up inspection and are missing (`gatehouse accounts index`).
    public let missingIndexes: [String]
    /// True when no finding has a non-zero count.
    public var isClean: Bool { findings.allSatisfy { $0.count == 0 } }
}

/// Finds rows that break the links between Better Auth's tables and the sync server's: the service
/// behind `accounts check`.
///
/// Each check is a SQL anti-join, unless the engine answers it faster its own way (`IntegrityPlan`, from
/// `StoreEngine.integrityPlan`): on SQLite the link checks walk `user.id`, `account.userId`, `session.userId` and
/// `users.sub` in index order and compare the sorted streams (`IntegrityMergeScan`), instead of probing one index
/// per row, the sessions on a second connection in parallel; where a column does not come back in byte order (or
/// holds non-text keys) its checks run as the anti-joins. On Postgres the server joins, as `PostgresIntegrityPlan`
/// tells it.
public struct IntegrityChecker {
    public let store: Store
    /// Samples kept per finding.
    public var sampleLimit = 5
    /// Whether the link checks may use the sorted merge (`IntegrityMergeScan`); off, every check is its SQL anti-join.
    var usesMergeScan = true

    public init(store: Store) { self.store = store }

    private struct Check {
        let code: String
        let severity: String
        let title: String
        let fix: String
        let needsSync: Bool
        let sql: String
        let describe: ([SQLValue]) throws -> String
    }

    /// Runs every check.
    public func run(now: Timestamp = .now()) throws -> IntegrityReport {
        let s = store.schema, db = store.db
        let user = s.user, account = s.account, session = s.session
        let prefix = "'\(SyncSub.prefix)'"
        let prefixLength = SyncSub.prefix.utf8.count
        // Each scan selects only indexed columns (ids, rowids), so SQLite walks covering indexes instead of
        // reading every row of the wide tables; samples are then looked up by key, five at most.
        func userSample(_ row: [SQLValue]) throws -> String {
            let id = row[0].string ?? "?"
            let email = try db.scalar("SELECT \(user.col(.email)) FROM \(user.sql) WHERE \(user.col(.id)) = ?", [id]).string ?? ""
            return "user \(id) <\(email)>"
        }
        let checks: [Check] = [
            Check(code: "account_user_missing", severity: "error", title: "account rows whose user is missing",
                  fix: "delete the orphaned account rows, or restore their users from a backup", needsSync: false,
                  sql: "SELECT a.\(db.dialect.rowLocatorColumn), a.\(account.col(.userId)) FROM \(account.sql) a WHERE NOT EXISTS (SELECT 1 FROM \(user.sql) u WHERE u.\(user.col(.id)) = a.\(account.col(.userId)))",
                  describe: { row in
                      let detail = try db.row("SELECT \(account.col(.id)), \(account.col(.providerId)) FROM \(account.sql) WHERE \(db.dialect.rowLocatorCondition)", [row[0]])
                      return "account \(detail?[0].string ?? "?") (\(detail?[1].string ?? "?")) → missing user \(row[1].string ?? "?")"
                  }),
            Check(code: "user_without_accounts", severity: "warning", title: "users with no account rows (they cannot sign in)",
                  fix: "check with \(command: .usersShow, "ID"); such a user is usually a leftover of a failed sign-up or an unlink", needsSync: false,
                  sql: "SELECT u.\(user.col(.id)) FROM \(user.sql) u WHERE NOT EXISTS (SELECT 1 FROM \(account.sql) a WHERE a.\(account.col(.userId)) = u.\(user.col(.id)))",
                  describe: userSample),
            Check(code: "sync_sub_malformed", severity: "error", title: "sync users whose sub is not of the form better_auth|<user id>",
                  fix: "find what wrote these rows; the sync server only ever provisions better_auth|<id>", needsSync: true,
                  sql: "SELECT id, sub FROM users WHERE substr(sub, 1, \(prefixLength)) <> \(prefix) OR length(sub) = \(prefixLength)",
                  describe: { "sync user \($0[0].string ?? "?") sub \(UserQuery.display($0[1].string ?? ""))" }),
            Check(code: "sync_sub_user_missing", severity: "error", title: "sync users whose sub names a Better Auth user that does not exist",
                  fix: "a deleted (or merged) user left its sync row: move its data to the right user or remove it", needsSync: true,
                  sql: "SELECT id, sub FROM users WHERE substr(sub, 1, \(prefixLength)) = \(prefix) AND length(sub) > \(prefixLength) AND NOT EXISTS (SELECT 1 FROM \(user.sql) u WHERE u.\(user.col(.id)) = substr(users.sub, \(prefixLength + 1)))",
                  describe: { "sync user \($0[0].string ?? "?") sub \($0[1].string ?? "")" }),
            Check(code: "user_unprovisioned", severity: "warning", title: "Better Auth users with no sync users row (UNPROVISIONED)",
                  fix: "sign-up must call the sync server's provisionBetterAuthUser; provision these subs or find why it failed", needsSync: true,
                  sql: "SELECT u.\(user.col(.id)) FROM \(user.sql) u WHERE NOT EXISTS (SELECT 1 FROM users x WHERE x.sub = \(prefix) || u.\(user.col(.id)))",
                  describe: userSample),
            Check(code: "duplicate_provider_account", severity: "error", title: "provider accounts attached more than once (same provider and account id)",
                  fix: "keep the row of the user who signs in with it; databases before Better Auth 1.7 have no unique index to prevent this", needsSync: false,
                  sql: "SELECT \(account.col(.accountId)), \(account.col(.providerId)), count(*) FROM \(account.sql) GROUP BY \(account.col(.accountId)), \(account.col(.providerId)) HAVING count(*) > 1",
                  describe: { row in
                      let users = try db.scalar("SELECT group_concat(\(account.col(.userId)), ', ') FROM \(account.sql) WHERE \(account.col(.accountId)) = ? AND \(account.col(.providerId)) = ?", [row[0], row[1]]).string ?? ""
                      return "\(row[1].string ?? "?") account \(row[0].string ?? "?") ×\(row[2].int64 ?? 0): users \(users)"
                  }),
            Check(code: "session_user_missing", severity: "error", title: "sessions whose user is missing",
                  fix: "delete them: a session of a missing user can never be used", needsSync: false,
                  sql: "SELECT s.\(db.dialect.rowLocatorColumn), s.\(session.col(.userId)) FROM \(session.sql) s WHERE NOT EXISTS (SELECT 1 FROM \(user.sql) u WHERE u.\(user.col(.id)) = s.\(session.col(.userId)))",
                  describe: { row in
                      let id = try db.scalar("SELECT \(session.col(.id)) FROM \(session.sql) WHERE \(db.dialect.rowLocatorCondition)", [row[0]]).string ?? "?"
                      return "session \(id) → missing user \(row[1].string ?? "?")"
                  }),
        ]
        // The engine's own way through the checks (`IntegrityPlan`), if it has one: every check it leaves out runs
        // as its anti-join below.
        let plan = try store.engine.integrityPlan(store, sampleLimit: sampleLimit, mergeScan: usesMergeScan)
        defer { plan?.end() }
        return try db.read {
            let hasSync = try db.tableExists("users")
            // The checks that run: those of the sync table only where there is one.
            let running = checks.filter { !$0.needsSync || hasSync }
            let tallies = try plan?.tallies(antiJoins: Dictionary(uniqueKeysWithValues: running.map { ($0.code, $0.sql) })) ?? [:]
            var findings: [IntegrityFinding] = []
            var skipped: [String] = []
            for check in checks {
                if check.needsSync && !hasSync { skipped.append(check.code); continue }
                var tally = tallies[check.code] ?? IntegrityTally(limit: sampleLimit)
                if tallies[check.code] == nil {
                    try plan?.beforeAntiJoin(check.code)
                    try db.forEach(check.sql) { tally.add($0.values) }
                }
                findings.append(IntegrityFinding(code: check.code, severity: check.severity, title: check.title, count: tally.count,
                                                 samples: try tally.samples.map(check.describe), fix: check.fix))
            }
            let missing = try AccountIndexes.missing(db, schema: s).map(\.name)
            return IntegrityReport(checkedAt: now, schema: s.shape, findings: findings, skipped: skipped, missingIndexes: missing)
        }
    }
}
