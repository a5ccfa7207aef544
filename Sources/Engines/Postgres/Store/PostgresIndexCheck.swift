import Dispatch
import Foundation
import Gatehouse
import Storage

/// Postgres's counterpart of SQLite's quick_check sweep, where the server offers one: amcheck's `bt_index_check` on
/// the B-tree indexes of Better Auth's tables (the user, account, session and verification tables Gatehouse reads
/// and merges), one index after another, the longest unchecked first, until the run's budget is spent (one index at
/// least), so a run takes about the same time on a store of any size; recorded runs carry each index's last clean
/// verdict forward, and the next run goes on with the indexes that have waited longest. `--deep` checks every index
/// in one run. Each index is read once, without locking out writers (`bt_index_check` takes the lock a `SELECT`
/// takes). Without the extension the check says how to get it; a role that may not run it is told what to grant.
struct PostgresIndexCheck: Sendable {
    /// One sample per index: when its last clean verdict was reached (labels `table` and `index`).
    static let metric = StoreHealthChecks.consistencyCheckedMetric

    /// How the check ended, for `StoreHealthChecks` to put into words.
    enum Outcome: Equatable, Sendable {
        /// amcheck is not installed in the database.
        case unavailable
        /// The role may not execute `bt_index_check`.
        case notPermitted(function: String)
        /// Every index this run checked was clean.
        case clean(Sweep)
        /// An index failed its check: its name and the server's message.
        case corrupt(index: String, message: String, Sweep)
    }

    /// What a run checked, of what, and each index's verdict after it.
    struct Sweep: Equatable, Sendable {
        /// Indexes checked this run, in order.
        var checked: [String] = []
        /// Every B-tree index of the tables, with its table.
        var indexes: [(table: String, index: String)] = []
        /// Each index's last clean verdict (Unix seconds) after this run.
        var verdicts: [String: Int64] = [:]
        /// Every index was checked clean within this many seconds (now less the oldest verdict), when each has one.
        var cycleSeconds: Int64? {
            guard !indexes.isEmpty, indexes.allSatisfy({ verdicts[$0.index] != nil }), let oldest = verdicts.values.min() else { return nil }
            return max(0, now - oldest)
        }
        var now: Int64 = 0

        static func == (a: Sweep, b: Sweep) -> Bool {
            a.checked == b.checked && a.indexes.map(\.index) == b.indexes.map(\.index) && a.verdicts == b.verdicts && a.now == b.now
        }
    }

    let tables: [String]
    /// Start no new index once this much time has passed (one is always checked).
    var budget = Seconds(1)
    /// Every index in one run.
    var deep = false
    /// Each index's last clean verdict, from the latest recorded run.
    var previous: [String: Int64] = [:]

    init(schema: AuthSchema) {
        tables = [schema.user.name, schema.account.name, schema.session.name, schema.verification?.name].compactMap { $0 }
    }

    /// Runs the checks on `db`, one statement per index (no transaction for a corrupt index to abort).
    func run(_ db: SQLDatabase, now: Timestamp) throws -> Outcome {
        let started = DispatchTime.now().uptimeNanoseconds
        guard let namespace = try db.row("""
            SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'amcheck'
            """)?[0].string else { return .unavailable }
        let function = "\(SQL.quote(namespace)).bt_index_check"
        var sweep = Sweep()
        sweep.now = now.seconds
        for table in tables {
            let indexes = try db.rows("""
                SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
                WHERE i.indrelid = to_regclass(?) AND am.amname = 'btree' AND i.indisvalid AND i.indisready ORDER BY 1
                """, [SQL.quote(table)]).compactMap { $0[0].string }
            sweep.indexes += indexes.map { (table, $0) }
        }
        let names = Set(sweep.indexes.map(\.index))
        sweep.verdicts = previous.filter { names.contains($0.key) }
        // The longest unchecked first; by table and name among equals.
        let order = sweep.indexes.sorted { (previous[$0.index] ?? 0, $0.table, $0.index) < (previous[$1.index] ?? 0, $1.table, $1.index) }
        for (_, index) in order {
            let elapsed = Int64((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
            if !deep && !sweep.checked.isEmpty && elapsed >= budget.value * 1000 { break }
            do {
                try db.execute("SELECT \(function)(CAST(? AS regclass))", [SQL.quote(index)])
            } catch let error as PostgresError where error.sqlState == "42501" {
                return .notPermitted(function: "\(function)(regclass)")
            } catch let error as PostgresError where error.sqlState.map({ $0.hasPrefix("XX") }) ?? false {
                return .corrupt(index: index, message: error.message, sweep)
            }
            sweep.checked.append(index)
            sweep.verdicts[index] = now.seconds
        }
        return .clean(sweep)
    }

    /// Each index's last clean verdict, from the newest recorded run that carries them (nothing before the first).
    static func previousVerdicts(_ db: SQLDatabase) throws -> [String: Int64] {
        var verdicts: [String: Int64] = [:]
        let decoder = JSONDecoder()
        for row in try db.rows("SELECT report FROM gatehouse_health_runs ORDER BY id DESC LIMIT 5") {
            guard let json = row[0].string,
                  let report = try? decoder.decode(HealthReport.self, from: Data(json.utf8)) else { continue }
            for check in report.checks where check.id == "store.integrity" {
                for sample in check.samples where sample.metric == metric {
                    if let index = sample.labels["index"] { verdicts[index] = Int64(sample.value) }
                }
            }
            if !verdicts.isEmpty { break }
        }
        return verdicts
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
        case .clean(let sweep):
            let total = sweep.indexes.count
            if sweep.checked.count == total {
                return HealthCheck(id: "store.integrity", status: .ok,
                                   summary: "amcheck bt_index_check: ok on \(total) index(es) of Better Auth's tables" + note, samples: samples(sweep))
            }
            var summary = "amcheck bt_index_check: ok on \(sweep.checked.joined(separator: ", ")) (\(sweep.checked.count) of \(total) index(es) of Better Auth's tables this run; "
            let unchecked = sweep.indexes.filter { sweep.verdicts[$0.index] == nil }.count
            if let seconds = sweep.cycleSeconds {
                summary += "every index was checked clean within the last \(Seconds(seconds)))"
            } else {
                summary += "\(unchecked) not checked yet: later recorded runs check them, \(field: .deep) checks all)"
            }
            let perRun = max(1, sweep.checked.count)
            summary += "; a full cycle is \(total) index(es), about \((total + perRun - 1) / perRun) run(s) at this run's pace"
            return HealthCheck(id: "store.integrity", status: .ok, summary: summary + note, samples: samples(sweep))
        case .corrupt(let index, let message, let sweep):
            return HealthCheck(id: "store.integrity", status: .critical,
                               summary: "amcheck bt_index_check found index \(index) corrupt: \(message.prefix(200))" + note,
                               action: "REINDEX INDEX CONCURRENTLY \(SQL.quote(index)) after a backup; check the server's storage and logs",
                               samples: samples(sweep))
        }
    }

    /// Each index's verdict, and how much a full cycle covers and takes, as Prometheus samples.
    static func samples(_ sweep: Sweep) -> [HealthSample] {
        var samples = sweep.indexes.compactMap { entry -> HealthSample? in
            sweep.verdicts[entry.index].map {
                HealthSample(metric: metric, labels: ["table": entry.table, "index": entry.index], value: Double($0),
                             help: "When amcheck's bt_index_check last found the index clean.")
            }
        }
        let perRun = max(1, sweep.checked.count)
        samples.append(HealthSample(metric: "gatehouse_store_integrity_cycle_indexes", value: Double(sweep.indexes.count),
                                    help: "Indexes a full cycle of amcheck's bt_index_check checks."))
        samples.append(HealthSample(metric: "gatehouse_store_integrity_cycle_runs", value: Double((sweep.indexes.count + perRun - 1) / perRun),
                                    help: "Runs a full cycle of the sweep takes at this run's pace."))
        if let seconds = sweep.cycleSeconds {
            samples.append(HealthSample(metric: "gatehouse_store_integrity_cycle_seconds", value: Double(seconds),
                                        help: "Every index was checked clean within this many seconds (now less the oldest verdict)."))
        }
        return samples
    }
}
