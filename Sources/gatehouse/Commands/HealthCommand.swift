import Foundation
import Gatehouse

/// `gatehouse health`: every check as ok / warning / critical, with exit statuses a scheduler understands.
enum HealthCommand {
    static func make() -> CommandSpec {
        CommandSpec(
            name: "health",
            summary: "run the secret-health checks (exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN)",
            discussion: """
                Checks the store, the linking policy, and (as they are configured) Apple keys, tracked client secrets,
                the membership and the gates. The store's consistency check is swept within --sweep-budget, the
                longest unchecked first: on SQLite, small tables whole by quick_check and large ones a rowid range at
                a time; on Postgres, amcheck index by index. Each recorded run resumes where the last one stopped,
                and the check reports how much of the store a full cycle covers and how long one takes; --deep checks
                the whole store at once. On SQLite the account links (dangling accounts, unprovisioned users) are
                walked in user-id order within the same budget, recorded runs sharing one walk when the store is too
                large for one run. Exit status follows scheduler check plugins: 0 OK, 1 WARNING,
                2 CRITICAL, 3 UNKNOWN (the checks could not run). --record keeps the run for the console's history,
                and destroys the sealed rows of user deletions whose retention has ended (`users delete purge`);
                --prometheus writes a node_exporter textfile atomically.
                """,
            options: [
                .json,
                Options.prometheus.spec,
                Options.record.spec,
                Options.warnDays.spec,
                Options.critDays.spec,
                Options.expectEvery.spec,
                Options.sweepBudget.spec,
                Options.deep.spec,
            ],
            subcommands: [
                CommandSpec(name: "history", summary: "recorded runs, newest first",
                            options: [Options.limit.spec, .json], run: history),
            ],
            examples: [
                "gatehouse health --store auth.sqlite",
                "gatehouse health --record --prometheus /var/lib/node_exporter/textfile/gatehouse.prom",
            ],
            run: run
        )
    }

    static func run(_ invocation: Invocation) throws -> Int32 {
        let warn = try invocation[Options.warnDays]
        let crit = try invocation[Options.critDays]
        guard crit <= warn else { throw invocation.usage("--crit-days (\(crit)) must not exceed --warn-days (\(warn))") }
        let interval = try invocation[Options.expectEvery] ?? Seconds(3600)
        guard interval.value >= 60 else { throw invocation.usage("--expect-every must be at least 1m") }
        let budget = try invocation[Options.sweepBudget] ?? Seconds(1)
        guard budget.value <= 3600 else { throw invocation.usage("--sweep-budget must be at most 1h (it bounds one run)") }
        let store: Store
        do {
            store = try invocation.openStore()
        } catch {
            guard let error = GatehouseError.operatorFacing(error, storePath: invocation.storeDescription()) else { throw error }
            // The checks cannot run at all: UNKNOWN, as a check plugin reports it.
            invocation.output.error("gatehouse: \(error.markedDescription)")
            if invocation.json { try invocation.output.json(["status": "unknown", "error": error.message]) }
            // The textfile still says so, or alerting would only notice hours later that it went stale.
            if let path = try invocation[Options.prometheus] {
                let report = HealthReport.unknown(HealthCheck(id: "store.open", status: .unknown, summary: error.message, action: error.fix), at: .now())
                try? PrometheusTextfile.write(report, to: path, spelling: CLISpelling.spelling)
            }
            return HealthStatus.unknown.exitCode
        }
        let runner = HealthRunner()
        let report = runner.run(store, HealthContext(now: .now(), warnDays: warn, critDays: crit, deep: try invocation[Options.deep],
                                                   expectedInterval: interval, integrityBudget: budget))
        do {
            if try invocation[Options.record] {
                try runner.record(report, in: store)
                purgeExpiredDeletions(store, invocation)
            }
            if let path = try invocation[Options.prometheus] { try PrometheusTextfile.write(report, to: path, spelling: CLISpelling.spelling) }
        } catch {
            // The checks ran but their results could not be kept: the scheduler must not read this as OK.
            invocation.output.error("gatehouse: \(GatehouseError.operatorFacing(error, storePath: store.path)?.markedDescription ?? String(describing: error))")
            return HealthStatus.unknown.exitCode
        }
        if invocation.json {
            try invocation.output.json(report)
        } else {
            invocation.output.line("\(report.status.rawValue.uppercased()): \(summary(report)) (\(report.durationMilliseconds) ms)")
            for check in report.checks {
                invocation.output.line("  [\(check.status.rawValue)] \(check.id): \(check.summary)")
                if let action = check.action, check.status != .ok { invocation.output.line("      do: \(action)") }
            }
        }
        return report.status.exitCode
    }

    /// The timer's recorded run also purges expired user-deletion copies, so the retention promised is kept without a
    /// unit of its own. A failed purge is said on stderr and does not change the health result (the next run retries).
    static func purgeExpiredDeletions(_ store: Store, _ invocation: Invocation) {
        do {
            guard try store.db.tableExists("gatehouse_user_deletions") else { return }
            _ = try UserDeletionRecords(store: store).purge(actor: try invocation.actor)
        } catch {
            invocation.output.error("gatehouse: purging expired user deletions failed (run `gatehouse users delete purge`): \(GatehouseError.operatorFacing(error, storePath: store.path)?.markedDescription ?? String(describing: error))")
        }
    }

    static func summary(_ report: HealthReport) -> String {
        let counts = HealthStatus.allCases.compactMap { status -> String? in
            let count = report.checks.filter { $0.status == status }.count
            return count == 0 ? nil : "\(count) \(status.rawValue)"
        }
        return counts.joined(separator: ", ")
    }

    static func history(_ invocation: Invocation) throws -> Int32 {
        let limit = try invocation[Options.limit]
        let runs = try HealthRunner.history(invocation.openStore(), limit: limit)
        if invocation.json { try invocation.output.json(runs); return 0 }
        if runs.isEmpty { invocation.output.line("no recorded runs (gatehouse health --record records one)"); return 0 }
        invocation.output.table(["AT", "STATUS", "MS", "CHECKS"], runs.map { [$0.at.iso8601, $0.status.rawValue, String($0.durationMilliseconds), summary($0)] })
        return 0
    }
}

extension HealthCommand {
    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let critDays: Option<Int> = .integer("crit-days", "N", "critical this many days before an expiry (default 14)", default: 14, range: 0...365)
        static let deep: Option<Bool> = .flag("deep", "check the whole store at once instead of sweeping (SQLite: PRAGMA integrity_check; Postgres: every index; slower)")
        static let expectEvery: Option<Seconds?> = .duration("expect-every", "DURATION", "how often the timer runs (default 1h); a recorded run older than twice this warns")
        static let limit: Option<Int> = .integer("limit", "N", "at most N runs (default 20)", default: 20, range: 1...1000)
        static let prometheus: Option<String?> = .text("prometheus", "FILE", "also write the node_exporter textfile FILE (atomically)")
        static let record: Option<Bool> = .flag("record", "store this run for the console's history and the stopped-timer check")
        static let sweepBudget: Option<Seconds?> = .duration("sweep-budget", "DURATION", "start no new table, rowid range or index of the consistency sweep after this long (default 1s; one at least)")
        static let warnDays: Option<Int> = .integer("warn-days", "N", "warn this many days before an expiry (default 28)", default: 28, range: 1...365)
    }
}
