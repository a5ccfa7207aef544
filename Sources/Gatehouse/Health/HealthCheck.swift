/// The verdict of one check, in the terms scheduler check plugins use (and their exit statuses).
public enum HealthStatus: String, Sendable, Codable, Comparable, CaseIterable {
    case ok, warning, critical, unknown

    /// The exit status a scheduler's check plugin gives: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
    public var exitCode: Int32 {
        switch self {
        case .ok: return 0
        case .warning: return 1
        case .critical: return 2
        case .unknown: return 3
        }
    }

    /// Severity order for "the worst of": ok < warning < unknown < critical.
    var severity: Int {
        switch self {
        case .ok: return 0
        case .warning: return 1
        case .unknown: return 2
        case .critical: return 3
        }
    }

    public static func < (lhs: HealthStatus, rhs: HealthStatus) -> Bool { lhs.severity < rhs.severity }
}

/// One Prometheus sample a check contributes beyond its status (an expiry time, say).
public struct HealthSample: Sendable, Codable, Equatable {
    public let metric: String
    public let labels: [String: String]
    public let value: Double
    public let help: String

    public init(metric: String, labels: [String: String] = [:], value: Double, help: String) {
        self.metric = metric
        self.labels = labels
        self.value = value
        self.help = help
    }
}

/// A deadline a check watches, as the number the console charts against its lines: days left (an alarm when it
/// falls below a line) or an age in days (an alarm when it rises above). The check that decides the status gives
/// the number and its thresholds, so the chart and the status never disagree.
public struct HealthGauge: Sendable, Codable, Equatable {
    /// In days (fractional).
    public let value: Double
    /// The warning line, in days; nil when the check has none.
    public let warning: Double?
    /// The critical line, in days; nil when the check has none.
    public let critical: Double?
    /// True for days left (lower is worse), false for an age (higher is worse).
    public let lowerIsWorse: Bool

    public init(value: Double, warning: Double?, critical: Double?, lowerIsWorse: Bool) {
        self.value = value
        self.warning = warning
        self.critical = critical
        self.lowerIsWorse = lowerIsWorse
    }

    /// Days from `now` to `time` (negative once it has passed), with its lines.
    public static func daysLeft(until time: Timestamp, now: Timestamp, warning: Double, critical: Double) -> HealthGauge {
        HealthGauge(value: Double(time.milliseconds - now.milliseconds) / 86_400_000, warning: warning, critical: critical, lowerIsWorse: true)
    }
}

/// The result of one check: its status, a one-line reason, and what to do about it.
public struct HealthCheck: Sendable, Codable, Equatable {
    /// A stable id, used as the Prometheus `check` label (`store.integrity`, `policy.autolink`).
    public let id: String
    public let status: HealthStatus
    /// One line: what was found.
    public let summary: String
    /// What to do about it; nil when there is nothing to do.
    public let action: String?
    public let samples: [HealthSample]
    /// What a recorded run hands to the next for a check that sweeps (where a walk stopped, its counts so far):
    /// kept with the run, not exported as samples. Nil for most checks.
    public let carry: [String: String]?
    /// The deadline the check watches, recorded with each run for the console's charts; nil for most checks.
    public let gauge: HealthGauge?

    public init(id: String, status: HealthStatus, summary: String, action: String? = nil, samples: [HealthSample] = [],
                carry: [String: String]? = nil, gauge: HealthGauge? = nil) {
        self.id = id
        self.status = status
        self.summary = summary
        self.action = action
        self.samples = samples
        self.carry = carry
        self.gauge = gauge
    }
}

/// What the checks need besides the store.
public struct HealthContext: Sendable {
    public let now: Timestamp
    /// Days before an expiry that make a warning, and a critical.
    public let warnDays: Int
    public let critDays: Int
    /// Check the whole store at once (SQLite: `PRAGMA integrity_check`; Postgres: every index) instead of the sweep.
    public let deep: Bool
    /// How long the consistency sweep may keep starting units (`IntegritySweep`, `PostgresIndexCheck`); at least one is checked.
    public let integrityBudget: Seconds
    /// How often the timer is expected to run; a recorded run older than twice this is a warning.
    public let expectedInterval: Seconds

    public init(now: Timestamp, warnDays: Int = 28, critDays: Int = 14, deep: Bool = false, expectedInterval: Seconds = Seconds(3600),
                integrityBudget: Seconds = Seconds(1)) {
        self.now = now
        self.integrityBudget = integrityBudget
        self.warnDays = warnDays
        self.critDays = critDays
        self.deep = deep
        self.expectedInterval = expectedInterval
    }

    /// The status of something that expires at `time`: critical when expired or within `critDays`.
    public func expiryStatus(_ time: Timestamp) -> HealthStatus {
        let days = Double(time.milliseconds - now.milliseconds) / 86_400_000
        if days < Double(critDays) { return .critical }
        if days < Double(warnDays) { return .warning }
        return .ok
    }
}

/// A group of checks that belongs to one feature. Each feature provides its own and registers it in
/// `HealthRunner.providers`.
public protocol HealthCheckProvider: Sendable {
    /// A name for the group, used when the whole group fails (`store`, `policy`, ...).
    var group: String { get }
    func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck]
    /// Starts the checks and returns what gives their results. The default runs `checks` at once; a provider
    /// with a whole-store scan starts it on a second connection, so that the next providers run meanwhile.
    func start(_ store: Store, _ context: HealthContext) -> () throws -> [HealthCheck]
}

extension HealthCheckProvider {
    public func start(_ store: Store, _ context: HealthContext) -> () throws -> [HealthCheck] {
        let result = Result { try checks(store, context) }
        return { try result.get() }
    }
}
