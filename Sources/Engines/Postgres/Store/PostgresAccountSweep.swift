import Foundation
import Gatehouse
import Storage

/// `health`'s account walk on Postgres: per-range anti-joins the server answers from its indexes.
struct PostgresAccountSweep: AccountSweep {
    /// Users per statement, unless a test asks for smaller windows (`GATEHOUSE_TEST_HEALTH_WALK_STRIDE`, given as
    /// `stride`).
    static let defaultRangeStride = 16_384

    /// The user ids a range at a time in the user table's key order, each range's anti-joins answered by the
    /// server from the indexes (the sync `sub` key, the account `userId` index, the user key): a statement finds where
    /// the range ends a range of users on, one counts it, until `shouldStop` says so. Ranges are half-open
    /// [start, next): an account row is counted in the range its user id falls in (NULL ones in the first), as in the
    /// ordered walk. Nil without an index on the account's `userId` (each range would scan every account): the caller
    /// then counts with whole anti-joins.
    func window(_ store: Store, from start: String?, since: SQLValue, stride: Int, shouldStop: () -> Bool) throws -> AccountSweepWindow? {
        let s = store.schema, user = s.user, account = s.account
        let userID = user.col(.id), accountUser = account.col(.userId)
        guard AccountIndexes.leadingIndex(try store.db.indexes(of: account.name), column: account.column(.userId), byteOrdered: false) != nil else { return nil }
        return try store.db.read {
            var window = AccountSweepWindow(dangling: 0, unprovisioned: 0, recent: 0, users: 0, next: start)
            repeat {
                let low = window.next
                let from = low == nil ? "" : "\(userID) >= ?"
                let high = try store.db.scalar(
                    "SELECT \(userID) FROM \(user.sql)\(low == nil ? "" : " WHERE " + from) ORDER BY \(userID) OFFSET ? LIMIT 1",
                    (low.map { [SQLValue.text($0)] } ?? [] as [SQLValue]) + [SQLValue.integer(Int64(ProcessInfo.processInfo.environment["GATEHOUSE_TEST_HEALTH_WALK_STRIDE"] == nil ? Self.defaultRangeStride : stride))]).string
                // The half-open range [low, high) on a column, with its bindings.
                func range(_ column: String) -> (sql: String, binds: [SQLBindable]) {
                    let parts = [low.map { _ in "\(column) >= ?" }, high.map { _ in "\(column) < ?" }].compactMap { $0 }
                    return (parts.isEmpty ? "TRUE" : parts.joined(separator: " AND "), [low, high].compactMap { $0.map(SQLValue.text) })
                }
                let users = range("u.\(userID)"), accounts = range("a.\(accountUser)")
                // One pass over the range's users, one over its accounts.
                let row = try store.db.row("""
                    SELECT count(*) AS walked, count(*) FILTER (WHERE lonely) AS unprovisioned,
                           count(*) FILTER (WHERE lonely AND recent) AS recent,
                           (SELECT count(*) FROM \(account.sql) a WHERE (\(accounts.sql)\(low == nil ? " OR a.\(accountUser) IS NULL" : ""))
                              AND NOT EXISTS (SELECT 1 FROM \(user.sql) u WHERE u.\(userID) = a.\(accountUser))) AS dangling
                    FROM (SELECT NOT EXISTS (SELECT 1 FROM users s WHERE s.sub = '\(SyncSub.prefix)' || u.\(userID)) AS lonely,
                                 u.\(user.col(.createdAt)) >= ? AS recent
                          FROM \(user.sql) u WHERE \(users.sql)) r
                    """, accounts.binds + [since] + users.binds)
                window.users += Int(row?["walked"].int64 ?? 0)
                window.unprovisioned += Int(row?["unprovisioned"].int64 ?? 0)
                window.recent += row?["recent"].int64 ?? 0
                window.dangling += Int(row?["dangling"].int64 ?? 0)
                window.next = high
            } while window.next != nil && !shouldStop()
            return window
        }
    }
}
