import Storage

/// The one translation of Storage's errors into words an operator can act on.
///
/// The domain lets `DatabaseError`s through as they are; each front end calls this where it renders errors: the
/// CLI's top-level `catch` (`main.swift`), the console's `APIError.from`, and the health runner for one check's
/// failure. The words never include bound values or SQL (SQLite's own message is kept only where it names what is
/// wrong with the file).
extension GatehouseError {
    /// Describes a storage failure on the store at `storePath` (the path the error carries wins).
    public init(storeFailure error: DatabaseError, storePath: String? = nil) {
        let path = error.path ?? storePath ?? "the store"
        if error.isBusy {
            self.init("the store \(path) stayed locked by another process for \(Store.busyTimeout / 1000) s (SQLite code \(error.extendedCode))",
                      fix: "retry; if it persists, find the process holding it with `fuser \(path)`", code: .busy)
        } else if error.isReadOnly {
            self.init("the store \(path) is read-only for this user (the file, its -wal/-shm files, or its folder)",
                      fix: "run as the store's owner, or make the file and its folder writable", code: .readOnly)
        } else if error.isCorruption {
            self.init("\(path) is not a SQLite database, or it is damaged (\(error.message))",
                      fix: "check the path; restore the store from a backup if it was damaged", code: .notADatabase)
        } else if error.isDiskFull {
            self.init("the disk holding \(path) is full", fix: "free space and retry; nothing was written", code: .diskFull)
        } else if error.isCannotOpen {
            self.init("cannot open the store \(path) (\(error.message))", fix: "check the path and the folder's permissions", code: .cannotOpen)
        } else {
            self.init("the store \(path) answered: \(error.message) (SQLite code \(error.extendedCode))", code: .storeError)
        }
    }

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

    /// `error` as an operator-facing error when it is one Gatehouse has words for: a `GatehouseError` as it is,
    /// a storage failure translated; nil for anything else (a programming error, shown as it is).
    public static func operatorFacing(_ error: Error, storePath: String? = nil) -> GatehouseError? {
        switch error {
        case let error as GatehouseError: return error
        case let error as DatabaseError: return GatehouseError(storeFailure: error, storePath: storePath)
        case let error as PostgresError: return GatehouseError(storeFailure: error, storePath: storePath)
        case let error as ResourcePoolTimeout:
            return GatehouseError("\(error.description) by other requests", fix: "retry shortly; a request that holds one may be waiting for a lock", code: .busy)
        default: return nil
        }
    }
}
