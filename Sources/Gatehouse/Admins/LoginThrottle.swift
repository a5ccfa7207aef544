import Storage

/// Slows password guessing at the console's login, per account and overall (every client is
/// 127.0.0.1, so "overall" stands in for "per client"). After `threshold` failures within `window`
/// (`overallThreshold` for the overall scope), each further failure locks the scope for
/// `base` × 2^(failures − threshold), at most `maxLockout`. A scope forgets its failures once
/// `maxLockout` passes without one (counted from the end of its lock); a successful login clears the
/// account's scope, not the overall one. While a scope is locked, attempts are refused without
/// checking the password, so a locked console spends no CPU on guesses.
///
/// With the standard rules: the 5th failure in 5 minutes locks for 30 s, the 6th for 1 min, then
/// 2, 4, 8 and at most 15 minutes.
public struct LoginThrottle {
    /// The throttle's settings.
    public struct Rules: Sendable {
        /// Failures of one account before it locks.
        public var threshold: Int
        /// Failures across all accounts before the whole login locks (every client is 127.0.0.1, so this
        /// is what stops a spray of guesses over many usernames). Successful logins do not reset it.
        public var overallThreshold: Int
        public var window: Seconds
        public var base: Seconds
        public var maxLockout: Seconds

        public init(threshold: Int = 5, overallThreshold: Int = 5, window: Seconds = Seconds(300), base: Seconds = Seconds(30),
                    maxLockout: Seconds = Seconds(900)) {
            self.threshold = threshold
            self.overallThreshold = overallThreshold
            self.window = window
            self.base = base
            self.maxLockout = maxLockout
        }

        /// 5 failures in 5 minutes, 30 s doubling up to 15 minutes.
        public static let standard = Rules()
    }

    /// The overall scope.
    static let overallScope = "*"

    /// The scope of one account (the name as typed, shortened and made printable).
    static func accountScope(_ username: String) -> String { "account:" + AdminUsername.printable(username) }

    public let store: Store
    public let rules: Rules

    public init(store: Store, rules: Rules = .standard) {
        self.store = store
        self.rules = rules
    }

    /// When the later of the account's and the overall lock ends, if either is in force at `now`.
    public func lockedUntil(username: String, now: Timestamp) throws -> Timestamp? {
        let rows = try store.db.rows("SELECT locked_until FROM gatehouse_login_failures WHERE scope IN (?, ?) AND locked_until IS NOT NULL",
                                     [Self.accountScope(username), Self.overallScope])
        let until = rows.compactMap { $0["locked_until"].string.flatMap(Timestamp.init(iso8601:)) }.filter { $0 > now }.max()
        return until
    }

    /// Counts a failure against the account and overall; returns the lock now in force, if any.
    /// Runs inside the caller's write transaction.
    func recordFailure(username: String, now: Timestamp) throws -> (failures: Int, lockedUntil: Timestamp?) {
        let account = try bump(Self.accountScope(username), threshold: rules.threshold, now: now)
        let overall = try bump(Self.overallScope, threshold: rules.overallThreshold, now: now)
        let lock = [account.1, overall.1].compactMap { $0 }.max()
        return (account.0, lock)
    }

    /// Clears the account's failures after a successful login. Runs inside the caller's write transaction.
    func recordSuccess(username: String) throws {
        try store.db.execute("DELETE FROM gatehouse_login_failures WHERE scope = ?", [Self.accountScope(username)])
    }

    private func bump(_ scope: String, threshold: Int, now: Timestamp) throws -> (Int, Timestamp?) {
        let row = try store.db.row("SELECT * FROM gatehouse_login_failures WHERE scope = ?", [scope])
        var failures = 1
        var first = now
        if let row, let last = row["last_failure_at"].string.flatMap(Timestamp.init(iso8601:)),
           let start = row["first_failure_at"].string.flatMap(Timestamp.init(iso8601:)) {
            let count = Int(row["failures"].int64 ?? 0)
            // Forgotten after `maxLockout` without a failure, counted from the end of any lock.
            let lockEnd = row["locked_until"].string.flatMap(Timestamp.init(iso8601:))
            let quietSince = max(last, lockEnd ?? last)
            let stale = quietSince < now.adding(seconds: -rules.maxLockout.value)
            let windowOver = count < threshold && start < now.adding(seconds: -rules.window.value)
            if !stale && !windowOver {
                failures = count + 1
                first = start
            }
        }
        var lockedUntil: Timestamp?
        if failures >= threshold {
            let doublings = min(failures - threshold, 30)
            let (scaled, overflow) = rules.base.value.multipliedReportingOverflow(by: Int64(1) << Int64(doublings))
            lockedUntil = now.adding(seconds: overflow ? rules.maxLockout.value : min(scaled, rules.maxLockout.value))
        }
        try store.db.execute("""
            INSERT INTO gatehouse_login_failures (scope, failures, first_failure_at, last_failure_at, locked_until) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (scope) DO UPDATE SET failures = excluded.failures, first_failure_at = excluded.first_failure_at,
                last_failure_at = excluded.last_failure_at, locked_until = excluded.locked_until
            """, [scope, failures, first.iso8601, now.iso8601, lockedUntil?.iso8601])
        return (failures, lockedUntil)
    }
}
