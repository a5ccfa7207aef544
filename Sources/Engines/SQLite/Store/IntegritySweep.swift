import Dispatch
import Foundation
import Gatehouse
import Storage

/// SQLite's consistency check, spread over the scheduled runs: small tables whole (`PRAGMA quick_check(table)`), large
/// ones a rowid range at a time (`RowidRangeCheck`), those with the oldest verdict first, until a time budget is spent;
/// where a run stops inside a table, the next recorded run resumes.
///
/// A whole-file `quick_check` reads every page: about 4 s on a 1,000,000-user (1.75 GB) store, twice what an hourly
/// check may take, and `quick_check('account')` alone took 4.9 s on 6.7M rows. So the smallest unit of work is a
/// bounded one: a table of at most `rangeRows` rows, or `rangeRows` rows of a larger table (doubling while ranges
/// take under an eighth of the budget). Each run checks the tables that have gone longest without a verdict, at least
/// one unit, and starts no new unit once the budget is spent. A large table's verdict is reached when its last range
/// is checked clean, and dated when its first one was (every row was checked since); recorded runs carry each table's
/// verdict and each unfinished table's resume point forward as samples, so hourly recorded runs cover the whole store
/// in a cycle whose length `Cycle` reports. What only a whole-file check sees (free-list and page accounting across
/// b-trees) is `--deep`'s `integrity_check`.
///
///     let sweep = IntegritySweep(budget: Seconds(1), previous: try IntegritySweep.previousState(db))
///     let outcome = try sweep.run(db, tables: try db.tableNames(), now: .now())
struct IntegritySweep: Sendable {
    /// One sample per table: since when every row of it is known clean (its last clean verdict).
    static let metric = StoreHealthChecks.consistencyCheckedMetric
    /// One sample per table whose range-by-range cycle is unfinished: the rowid the next run starts at.
    static let resumeMetric = "gatehouse_store_integrity_resume_rowid"
    /// One sample per table whose cycle is unfinished: when its first range was checked.
    static let cycleStartMetric = "gatehouse_store_integrity_cycle_started_timestamp_seconds"
    /// Problems reported at most, as `PRAGMA quick_check(20)` would.
    static let problemLimit = 20
    /// A table of at most this many rows (by its rowid span) is checked whole; a larger one in ranges of this many
    /// rows at first.
    static let rangeRows: Int64 = 8192
    /// Ranges grow to at most this many rows.
    static let maximumRangeRows: Int64 = 262_144

    /// Stop starting units once this much time has passed (one unit is always checked).
    let budget: Seconds
    /// Each table's last clean verdict and unfinished cycle, from the latest recorded run.
    let previous: State
    /// `integrity_check` over the whole file instead of the sweep.
    var deep = false

    /// What recorded runs carry from one run to the next.
    struct State: Sendable, Equatable {
        /// Each table's last clean verdict (Unix seconds): every row was checked clean at or after it.
        var verdicts: [String: Int64] = [:]
        /// Tables in the middle of a cycle: where the next range starts.
        var resume: [String: Resume] = [:]
    }

    /// Where a large table's unfinished cycle stands.
    struct Resume: Sendable, Equatable {
        /// The first rowid not yet checked in this cycle.
        var next: Int64
        /// When the cycle's first range was checked (Unix seconds): the verdict the table gets when the cycle ends.
        var cycleStarted: Int64
    }

    /// How much of the store a full cycle covers, and how long one takes.
    struct Cycle: Sendable, Equatable {
        /// The rows a full cycle reads: the tables' rowid spans (an upper bound of their rows).
        var rows: Int64 = 0
        /// The rows this run checked.
        var rowsThisRun: Int64 = 0
        /// Tables and indexes in the store.
        var trees = 0
        /// Indexes of range-checked tables that a range cannot probe (`RowidRangeCheck.unprobed`): a cycle checks
        /// their tables' rows but not their entries; `--deep` does.
        var unprobed: [String] = []
        /// Every row was checked within this many seconds (now less the oldest verdict), once every table has one.
        var lastSeconds: Int64?

        /// The share of the store's tables and indexes a full cycle checks.
        var coverage: Double { trees == 0 ? 1 : Double(trees - unprobed.count) / Double(trees) }
        /// Runs a full cycle takes at this run's pace.
        var runsAtThisPace: Int64 { rowsThisRun <= 0 ? 0 : max(1, (rows + rowsThisRun - 1) / rowsThisRun) }
    }

    /// What one run found.
    struct Outcome: Sendable {
        /// The pragma that ran (`quick_check` or `integrity_check`).
        let pragma: String
        /// Tables checked this run (whole, or some of their ranges), in the order they were checked.
        let checked: [String]
        /// Every table of the store.
        let tables: [String]
        /// Problems as SQLite words them, each prefixed with its table in a sweep.
        let problems: [String]
        /// Each table's last clean verdict after this run (tables never checked to the end are absent).
        let verdicts: [String: Int64]
        /// Tables left in the middle of a cycle after this run.
        let resume: [String: Resume]
        /// The rowids this run checked range by range, per table: from the first to the last (nil: to the end).
        let ranges: [String: (first: Int64, last: Int64?)]
        let cycle: Cycle

        /// Tables that this run checked and leaves with no verdict of this cycle yet.
        var unfinished: [String] { checked.filter { resume[$0] != nil } }
    }

    /// The order a sweep takes: never-checked tables first (one already started before the others), then the oldest
    /// verdicts; by name among equals.
    static func order(_ tables: [String], previous: State) -> [String] {
        func key(_ table: String) -> (Int64, Int, String) {
            (previous.verdicts[table] ?? 0, previous.resume[table] == nil ? 1 : 0, table)
        }
        return tables.sorted { key($0) < key($1) }
    }

    func run(_ db: SQLDatabase, tables: [String], now: Timestamp) throws -> Outcome {
        let started = DispatchTime.now().uptimeNanoseconds
        func elapsedMilliseconds() -> Int64 { Int64((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000) }
        var problems: [String] = []
        var checked: [String] = []
        var damaged: Set<String> = []
        var verdicts = previous.verdicts.filter { tables.contains($0.key) }
        var resume = previous.resume.filter { tables.contains($0.key) }
        var ranges: [String: (first: Int64, last: Int64?)] = [:]
        // Stricter checks of each page's cells as it is read, for the range checks.
        try? db.execute("PRAGMA cell_size_check = ON")
        let shapes = try tables.map { try RowidRangeCheck(db, table: $0, wholeUpTo: Self.rangeRows) }
        var cycle = Cycle()
        cycle.rows = shapes.reduce(0) { $0 &+ ($1.span ?? 0) }
        cycle.trees = shapes.reduce(0) { $0 + 1 + $1.indexCount }
        cycle.unprobed = shapes.filter { !$0.isWhole }.flatMap(\.unprobed)
        if deep {
            do {
                try db.forEach("PRAGMA integrity_check(\(Self.problemLimit))") { row in
                    if let line = row[0].string, line != "ok" { problems.append(Self.oneLine(line)) }
                }
            } catch let error as SQLFailure where error.isCorruption {
                problems.append(error.message)
            }
            checked = tables
            if problems.isEmpty {
                for table in tables { verdicts[table] = now.seconds }
                resume = [:]
            }
            cycle.rowsThisRun = cycle.rows
        } else {
            var rowsPerRange = Self.rangeRows
            var units = 0
            func budgetSpent() -> Bool { units > 0 && elapsedMilliseconds() >= budget.value * 1000 }
            sweep: for table in Self.order(tables, previous: previous) {
                let shape = shapes[tables.firstIndex(of: table)!]
                if budgetSpent() { break }
                if shape.isWhole {
                    let found = try Self.quickCheck(db, table: table)
                    units += 1
                    checked.append(table)
                    cycle.rowsThisRun &+= shape.span ?? 0
                    if found.isEmpty {
                        verdicts[table] = now.seconds
                    } else {
                        damaged.insert(table)
                        problems += found
                    }
                    resume[table] = nil
                    continue
                }
                var position = resume[table] ?? Resume(next: shape.lowest ?? 0, cycleStarted: now.seconds)
                checked.append(table)
                while true {
                    if budgetSpent() { break sweep }
                    let rangeStarted = elapsedMilliseconds()
                    let result = try shape.check(db, from: position.next, rows: rowsPerRange, problemLimit: Self.problemLimit)
                    units += 1
                    cycle.rowsThisRun &+= result.rows
                    ranges[table] = (ranges[table]?.first ?? position.next, result.last)
                    guard result.problems.isEmpty else {
                        // The damaged range keeps the table's place: every run finds it again until it is repaired.
                        damaged.insert(table)
                        problems += result.problems.map { "\(table): \($0)" }
                        resume[table] = position
                        break
                    }
                    guard let last = result.last, last < Int64.max else {
                        // The cycle reached the table's end: every row was checked since its start.
                        verdicts[table] = position.cycleStarted
                        resume[table] = nil
                        break
                    }
                    position.next = last + 1
                    resume[table] = position
                    if (elapsedMilliseconds() - rangeStarted) * 8 < budget.value * 1000 {
                        rowsPerRange = min(Self.maximumRangeRows, rowsPerRange * 2)
                    }
                }
            }
        }
        if tables.allSatisfy({ verdicts[$0] != nil }), let oldest = verdicts.values.min() {
            cycle.lastSeconds = max(0, now.seconds - oldest)
        }
        // A table whose check found a problem keeps its old verdict time: it is not clean as of now.
        for table in damaged { verdicts[table] = previous.verdicts[table] }
        return Outcome(pragma: deep ? "integrity_check" : "quick_check", checked: checked, tables: tables,
                       problems: problems, verdicts: verdicts, resume: resume, ranges: ranges, cycle: cycle)
    }

    /// `PRAGMA quick_check(table)`: the table's and its indexes' pages, NOT NULL and CHECK constraints.
    static func quickCheck(_ db: SQLDatabase, table: String) throws -> [String] {
        var problems: [String] = []
        do {
            try db.forEach("SELECT quick_check FROM pragma_quick_check(?)", [table]) { row in
                guard let line = row[0].string, line != "ok", problems.count < problemLimit else { return }
                problems.append("\(table): \(oneLine(line))")
            }
        } catch let error as SQLFailure where error.isCorruption {
            // Damage can stop the check itself before it reports a line.
            problems.append("\(table): \(error.message)")
        }
        return problems
    }

    /// A problem as one line: SQLite starts a report with a `*** in database main ***` line.
    static func oneLine(_ problem: String) -> String {
        problem.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("*** in database ") }.joined(separator: " ")
    }

    /// Each table's last clean verdict and unfinished cycle, from the newest recorded run that carries them (nothing
    /// before the first).
    static func previousState(_ db: SQLDatabase) throws -> State {
        var state = State()
        let decoder = JSONDecoder()
        // The newest few runs: one whose store checks could not run carries no verdicts.
        for row in try db.rows("SELECT report FROM gatehouse_health_runs ORDER BY id DESC LIMIT 5") {
            guard let json = row[0].string,
                  let report = try? decoder.decode(HealthReport.self, from: Data(json.utf8)) else { continue }
            var next: [String: Int64] = [:], cycleStarted: [String: Int64] = [:]
            for check in report.checks where check.id == "store.integrity" {
                for sample in check.samples {
                    guard let table = sample.labels["table"], sample.value.isFinite, abs(sample.value) < 9.2e18 else { continue }
                    switch sample.metric {
                    case metric: state.verdicts[table] = Int64(sample.value)
                    // A rowid past 2^53 comes back rounded: start a little before it rather than skip a row.
                    case resumeMetric: next[table] = Int64(sample.value) - Int64(sample.value.ulp)
                    case cycleStartMetric: cycleStarted[table] = Int64(sample.value)
                    default: break
                    }
                }
            }
            for (table, rowid) in next { state.resume[table] = Resume(next: rowid, cycleStarted: cycleStarted[table] ?? 0) }
            if !state.verdicts.isEmpty || !state.resume.isEmpty { break }
        }
        return state
    }
}
