import Storage

/// The bounds every Gatehouse session on a Postgres server runs under, so that no wait is endless: a lock another
/// session holds, a statement that runs away, a transaction left open by a process that hung.
///
/// Set on each connection when it is made (`SET lock_timeout`, …): a lock wait ends with SQLSTATE 55P03
/// (`PostgresError.isBusy`), a statement past its time with 57014 (`isTimeout`). TCP keepalives and libpq's
/// `connect_timeout`/`tcp_user_timeout` (`PostgresURI.connectionKeywords`) bound the waits on the network itself.
///
///     let db = try PostgresConnection(uri: uri, limits: PostgresSessionLimits(lockTimeoutMilliseconds: 5_000))
public struct PostgresSessionLimits: Sendable, Equatable {
    /// How long a statement waits for a lock held by another session (`lock_timeout`); 15 s, as SQLite's busy timeout.
    public var lockTimeoutMilliseconds: Int
    /// How long one statement may run before the server cancels it (`statement_timeout`); 0 for no limit.
    public var statementTimeoutMilliseconds: Int
    /// How long a transaction may sit idle before the server ends the session (`idle_in_transaction_session_timeout`),
    /// releasing its locks; 0 for no limit.
    public var idleInTransactionTimeoutMilliseconds: Int

    public init(lockTimeoutMilliseconds: Int = 15_000, statementTimeoutMilliseconds: Int = 300_000,
                idleInTransactionTimeoutMilliseconds: Int = 120_000) {
        self.lockTimeoutMilliseconds = lockTimeoutMilliseconds
        self.statementTimeoutMilliseconds = statementTimeoutMilliseconds
        self.idleInTransactionTimeoutMilliseconds = idleInTransactionTimeoutMilliseconds
    }

    /// The `SET` statements that apply these limits (whole milliseconds, clamped to what the server accepts).
    var setStatements: String {
        func milliseconds(_ value: Int) -> Int { min(max(0, value), Int(Int32.max)) }
        return "SET lock_timeout = \(milliseconds(lockTimeoutMilliseconds)); "
            + "SET statement_timeout = \(milliseconds(statementTimeoutMilliseconds)); "
            + "SET idle_in_transaction_session_timeout = \(milliseconds(idleInTransactionTimeoutMilliseconds))"
    }
}
