import Storage

extension PostgresStoreEngine {
    /// Postgres's consistency check for `health`: quick_check reads SQLite's file format; on a server, amcheck checks
    /// Better Auth's indexes when the database has it (`PostgresIndexCheck`), on a second connection while the other
    /// checks run on the store's own.
    func startConsistencyCheck(_ store: Store, _ context: HealthContext) -> () throws -> HealthCheck {
        let check = PostgresIndexCheck(schema: store.schema), readOnly = store.db.isReadOnly
        let background = SecondConnection(store.location, snapshot: false) { db in try check.run(db) }
        return {
            let outcome: PostgresIndexCheck.Outcome
            do { outcome = try background.wait() } catch { outcome = try check.run(store.db) }
            return PostgresIndexCheck.healthCheck(outcome, readOnly: readOnly)
        }
    }
}
