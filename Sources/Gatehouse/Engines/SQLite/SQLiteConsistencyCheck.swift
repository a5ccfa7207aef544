import Storage

extension SQLiteStoreEngine {
    /// SQLite's consistency check for `health`: `IntegritySweep` (whole tables with their indexes, oldest verdict
    /// first, within the run's budget; the whole file with `--deep`) on a second connection, or on the store's own when
    /// no second one opens (a read-only folder without the WAL index, say).
    func startConsistencyCheck(_ store: Store, _ context: HealthContext) -> () throws -> HealthCheck {
        let sweep: IntegritySweep, tables: [String]
        do {
            var planned = IntegritySweep(budget: context.integrityBudget, previous: try IntegritySweep.previousVerdicts(store.db))
            planned.deep = context.deep
            (sweep, tables) = (planned, try store.db.tableNames())
        } catch {
            return { throw error }
        }
        let now = context.now
        // Each table's check is its own statement: no snapshot across them, and no transaction for damage
        // to fail the COMMIT of.
        let background = SecondConnection(store.location, snapshot: false) { db in try sweep.run(db, tables: tables, now: now) }
        return {
            let outcome: IntegritySweep.Outcome
            do {
                outcome = try background.wait()
            } catch {
                // No second connection (a read-only folder without the WAL index, say): check on this one.
                outcome = try sweep.run(store.db, tables: tables, now: now)
            }
            return StoreHealthChecks().integrity(outcome, now: now)
        }
    }
}

extension StoreHealthChecks {
    func integrity(_ outcome: IntegritySweep.Outcome, now: Timestamp) -> HealthCheck {
        let samples = outcome.verdicts.sorted { $0.key < $1.key }.map {
            HealthSample(metric: IntegritySweep.metric, labels: ["table": $0.key], value: Double($0.value),
                         help: "When PRAGMA quick_check last found the table and its indexes clean.")
        }
        guard outcome.problems.isEmpty else {
            return HealthCheck(id: "store.integrity", status: .critical,
                               summary: "PRAGMA \(outcome.pragma) found \(outcome.problems.count) problem(s); first: \(outcome.problems[0].prefix(200))",
                               action: "stop writers, copy the store aside, restore from the last good backup", samples: samples)
        }
        let count = outcome.tables.count
        if outcome.checked.count == count {
            let scope = outcome.pragma == "integrity_check" ? "the whole file" : "all \(count) tables and their indexes"
            return HealthCheck(id: "store.integrity", status: .ok, summary: "PRAGMA \(outcome.pragma): ok (\(scope))", samples: samples)
        }
        let unchecked = outcome.tables.filter { outcome.verdicts[$0] == nil }
        var summary = "PRAGMA quick_check: ok on \(outcome.checked.joined(separator: ", ")) (\(outcome.checked.count) of \(count) tables this run; "
        if unchecked.isEmpty, let oldest = outcome.verdicts.min(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
            summary += "the others were clean in earlier runs; the oldest verdict, \(oldest.key)'s, is \(Seconds(max(0, now.seconds - oldest.value))) old)"
        } else {
            summary += "\(unchecked.count) not checked yet: later recorded runs sweep them, \(field: .deep) checks all)"
        }
        return HealthCheck(id: "store.integrity", status: .ok, summary: summary, samples: samples)
    }
}
