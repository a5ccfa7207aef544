import Foundation
import Storage

/// A complete health run: every check, the worst status, and how long it took.
public struct HealthReport: Sendable, Codable {
    public let at: Timestamp
    public let status: HealthStatus
    public let durationMilliseconds: Int
    public let checks: [HealthCheck]
    public let version: String

    /// A report of one check that says the run could not happen (the store cannot be opened).
    public static func unknown(_ check: HealthCheck, at time: Timestamp) -> HealthReport {
        HealthReport(at: time, status: .unknown, durationMilliseconds: 0, checks: [check], version: GatehouseVersion.current)
    }
}

/// Runs every feature's checks and records runs for the console's history.
///
///     let report = HealthRunner().run(store, HealthContext(now: .now()))
///     exit(report.status.exitCode)
public struct HealthRunner: Sendable {
    /// Every feature's checks, in the order they are reported.
    public static let providers: [HealthCheckProvider] = [
        StoreHealthChecks(),
        AccountHealthChecks(),
        UserSearchHealthCheck(),
        PolicyHealthChecks(),
        AppleHealthChecks(isAppleLive: { store, now in
            // Enabled on some platform: live, or lapsed because a requirement (such as the key) went away.
            try GateStore(store: store).board(now: now).gates.contains { $0.provider == .apple && ($0.state == .live || $0.state == .lapsed) }
        }),
        AppleTransferHealthCheck(),
        GoogleRISCHealthCheck(),
        GateHealthChecks(),
        ApprovalHealthCheck(),
        TimerHealthCheck(),
    ]

    public let providers: [HealthCheckProvider]

    public init(providers: [HealthCheckProvider] = HealthRunner.providers) { self.providers = providers }

    /// Runs every check. A provider that throws yields one UNKNOWN check naming it, never a crash.
    public func run(_ store: Store, _ context: HealthContext) -> HealthReport {
        let started = DispatchTime.now().uptimeNanoseconds
        var checks: [HealthCheck] = []
        // Every provider starts before any result is collected: a long scan started first overlaps the rest.
        let pending = providers.map { ($0, $0.start(store, context)) }
        for (provider, results) in pending {
            do {
                checks += try results()
            } catch {
                checks.append(HealthCheck(id: "\(provider.group).error", status: .unknown,
                                          summary: "the \(provider.group) checks could not run: \(Self.describe(error, storePath: store.path))",
                                          action: "run \(command: .health) by hand and fix what it reports"))
            }
        }
        let worst = checks.map(\.status).max() ?? .ok
        let elapsed = Int((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
        return HealthReport(at: context.now, status: worst, durationMilliseconds: elapsed, checks: checks, version: GatehouseVersion.current)
    }

    /// Stores a run for the history (`--record`).
    public func record(_ report: HealthReport, in store: Store) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(report), as: UTF8.self)
        try store.db.write {
            try store.db.execute("INSERT INTO gatehouse_health_runs (at, status, duration_ms, report) VALUES (?, ?, ?, ?)",
                                 [report.at.iso8601, report.status.rawValue, report.durationMilliseconds, json])
            try HealthGaugeHistory.record(report, in: store.db)
        }
    }

    /// Recorded runs, newest first.
    public static func history(_ store: Store, limit: Int = 200) throws -> [HealthReport] {
        try store.db.rows("SELECT report FROM gatehouse_health_runs ORDER BY id DESC LIMIT ?", [limit]).compactMap { row in
            try? JSONDecoder().decode(HealthReport.self, from: Data((row["report"].string ?? "").utf8))
        }
    }

    /// One check's failure in words: Gatehouse's own, a storage failure translated (SQL and bound values never shown).
    static func describe(_ error: Error, storePath: String) -> String {
        GatehouseError.operatorFacing(error, storePath: storePath)?.message ?? String(describing: error)
    }
}
