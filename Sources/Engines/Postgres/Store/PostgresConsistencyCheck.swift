import Gatehouse
import Storage

extension PostgresStoreEngine {
    /// Postgres's consistency check for `health`: quick_check reads SQLite's file format; on a server, amcheck checks
    /// Better Auth's indexes when the database has it (`PostgresIndexCheck`: index by index within the run's budget,
    /// the longest unchecked first, every one with `--deep`), on a second connection while the other checks run on
    /// the store's own.
    func startConsistencyCheck(_ store: Store, _ context: HealthContext) -> () throws -> HealthCheck {
        var check = PostgresIndexCheck(schema: store.schema)
        check.budget = context.integrityBudget
        check.deep = context.deep
        do {
            check.previous = try PostgresIndexCheck.previousVerdicts(store.db)
        } catch {
            return { throw error }
        }
        let readOnly = store.db.isReadOnly, now = context.now, planned = check
        let background = SecondConnection(store.location, snapshot: false, caller: store.db) { db in try planned.run(db, now: now) }
        return {
            let outcome: PostgresIndexCheck.Outcome
            do { outcome = try background.wait() } catch { outcome = try planned.run(store.db, now: now) }
            return PostgresIndexCheck.healthCheck(outcome, readOnly: readOnly)
        }
    }
}
