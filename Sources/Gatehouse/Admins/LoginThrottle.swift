import Foundation
import JOSE
import Locking
import Storage

/// Slows password guessing at the console's login, per username and per client, in a way that a flood
/// from outside cannot turn into a lockout of the admin who knows the password.
///
/// **Two scopes.** Each attempt counts against the username typed (`user:` + a keyed digest of the name, so
/// the table never holds what was typed: it may be a password typed into the wrong field; see
/// ``usernameKey(for:)`` for why keyed) and against
/// the client (`client:` + the peer address). After `threshold` failures of one username within
/// `window` (`clientThreshold` for a client), each further failure locks that scope for
/// `base` × 2^(failures − threshold), at most `maxLockout`. A scope forgets its failures once
/// `maxLockout` passes without one (counted from the end of its lock).
///
/// **What a lock refuses.** A locked username is refused (429) without its password being checked.
/// A locked client is refused too, *except* for a username that names an enabled admin whose own scope
/// is not locked: every local process is 127.0.0.1, so a client scope that blocked everyone would let any
/// process on the machine lock the real admin out by spraying wrong names. With the exception, a spray
/// of unknown or wrong usernames (the requirement: it must never lock out an admin who knows the
/// password) costs the console no password checks once the client is locked, while a known admin with a
/// clean record is checked as usual. Guessing one admin's password stays bound by that name's own scope.
/// The price, named here on purpose: once a client has failed `clientThreshold` times, it can tell admin
/// names (checked: 401 after a while) from other names (429 at once). Admin names are not secrets (every
/// viewer reads them in the audit log); hashing every attempt of a flood instead would queue the real
/// admin's login behind it.
///
/// **Parallel attempts.** ``admit(username:client:now:)`` decides and counts in one `BEGIN IMMEDIATE`
/// transaction, before the (slow, lock-free) password check: each attempt is counted as a failure in
/// advance, so of any number of parallel attempts on one username at most `threshold` reach the
/// password check before the lock stands. A success then clears the username's scope and takes its
/// advance count back from the client's.
///
/// With the standard rules: the 5th failure of a username in 5 minutes locks it for 30 s, the 6th for
/// 1 min, then 2, 4, 8 and at most 15 minutes; a client locks likewise after 20 failures.
/// `gatehouse admins unthrottle NAME` (or `--all`) lifts locks.
public struct LoginThrottle {
    /// The throttle's settings.
    public struct Rules: Sendable {
        /// Failures of one username before it locks.
        public var threshold: Int
        /// Failures from one client (peer address) before it locks for names that are not admins in good
        /// standing; see ``LoginThrottle``. Higher than `threshold`: all local processes share 127.0.0.1.
        public var clientThreshold: Int
        public var window: Seconds
        public var base: Seconds
        public var maxLockout: Seconds

        public init(threshold: Int = 5, clientThreshold: Int = 20, window: Seconds = Seconds(300), base: Seconds = Seconds(30),
                    maxLockout: Seconds = Seconds(900)) {
            self.threshold = threshold
            self.clientThreshold = clientThreshold
            self.window = window
            self.base = base
            self.maxLockout = maxLockout
        }

        /// 5 failures of a username (20 of a client) in 5 minutes, 30 s doubling up to 15 minutes.
        public static let standard = Rules()
    }

    /// Whether an attempt may check its password.
    public enum Admission: Equatable, Sendable {
        /// Checked; counted in advance as the username's `failures`-th failure, locking it until `lockedUntil` if it fails.
        case admitted(failures: Int, lockedUntil: Timestamp?)
        /// Refused without a check until `until`.
        case refused(until: Timestamp)
    }

    /// One lifted throttle, as `unthrottle` reports it.
    public struct Lifted: Sendable, Codable, Equatable {
        /// `user:<digest>` or `client:<address>`.
        public let scope: String
        public let failures: Int
        public let lockedUntil: Timestamp?
    }

    /// The scope of one username on `store`: a keyed digest, so that the name as typed is never stored.
    public static func accountScope(_ username: String, store: Store) -> String {
        "user:" + String(Hex.encode(HMAC.sha256(key: usernameKey(for: store), data: Array(username.utf8))).prefix(32))
    }

    /// The scope of one client.
    static func clientScope(_ client: String) -> String { "client:" + String(client.prefix(64)) }

    /// How the audit log names a username no admin has: never the text itself, which may be a password
    /// typed into the wrong field, nor a plain hash of it (see ``usernameKey(for:)``). The same name gets the same
    /// label on one store, so repeated attempts can be told apart from a spray.
    public static func unknownUserLabel(_ username: String, store: Store) -> String {
        "unknown user (hmac:\(Hex.encode(HMAC.sha256(key: usernameKey(for: store), data: Array(username.utf8))).prefix(8)))"
    }

    /// The key that digests typed usernames: HMAC-SHA-256 under a key derived from the store's master key.
    ///
    /// An unsalted SHA-256 of what was typed is one dictionary lookup away from the text, and what is typed into the
    /// username field is sometimes a password; the audit log keeps it for good. Keyed, the digest says nothing to
    /// whoever reads the table or the log without the master key, which never goes into the store. Derived (not the
    /// master key itself) so that the two uses never share a key. Loaded once per store and process.
    ///
    /// Without a usable master key (a lost key file: health says so, and Apple keys cannot be opened either), a key
    /// random to this process stands in: a digest is still never guessable, at the price that throttles and labels
    /// do not carry over to other processes (`admins unthrottle NAME` then needs `--all`) nor past a restart.
    static func usernameKey(for store: Store) -> [UInt8] {
        if let key = usernameKeys.withLock({ $0[store.path] }) { return key }
        guard let master = try? MasterKey.load(storePath: store.path) else { return processUsernameKey }
        let key = HMAC.sha256(key: master.bytes, data: Array("gatehouse login username v1".utf8))
        usernameKeys.withLock { $0[store.path] = key }
        return key
    }

    private static let usernameKeys = Locked<[String: [UInt8]]>([:])
    private static let processUsernameKey: [UInt8] = (try? SecureRandom.bytes(32)) ?? HMAC.sha256(key: Array(UUID().uuidString.utf8), data: Array(UUID().uuidString.utf8))

    public let store: Store
    public let rules: Rules

    public init(store: Store, rules: Rules = .standard) {
        self.store = store
        self.rules = rules
    }

    /// Decides whether an attempt for `username` from `client` may check its password, and if so counts
    /// it in advance as a failure of both scopes, all in one write transaction (see ``LoginThrottle``).
    public func admit(username: String, client: String, now: Timestamp) throws -> Admission {
        try store.db.write {
            let user = Self.accountScope(username, store: store)
            let clientScope = Self.clientScope(client)
            // Both scopes' rows read together, before anything is written (one round trip; and on D1, where a
            // write's statements go when it ends, a read after them could not see them).
            let rows = try store.db.snapshot([SQLStatement("SELECT * FROM gatehouse_login_failures WHERE scope = ?", [user]),
                                              SQLStatement("SELECT * FROM gatehouse_login_failures WHERE scope = ?", [clientScope])])
            let (userRow, clientRow) = (rows[0].first, rows[1].first)
            if let until = lockedUntil(userRow, now: now) { return .refused(until: until) }
            if let until = lockedUntil(clientRow, now: now), !(try isEnabledAdmin(username)) { return .refused(until: until) }
            let (failures, lock) = try bump(user, row: userRow, threshold: rules.threshold, now: now)
            _ = try bump(clientScope, row: clientRow, threshold: rules.clientThreshold, now: now)
            return .admitted(failures: failures, lockedUntil: lock)
        }
    }

    /// After a successful check: clears the username's scope and takes back the client's advance count.
    /// Also tidies the table: scopes quiet for longer than they can matter go (every name ever typed would
    /// otherwise stay), and so do undigested scopes (`account:<name as typed>`, `*`), which hold
    /// typed text. Runs inside the caller's write transaction.
    func recordSuccess(username: String, client: String, now: Timestamp) throws {
        try store.db.execute("DELETE FROM gatehouse_login_failures WHERE scope = ?", [Self.accountScope(username, store: store)])
        try store.db.execute("UPDATE gatehouse_login_failures SET failures = failures - 1 WHERE scope = ? AND failures > 0",
                             [Self.clientScope(client)])
        let forgotten = now.adding(seconds: -(rules.maxLockout.value + rules.window.value)).iso8601
        try store.db.execute("""
            DELETE FROM gatehouse_login_failures
            WHERE (last_failure_at < ?1 AND (locked_until IS NULL OR locked_until < ?1))
               OR (scope NOT LIKE 'user:%' AND scope NOT LIKE 'client:%')
            """, [forgotten])
    }

    /// After a right password whose login still needs its second factor: takes back both scopes' advance counts,
    /// without clearing the username's earlier failures (only a completed login does), so that wrong codes add up
    /// across password logins. Runs inside the caller's write transaction.
    func recordPartialSuccess(username: String, client: String) throws {
        for scope in [Self.accountScope(username, store: store), Self.clientScope(client)] {
            try store.db.execute("UPDATE gatehouse_login_failures SET failures = failures - 1 WHERE scope = ? AND failures > 0", [scope])
        }
    }

    /// Lifts the throttle of one username (`nil`: every throttle, clients and legacy scopes included); returns what was lifted.
    public func lift(username: String?, actor: Actor, now: Timestamp) throws -> [Lifted] {
        try store.db.write {
            let rows: [Row]
            if let username {
                rows = try store.db.rows("SELECT scope, failures, locked_until FROM gatehouse_login_failures WHERE scope = ?", [Self.accountScope(username, store: store)])
                try store.db.execute("DELETE FROM gatehouse_login_failures WHERE scope = ?", [Self.accountScope(username, store: store)])
            } else {
                rows = try store.db.rows("SELECT scope, failures, locked_until FROM gatehouse_login_failures ORDER BY scope")
                try store.db.execute("DELETE FROM gatehouse_login_failures")
            }
            let lifted = rows.map { row in
                // Undigested scopes (`account:<name as typed>`, `*`) are reported without their text.
                let scope = row["scope"].string ?? ""
                let shown = scope.hasPrefix("user:") || scope.hasPrefix("client:") ? scope : "legacy"
                return Lifted(scope: shown, failures: Int(row["failures"].int64 ?? 0),
                              lockedUntil: row["locked_until"].string.flatMap(Timestamp.init(iso8601:)).flatMap { $0 > now ? $0 : nil })
            }
            var details: [String: AuditValue] = ["scopes": .int(Int64(lifted.count)),
                                                 "locked": .int(Int64(lifted.filter { $0.lockedUntil != nil }.count))]
            if username == nil { details["all"] = .bool(true) }
            try store.audit.append(store.db, actor: actor, action: "admin.unthrottle",
                                   subject: username.map { AdminUsername.isValid($0) ? $0 : Self.unknownUserLabel($0, store: store) } ?? "*",
                                   details: details, at: now)
            return lifted
        }
    }

    private func lockedUntil(_ row: Row?, now: Timestamp) -> Timestamp? {
        row?["locked_until"].string.flatMap(Timestamp.init(iso8601:)).flatMap { $0 > now ? $0 : nil }
    }

    private func isEnabledAdmin(_ username: String) throws -> Bool {
        guard AdminUsername.isValid(username) else { return false }
        return try store.db.scalar("SELECT 1 FROM gatehouse_admins WHERE username = ? AND disabled = 0", [username]).int64 == 1
    }

    /// Counts one more failure of `scope`, whose row (read before any write) is `row`.
    private func bump(_ scope: String, row: Row?, threshold: Int, now: Timestamp) throws -> (Int, Timestamp?) {
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
