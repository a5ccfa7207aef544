import Storage

/// Linked accounts that would fail someone at sign-in or sync: account rows whose user is gone (dangling),
/// and Better Auth users with no sync `users` row (unprovisioned: the sync server fails closed on their sub).
///
/// Unprovisioned users are counted in full, but only recent ones warn: a signup of the last `recentWindow`
/// without a sync row means provisioning is broken now; older ones are a known backlog for `accounts check`.
///
/// Both counts come from one walk of the sorted user ids, account user ids and sync subs
/// (`IntegrityMergeScan`, as `accounts check` does); where a column is not in byte order they are SQL anti-joins.
public struct AccountHealthChecks: HealthCheckProvider {
    public let group = "accounts"
    /// Signups this recent must be provisioned.
    public static let recentWindow = Seconds(30 * 86_400)
    public init() {}

    struct Counts {
        var dangling: Int64 = 0
        var unprovisioned: Int64 = 0
        var recentUnprovisioned: Int64 = 0
    }

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        let since = store.schema.user.encoding(.createdAt).encode(context.now.adding(seconds: -Self.recentWindow.value))
        let counts = try store.db.read {
            do { return try merged(store, since: since) } catch is IndexOrderUnavailable { return try antiJoins(store, since: since) }
        }
        let samples = [
            HealthSample(metric: "gatehouse_accounts_dangling", value: Double(counts.dangling), help: "Account rows whose Better Auth user is missing."),
            HealthSample(metric: "gatehouse_users_unprovisioned", value: Double(counts.unprovisioned), help: "Better Auth users with no sync users row."),
        ]
        return [
            counts.dangling == 0
                ? HealthCheck(id: "accounts.dangling", status: .ok, summary: "every account row belongs to an existing user", samples: [samples[0]])
                : HealthCheck(id: "accounts.dangling", status: .warning, summary: "\(counts.dangling) account row(s) belong to no user: that provider sign-in fails",
                              action: "\(run: .accountsCheck) (samples), then remove or re-attach them", samples: [samples[0]]),
            counts.recentUnprovisioned == 0
                ? HealthCheck(id: "accounts.unprovisioned", status: .ok,
                              summary: counts.unprovisioned == 0 ? "every Better Auth user has a sync row"
                                  : "every signup of the last \(Self.recentWindow) has a sync row (\(counts.unprovisioned) older users have none: see accounts check)",
                              samples: [samples[1]])
                : HealthCheck(id: "accounts.unprovisioned", status: .warning,
                              summary: "\(counts.recentUnprovisioned) signup(s) of the last \(Self.recentWindow) have no sync users row: the sync server refuses their sub (\(counts.unprovisioned) in all)",
                              action: "\(run: .accountsCheck) lists them; provision them through the sync server's provisionBetterAuthUser", samples: [samples[1]]),
        ]
    }

    /// One ordered walk; each unprovisioned user's creation time is then looked up by id.
    func merged(_ store: Store, since: SQLValue) throws -> Counts {
        let user = store.schema.user
        let createdSince = "SELECT \(user.col(.createdAt)) >= ? FROM \(user.sql) WHERE \(user.col(.id)) = ?"
        var recent: Int64 = 0
        let tallies = try IntegrityMergeScan(db: store.db, schema: store.schema, sampleLimit: 0)
            .accountsAndSubs(withSync: true) { id in
                if try store.db.scalar(createdSince, [since, id]).int64 == 1 { recent += 1 }
            }
        return Counts(dangling: Int64(tallies["account_user_missing"]?.count ?? 0),
                      unprovisioned: Int64(tallies["user_unprovisioned"]?.count ?? 0), recentUnprovisioned: recent)
    }

    /// The same counts as per-row anti-joins.
    func antiJoins(_ store: Store, since: SQLValue) throws -> Counts {
        let s = store.schema
        let dangling = try store.db.scalar("""
            SELECT count(*) FROM \(s.account.sql) a
            WHERE NOT EXISTS (SELECT 1 FROM \(s.user.sql) u WHERE u.\(s.user.col(.id)) = a.\(s.account.col(.userId)))
            """).int64 ?? 0
        let row = try store.db.row("""
            SELECT count(*) AS total, coalesce(sum(CASE WHEN u.\(s.user.col(.createdAt)) >= ? THEN 1 ELSE 0 END), 0) AS recent FROM \(s.user.sql) u
            WHERE NOT EXISTS (SELECT 1 FROM users s WHERE s.sub = 'better_auth|' || u.\(s.user.col(.id)))
            """, [since])
        return Counts(dangling: dangling, unprovisioned: row?["total"].int64 ?? 0, recentUnprovisioned: row?["recent"].int64 ?? 0)
    }
}
