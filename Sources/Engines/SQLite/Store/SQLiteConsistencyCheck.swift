import Gatehouse
import Storage

extension SQLiteStoreEngine {
    /// SQLite's consistency check for `health`: `IntegritySweep` (small tables whole with their indexes, large ones a
    /// rowid range at a time, oldest verdict first, within the run's budget, resuming where the last recorded run
    /// stopped; the whole file with `--deep`) on a second connection, or on the store's own when no second one opens
    /// (a read-only folder without the WAL index, say).
    func startConsistencyCheck(_ store: Store, _ context: HealthContext) -> () throws -> HealthCheck {
        let sweep: IntegritySweep, tables: [String]
        do {
            var planned = IntegritySweep(budget: context.integrityBudget, previous: try IntegritySweep.previousState(store.db))
            planned.deep = context.deep
            (sweep, tables) = (planned, try store.db.tableNames())
        } catch {
            return { throw error }
        }
        let now = context.now
        // Each table's check is its own statement: no snapshot across them, and no transaction for damage
        // to fail the COMMIT of.
        let background = SecondConnection(store.location, snapshot: false, caller: store.db) { db in try sweep.run(db, tables: tables, now: now) }
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
        var samples = outcome.verdicts.sorted { $0.key < $1.key }.map {
            HealthSample(metric: IntegritySweep.metric, labels: ["table": $0.key], value: Double($0.value),
                         help: "Since when the table and its indexes are known clean: its last quick_check, or the first range of its last range-by-range cycle.")
        }
        for (table, position) in outcome.resume.sorted(by: { $0.key < $1.key }) {
            samples.append(HealthSample(metric: IntegritySweep.resumeMetric, labels: ["table": table], value: Double(position.next),
                                        help: "The rowid the next recorded run resumes the table's range-by-range check at."))
            samples.append(HealthSample(metric: IntegritySweep.cycleStartMetric, labels: ["table": table], value: Double(position.cycleStarted),
                                        help: "When the table's unfinished range-by-range check began."))
        }
        let cycle = outcome.cycle
        samples.append(HealthSample(metric: "gatehouse_store_integrity_cycle_rows", value: Double(cycle.rows),
                                    help: "Rows a full cycle of the quick_check sweep reads (the tables' rowid spans)."))
        samples.append(HealthSample(metric: "gatehouse_store_integrity_cycle_coverage_ratio", value: cycle.coverage,
                                    help: "Share of the store's tables and indexes a full cycle of the sweep checks (the rest: only the deep check)."))
        samples.append(HealthSample(metric: "gatehouse_store_integrity_cycle_runs", value: Double(cycle.runsAtThisPace),
                                    help: "Runs a full cycle of the sweep takes at this run's pace."))
        if let seconds = cycle.lastSeconds {
            samples.append(HealthSample(metric: "gatehouse_store_integrity_cycle_seconds", value: Double(seconds),
                                        help: "Every row of the store was checked clean within this many seconds (now less the oldest verdict)."))
        }
        guard outcome.problems.isEmpty else {
            return HealthCheck(id: "store.integrity", status: .critical,
                               summary: "PRAGMA \(outcome.pragma) found \(outcome.problems.count) problem(s); first: \(outcome.problems[0].prefix(200))",
                               action: "stop writers, copy the store aside, restore from the last good backup", samples: samples)
        }
        let count = outcome.tables.count
        let ranged = outcome.checked.filter { outcome.ranges[$0] != nil }
        if outcome.checked.count == count && outcome.unfinished.isEmpty {
            let scope = outcome.pragma == "integrity_check" ? "the whole file" : "all \(count) tables and their indexes"
            let how = ranged.isEmpty ? "" : "; \(ranged.joined(separator: ", ")) by rowid ranges"
            return HealthCheck(id: "store.integrity", status: .ok, summary: "PRAGMA \(outcome.pragma): ok (\(scope))\(how)", samples: samples)
        }
        let names = outcome.checked.map { table -> String in
            guard let range = outcome.ranges[table] else { return table }
            return "\(table) rowids \(range.first)–\(range.last.map(String.init) ?? "end")"
        }
        let unchecked = outcome.tables.filter { outcome.verdicts[$0] == nil }
        var summary = "PRAGMA quick_check: ok on \(names.joined(separator: ", ")) (\(outcome.checked.count) of \(count) tables this run; "
        if unchecked.isEmpty, let oldest = outcome.verdicts.min(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
            summary += "the others were clean in earlier runs; the oldest verdict, \(oldest.key)'s, is \(Seconds(max(0, now.seconds - oldest.value))) old)"
        } else {
            summary += "\(unchecked.count) not checked yet: later recorded runs sweep them, \(field: .deep) checks all)"
        }
        // How much a full cycle covers and how long it takes.
        summary += "; a full cycle reads \(cycle.rows) rows"
        if !cycle.unprobed.isEmpty { summary += " and checks \(cycle.trees - cycle.unprobed.count) of \(cycle.trees) tables and indexes (not \(cycle.unprobed.joined(separator: ", ")))" }
        summary += ", about \(cycle.runsAtThisPace) run(s) at this run's pace"
        if let seconds = cycle.lastSeconds { summary += "; every row was checked within the last \(Seconds(seconds))" }
        return HealthCheck(id: "store.integrity", status: .ok, summary: summary, samples: samples)
    }
}
