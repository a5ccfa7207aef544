import Dispatch
import Foundation
import Storage

/// Linked accounts that would fail someone at sign-in or sync: account rows whose user is gone (dangling),
/// and Better Auth users with no sync `users` row (unprovisioned: the sync server fails closed on their sub).
///
/// Unprovisioned users are counted in full, but only recent ones warn: a signup of the last `recentWindow`
/// without a sync row means provisioning is broken now; older ones are a known backlog for `accounts check`.
///
/// Both counts come from the engine's walk of the user ids a window at a time (`AccountSweep`), where it has one;
/// elsewhere they are whole SQL anti-joins. The walk stops when the run's budget (`--sweep-budget`)
/// is spent, and the next recorded run goes on from there (`sweep`): at ten million users one run walks about a
/// million, and the counts are the last full cycle's, or worse ones this cycle has found so far. `--deep` walks
/// everything at once.
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
        if let swept = try sweep(store, since: since, budget: context.deep ? nil : context.integrityBudget) { return swept }
        return report(try store.db.read { try antiJoins(store, since: since) })
    }

    /// Users walked between two looks at the clock (`GATEHOUSE_TEST_HEALTH_WALK_STRIDE` makes windows small in tests).
    static let stride: Int = {
        guard let text = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_HEALTH_WALK_STRIDE"], let value = Int(text) else { return 1024 }
        return min(max(value, 1), 1 << 20)
    }()

    /// The walk within `budget`, resumed where the latest recorded run stopped (its `carry`): on a store too large to
    /// walk within the budget (10M users: about 4 s warm, far more cold), recorded runs share one cycle, each walking
    /// a window of user ids. Without a budget (`--deep`), the whole walk from the first user. Nil where no window can
    /// run (the engine has no `AccountSweep`, or it cannot run on this store): the caller then counts
    /// with whole anti-joins.
    func sweep(_ store: Store, since: SQLValue, budget: Seconds?) throws -> [HealthCheck]? {
        let previous = budget == nil ? [:] : (try? Self.previousCarry(store.db)) ?? [:]
        let start = previous["next"]
        let deadline = budget.map { DispatchTime.now().uptimeNanoseconds + UInt64(max($0.value, 0)) * 1_000_000_000 } ?? .max
        let shouldStop = { DispatchTime.now().uptimeNanoseconds >= deadline }
        guard let window = try store.engine.accountSweep?.window(store, from: start, since: since, stride: Self.stride, shouldStop: shouldStop) else {
            return nil
        }
        let recent = window.recent
        func carried(_ key: String) -> Int64 { start == nil ? 0 : Int64(previous[key] ?? "") ?? 0 }
        let cycle = Counts(dangling: carried("cycle_dangling") + Int64(window.dangling),
                           unprovisioned: carried("cycle_unprovisioned") + Int64(window.unprovisioned),
                           recentUnprovisioned: carried("cycle_recent") + recent)
        let walked = carried("cycle_users") + Int64(window.users), runs = carried("cycle_runs") + 1
        guard let next = window.next else {
            // The cycle is complete. Walked in one run (any store the budget covers), nothing is carried: the report is
            // what it always was. Otherwise the counts are kept for the next cycle's runs to show.
            let full: [String: String]? = start == nil ? nil : [
                "full_dangling": String(cycle.dangling), "full_unprovisioned": String(cycle.unprovisioned),
                "full_recent": String(cycle.recentUnprovisioned), "full_runs": String(runs),
            ]
            return report(cycle, carry: full, note: start == nil ? nil : "a full walk of \(walked) users over \(runs) recorded runs")
        }
        // Part-way: what this cycle found so far, or the last full cycle's counts when they are worse.
        func full(_ key: String) -> Int64 { Int64(previous[key] ?? "") ?? 0 }
        let shown = Counts(dangling: max(cycle.dangling, full("full_dangling")),
                           unprovisioned: max(cycle.unprovisioned, full("full_unprovisioned")),
                           recentUnprovisioned: max(cycle.recentUnprovisioned, full("full_recent")))
        var carry = previous.filter { $0.key.hasPrefix("full_") }
        carry["next"] = next
        carry["cycle_dangling"] = String(cycle.dangling)
        carry["cycle_unprovisioned"] = String(cycle.unprovisioned)
        carry["cycle_recent"] = String(cycle.recentUnprovisioned)
        carry["cycle_users"] = String(walked)
        carry["cycle_runs"] = String(runs)
        let lastFull = previous["full_runs"].map { "; the last full cycle took \($0) runs" } ?? ""
        return report(shown, carry: carry, partial: true, note: "walked \(walked) users so far in \(runs) run(s) of this cycle; recorded runs go on\(lastFull)")
    }


    /// The `carry` of the latest recorded run's `accounts.dangling` check.
    static func previousCarry(_ db: SQLDatabase) throws -> [String: String] {
        guard let json = try db.scalar("SELECT report FROM gatehouse_health_runs ORDER BY id DESC LIMIT 1").string,
              let report = try? JSONDecoder().decode(HealthReport.self, from: Data(json.utf8)) else { return [:] }
        return report.checks.first { $0.id == "accounts.dangling" }?.carry ?? [:]
    }

    /// The two checks for `counts`; `note` (how much a sweep has walked) is added to each summary.
    func report(_ counts: Counts, carry: [String: String]? = nil, partial: Bool = false, note: String? = nil) -> [HealthCheck] {
        let suffix = note.map { " (\($0))" } ?? ""
        let samples = [
            HealthSample(metric: "gatehouse_accounts_dangling", value: Double(counts.dangling), help: "Account rows whose Better Auth user is missing."),
            HealthSample(metric: "gatehouse_users_unprovisioned", value: Double(counts.unprovisioned), help: "Better Auth users with no sync users row."),
        ]
        return [
            counts.dangling == 0
                ? HealthCheck(id: "accounts.dangling", status: .ok,
                              summary: (partial ? "no account row without its user found" : "every account row belongs to an existing user") + suffix,
                              samples: [samples[0]], carry: carry)
                : HealthCheck(id: "accounts.dangling", status: .warning, summary: "\(counts.dangling) account row(s) belong to no user: that provider sign-in fails" + suffix,
                              action: "\(run: .accountsCheck) (samples), then remove or re-attach them", samples: [samples[0]], carry: carry),
            counts.recentUnprovisioned == 0
                ? HealthCheck(id: "accounts.unprovisioned", status: .ok,
                              summary: (counts.unprovisioned == 0 ? (partial ? "no user without a sync row found" : "every Better Auth user has a sync row")
                                  : partial ? "no signup of the last \(Self.recentWindow) without a sync row found (\(counts.unprovisioned) older users without one: see accounts check)"
                                  : "every signup of the last \(Self.recentWindow) has a sync row (\(counts.unprovisioned) older users have none: see accounts check)") + suffix,
                              samples: [samples[1]])
                : HealthCheck(id: "accounts.unprovisioned", status: .warning,
                              summary: "\(counts.recentUnprovisioned) signup(s) of the last \(Self.recentWindow) have no sync users row: the sync server refuses their sub (\(counts.unprovisioned) in all)" + suffix,
                              action: "\(run: .accountsCheck) lists them; provision them through the sync server's provisionBetterAuthUser", samples: [samples[1]]),
        ]
    }

    /// The counts as per-row anti-joins, where the ordered walk cannot run.
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

/// How an engine walks the user ids a window at a time for `health`'s account checks (`AccountHealthChecks`), within
/// the run's time budget: each window counts the account rows whose user is missing and the users without a sync row
/// among the users it walked.
package protocol AccountSweep {
    /// Walks from `start` (nil: the first user) until `shouldStop` says so (looked at every `stride` users at most)
    /// or the users end; nil where the walk cannot run on this store (the caller then counts with whole anti-joins).
    /// `since`: a user created at or after it and without a sync row counts as recent.
    func window(_ store: Store, from start: String?, since: SQLValue, stride: Int, shouldStop: () -> Bool) throws -> AccountSweepWindow?
}

/// What one run's window of the walk found, and the user id the next window starts at (nil: the walk ended).
package struct AccountSweepWindow {
    package var dangling: Int
    package var unprovisioned: Int
    package var recent: Int64
    package var users: Int
    package var next: String?

    package init(dangling: Int, unprovisioned: Int, recent: Int64, users: Int, next: String?) {
        self.dangling = dangling
        self.unprovisioned = unprovisioned
        self.recent = recent
        self.users = users
        self.next = next
    }
}
