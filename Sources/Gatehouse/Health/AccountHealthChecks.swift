/// Linked accounts that would fail someone at sign-in or sync: account rows whose user is gone (dangling),
/// and Better Auth users with no sync `users` row (unprovisioned: the sync server fails closed on their sub).
///
/// Unprovisioned users are counted in full, but only recent ones warn: a signup of the last `recentWindow`
/// without a sync row means provisioning is broken now; older ones are a known backlog for `accounts check`.
public struct AccountHealthChecks: HealthCheckProvider {
    public let group = "accounts"
    /// Signups this recent must be provisioned.
    public static let recentWindow = Seconds(30 * 86_400)
    public init() {}

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        let s = store.schema
        let (dangling, unprovisioned) = try Store.withStoreErrors(store.path) {
            try store.db.read {
                let dangling = try store.db.scalar("""
                    SELECT count(*) FROM \(s.account.sql) a
                    WHERE NOT EXISTS (SELECT 1 FROM \(s.user.sql) u WHERE u.\(s.user.col("id")) = a.\(s.account.col("userId")))
                    """).int64 ?? 0
                let since = s.user.encoding("createdAt").encode(context.now.adding(seconds: -Self.recentWindow.value))
                let row = try store.db.row("""
                    SELECT count(*) AS total, coalesce(sum(u.\(s.user.col("createdAt")) >= ?), 0) AS recent FROM \(s.user.sql) u
                    WHERE NOT EXISTS (SELECT 1 FROM users s WHERE s.sub = 'better_auth|' || u.\(s.user.col("id")))
                    """, [since])
                return (dangling, (total: row?["total"].int64 ?? 0, recent: row?["recent"].int64 ?? 0))
            }
        }
        let samples = [
            HealthSample(metric: "gatehouse_accounts_dangling", value: Double(dangling), help: "Account rows whose Better Auth user is missing."),
            HealthSample(metric: "gatehouse_users_unprovisioned", value: Double(unprovisioned.total), help: "Better Auth users with no sync users row."),
        ]
        return [
            dangling == 0
                ? HealthCheck(id: "accounts.dangling", status: .ok, summary: "every account row belongs to an existing user", samples: [samples[0]])
                : HealthCheck(id: "accounts.dangling", status: .warning, summary: "\(dangling) account row(s) belong to no user: that provider sign-in fails",
                              action: "gatehouse accounts check (samples), then remove or re-attach them", samples: [samples[0]]),
            unprovisioned.recent == 0
                ? HealthCheck(id: "accounts.unprovisioned", status: .ok,
                              summary: unprovisioned.total == 0 ? "every Better Auth user has a sync row"
                                  : "every signup of the last \(Self.recentWindow) has a sync row (\(unprovisioned.total) older users have none: see accounts check)",
                              samples: [samples[1]])
                : HealthCheck(id: "accounts.unprovisioned", status: .warning,
                              summary: "\(unprovisioned.recent) signup(s) of the last \(Self.recentWindow) have no sync users row: the sync server refuses their sub (\(unprovisioned.total) in all)",
                              action: "gatehouse accounts check lists them; provision them through the sync server's provisionBetterAuthUser", samples: [samples[1]]),
        ]
    }
}
