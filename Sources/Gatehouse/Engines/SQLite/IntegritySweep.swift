import Dispatch
import Foundation
import Storage

/// SQLite's consistency check, spread over the scheduled runs: `PRAGMA quick_check(table)` table by table,
/// those with the oldest verdict first, until a time budget is spent.
///
/// A whole-file `quick_check` reads every page: about 4 s on a 1,000,000-user (1.75 GB) store, twice what
/// an hourly check may take. Checked one table (with its indexes) at a time, the same work is spread: each
/// run checks the tables that have gone longest without a verdict, at least one, and stops starting new ones
/// once the budget is spent. Recorded runs carry each table's last clean verdict forward as a sample, so
/// hourly recorded runs cover the whole store every few hours and Prometheus sees each table's age. What only a
/// whole-file check sees (free-list and page accounting across tables) is `--deep`'s `integrity_check`.
///
///     let sweep = IntegritySweep(budget: Seconds(1), previous: IntegritySweep.previousVerdicts(db))
///     let outcome = try sweep.run(db, tables: try db.tableNames(), now: .now())
struct IntegritySweep: Sendable {
    /// One sample per table: when its last clean verdict was reached.
    static let metric = "gatehouse_store_integrity_checked_timestamp_seconds"
    /// Problems reported at most, as `PRAGMA quick_check(20)` would.
    static let problemLimit = 20

    /// Stop starting tables once this much time has passed (one table is always checked).
    let budget: Seconds
    /// Each table's last clean verdict (Unix seconds), from the latest recorded run.
    let previous: [String: Int64]
    /// `integrity_check` over the whole file instead of the sweep.
    var deep = false

    /// What one run found.
    struct Outcome: Sendable {
        /// The pragma that ran (`quick_check` or `integrity_check`).
        let pragma: String
        /// Tables checked this run, in the order they were checked.
        let checked: [String]
        /// Every table of the store.
        let tables: [String]
        /// Problems as SQLite words them, each prefixed with its table in a sweep.
        let problems: [String]
        /// Each table's last clean verdict after this run (tables never checked are absent).
        let verdicts: [String: Int64]
    }

    /// The order a sweep takes: never-checked tables first, then the oldest verdicts; by name among equals.
    static func order(_ tables: [String], previous: [String: Int64]) -> [String] {
        tables.sorted { (previous[$0] ?? 0, $0) < (previous[$1] ?? 0, $1) }
    }

    func run(_ db: SQLDatabase, tables: [String], now: Timestamp) throws -> Outcome {
        let started = DispatchTime.now().uptimeNanoseconds
        func elapsedMilliseconds() -> Int { Int((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000) }
        var problems: [String] = []
        var checked: [String] = []
        var damaged: Set<String> = []
        if deep {
            do {
                try db.forEach("PRAGMA integrity_check(\(Self.problemLimit))") { row in
                    if let line = row[0].string, line != "ok" { problems.append(Self.oneLine(line)) }
                }
            } catch let error as SQLFailure where error.isCorruption {
                problems.append(error.message)
            }
            checked = tables
        } else {
            let statement = "SELECT quick_check FROM pragma_quick_check(?)"
            for table in Self.order(tables, previous: previous) {
                if !checked.isEmpty && Int64(elapsedMilliseconds()) >= budget.value * 1000 { break }
                var lines = 0
                do {
                    try db.forEach(statement, [table]) { row in
                        guard let line = row[0].string, line != "ok", lines < Self.problemLimit else { return }
                        lines += 1
                        damaged.insert(table)
                        problems.append("\(table): \(Self.oneLine(line))")
                    }
                } catch let error as SQLFailure where error.isCorruption {
                    // Damage can stop the check itself before it reports a line.
                    damaged.insert(table)
                    problems.append("\(table): \(error.message)")
                }
                checked.append(table)
            }
        }
        // A table whose check found a problem keeps its old verdict time: it is not clean as of now.
        var verdicts = previous.filter { tables.contains($0.key) }
        for table in checked where deep ? problems.isEmpty : !damaged.contains(table) { verdicts[table] = now.seconds }
        return Outcome(pragma: deep ? "integrity_check" : "quick_check", checked: checked, tables: tables,
                       problems: problems, verdicts: verdicts)
    }

    /// A problem as one line: SQLite starts a report with a `*** in database main ***` line.
    static func oneLine(_ problem: String) -> String {
        problem.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("*** in database ") }.joined(separator: " ")
    }

    /// Each table's last clean verdict, from the newest recorded run that carries them (nothing before the first).
    static func previousVerdicts(_ db: SQLDatabase) throws -> [String: Int64] {
        var verdicts: [String: Int64] = [:]
        let decoder = JSONDecoder()
        // The newest few runs: one whose store checks could not run carries no verdicts.
        for row in try db.rows("SELECT report FROM gatehouse_health_runs ORDER BY id DESC LIMIT 5") {
            guard let json = row[0].string,
                  let report = try? decoder.decode(HealthReport.self, from: Data(json.utf8)) else { continue }
            for check in report.checks where check.id == "store.integrity" {
                for sample in check.samples where sample.metric == metric {
                    if let table = sample.labels["table"] { verdicts[table] = Int64(sample.value) }
                }
            }
            if !verdicts.isEmpty { break }
        }
        return verdicts
    }
}
