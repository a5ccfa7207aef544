import Storage

/// Postgres's counterpart of SQLite's quick_check sweep, where the server offers one: amcheck's `bt_index_check` on
/// every B-tree index of Better Auth's tables (the user, account, session and verification tables Gatehouse reads
/// and merges). Each index is read once, without locking out writers (`bt_index_check` takes the lock a `SELECT`
/// takes). Without the extension the check says how to get it; a role that may not run it is told what to grant.
struct PostgresIndexCheck: Sendable {
    /// How the check ended, for `StoreHealthChecks` to put into words.
    enum Outcome: Equatable, Sendable {
        /// amcheck is not installed in the database.
        case unavailable
        /// The role may not execute `bt_index_check`.
        case notPermitted(function: String)
        /// Every index checked clean.
        case clean(indexes: [String])
        /// An index failed its check: its name and the server's message.
        case corrupt(index: String, message: String)
    }

    let tables: [String]

    init(schema: AuthSchema) {
        tables = [schema.user.name, schema.account.name, schema.session.name, schema.verification?.name].compactMap { $0 }
    }

    /// Runs the checks on `db`, one statement per index (no transaction for a corrupt index to abort).
    func run(_ db: SQLDatabase) throws -> Outcome {
        guard let namespace = try db.row("""
            SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'amcheck'
            """)?[0].string else { return .unavailable }
        let function = "\(SQLDialect.quote(namespace)).bt_index_check"
        var checked: [String] = []
        for table in tables {
            let indexes = try db.rows("""
                SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
                WHERE i.indrelid = to_regclass(?) AND am.amname = 'btree' AND i.indisvalid AND i.indisready ORDER BY 1
                """, [SQLDialect.quote(table)]).compactMap { $0[0].string }
            for index in indexes {
                do {
                    try db.execute("SELECT \(function)(CAST(? AS regclass))", [SQLDialect.quote(index)])
                } catch let error as PostgresError where error.sqlState == "42501" {
                    return .notPermitted(function: "\(function)(regclass)")
                } catch let error as PostgresError where error.sqlState.map({ $0.hasPrefix("XX") }) ?? false {
                    return .corrupt(index: index, message: error.message)
                }
                checked.append(index)
            }
        }
        return .clean(indexes: checked)
    }

    /// The outcome as the `store.integrity` check.
    static func healthCheck(_ outcome: Outcome, readOnly: Bool) -> HealthCheck {
        let note = readOnly ? "; the store is read-only (a standby, or default_transaction_read_only)" : ""
        switch outcome {
        case .unavailable:
            return HealthCheck(id: "store.integrity", status: .ok,
                               summary: "not applicable on Postgres without amcheck: SQLite's quick_check has no counterpart here, and the server checks its own pages" + note,
                               action: "to have health check Better Auth's indexes, run CREATE EXTENSION amcheck as a superuser and grant EXECUTE on bt_index_check(regclass) to this role")
        case .notPermitted(let function):
            return HealthCheck(id: "store.integrity", status: .warning,
                               summary: "amcheck is installed, but this role may not run \(function)" + note,
                               action: "GRANT EXECUTE ON FUNCTION \(function) TO the role in the store URI")
        case .clean(let indexes):
            return HealthCheck(id: "store.integrity", status: .ok,
                               summary: "amcheck bt_index_check: ok on \(indexes.count) index(es) of Better Auth's tables" + note)
        case .corrupt(let index, let message):
            return HealthCheck(id: "store.integrity", status: .critical,
                               summary: "amcheck bt_index_check found index \(index) corrupt: \(message.prefix(200))" + note,
                               action: "REINDEX INDEX CONCURRENTLY \(SQLDialect.quote(index)) after a backup; check the server's storage and logs")
        }
    }
}
