import Gatehouse
import Storage

/// Postgres's failures in an operator's words (`StoreEngineFailure`): a lost connection is unavailable, a standby
/// read-only, `lock_timeout` busy, a missing grant permission denied.
extension PostgresError: StoreEngineFailure {
    public func gatehouseError(storePath: String?) -> GatehouseError { GatehouseError(storeFailure: self, storePath: storePath) }
}

extension GatehouseError {
    /// Describes a failure of a Postgres store. The words come from the server or libpq with the password and
    /// bound values already replaced (`PostgresError`); the store is named by its redacted URI.
    public init(storeFailure error: PostgresError, storePath: String? = nil) {
        let store = error.store ?? storePath ?? "the store"
        switch error.kind {
        case .library:
            self.init(error.message, fix: "apt-get install libpq5", code: .cannotOpen)
        case .uri:
            self.init("the store URI is not one Gatehouse accepts: \(error.message)",
                      fix: "write it as postgresql://USER@HOST:PORT/DATABASE?sslmode=require (password from PGPASSWORD or ~/.pgpass)", code: .invalid)
        case .connection:
            self = .unreachable(store, error)
        case .statement where error.isConnectionFailure:
            // Lost mid-way (a restart, a terminated backend, a failover): the next request reconnects.
            self = .unreachable(store, error)
        case .statement where error.isReadOnly:
            self.init("the store \(store) is read-only (a standby, or default_transaction_read_only is on); nothing was changed",
                      fix: "run write commands against the primary", code: .readOnly)
        case .statement where error.sqlState == PostgresSQLState.deadlockDetected:
            self.init("the store \(store) ended this command's transaction to break a deadlock with another session (SQLSTATE 40P01); nothing was changed",
                      fix: "retry; if it recurs, look for the other session in the server's log (it names both)", code: .busy)
        case .statement where error.isBusy:
            self.init("the store \(store) stayed locked by another session for \(Store.busyTimeout / 1000) s (lock_timeout; SQLSTATE \(error.sqlState ?? "?"))",
                      fix: "retry; if it persists, look for the holder in pg_stat_activity / pg_locks (GATEHOUSE_BUSY_TIMEOUT_MS sets the wait)", code: .busy)
        case .statement where error.isTimeout:
            self.init("the store \(store) did not finish the statement in time (statement_timeout; SQLSTATE \(error.sqlState ?? "?")); nothing was changed",
                      fix: "retry when the server is less loaded; GATEHOUSE_STATEMENT_TIMEOUT_MS sets the limit (0: none)", code: .busy)
        case .statement where error.isPermissionDenied:
            self.init("the store's role may not do this on \(store): \(error.message)",
                      fix: "grant the role SELECT (and for write commands INSERT, UPDATE, DELETE) on Better Auth's and Gatehouse's tables", code: .permissionDenied)
        case .statement:
            self.init("the store \(store) answered: \(error.message) (SQLSTATE \(error.sqlState ?? "none"))", code: .storeError)
        }
    }

    private static func unreachable(_ store: String, _ error: PostgresError) -> GatehouseError {
        GatehouseError("cannot reach the store \(store): \(error.message)",
                       fix: "check the host, port, database, role and password (PGPASSWORD or ~/.pgpass), and that the server is up; Gatehouse reconnects by itself once it is",
                       code: .unavailable)
    }
}
