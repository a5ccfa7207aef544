/// The gate's health: the membership's renewal (warning from 30 days before, critical from 7), App Store
/// Review Guideline 4.8 (Google live on ios without Apple is critical), and every gate (lapsed is critical).
/// Blocked and ready gates are reported ok: before Apple is live, the gate is reported, not alarmed.
public struct GateHealthChecks: HealthCheckProvider {
    /// The group name, used when the whole group fails.
    public let group = "gates"
    /// The checks; stateless.
    public init() {}

    /// The Prometheus metric carrying the membership's renewal date.
    public static let membershipMetric = "gatehouse_membership_expiry_timestamp_seconds"

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        let board = try GateStore(store: store).board(now: context.now)
        return [membership(board), guideline48(board)] + board.gates.map(gate)
    }

    func membership(_ board: GateBoard) -> HealthCheck {
        guard let renewal = board.membership else {
            return HealthCheck(id: "gates.membership", status: .ok,
                               summary: "no Apple Developer Program membership is declared met: Apple is blocked, nothing to renew")
        }
        let status: HealthStatus
        switch renewal.level {
        case .ok: status = .ok
        case .warning: status = .warning
        case .critical, .expired: status = .critical
        }
        let sample = HealthSample(metric: Self.membershipMetric, labels: ["provider": "apple"], value: Double(renewal.renewsAt.seconds),
                                  help: "When the Apple Developer Program membership must be renewed (Unix time).")
        let gauge = HealthGauge.daysLeft(until: renewal.renewsAt, now: board.at, warning: Double(MembershipRenewal.warningDays),
                                         critical: Double(MembershipRenewal.criticalDays))
        return HealthCheck(id: "gates.membership", status: status, summary: renewal.message, action: renewal.action, samples: [sample], gauge: gauge)
    }

    func guideline48(_ board: GateBoard) -> HealthCheck {
        let verdict = board.guideline48
        guard verdict.breached else { return HealthCheck(id: "gates.guideline_4_8", status: .ok, summary: verdict.message) }
        let apple = board.gate(.apple, .ios)
        let fix = apple.state == .lapsed || apple.state == .blocked
            ? "restore Apple on ios (\(apple.unmetDescription)), or disable Google there: \(run: .gatesDisable, "google", .option(.platform, "ios"), .option(.reason, "\"...\"")))"
            : "enable Apple on ios (\(run: .gatesEnable, "apple", .option(.platform, "ios"), .option(.reason, "\"...\""))), or disable Google there"
        return HealthCheck(id: "gates.guideline_4_8", status: .critical, summary: verdict.message, action: fix)
    }

    func gate(_ gate: GateStatus) -> HealthCheck {
        let id = "gates.\(gate.provider.rawValue).\(gate.platform.rawValue)"
        switch gate.state {
        case .lapsed:
            return HealthCheck(id: id, status: .critical,
                               summary: "\(gate.prose) is enabled but has lapsed: \(gate.unmetDescription)",
                               action: (gate.fixes + ["or disable it: \(run: .gatesDisable, "\(gate.provider.rawValue)", .option(.platform, gate.platform.rawValue), .option(.reason, "\"...\"")))"]).joined(separator: "; "))
        case .live:
            return HealthCheck(id: id, status: .ok, summary: "\(gate.prose) is live")
        case .ready:
            return HealthCheck(id: id, status: .ok, summary: "\(gate.prose) is ready (every requirement met) but not enabled")
        case .blocked:
            return HealthCheck(id: id, status: .ok, summary: "\(gate.prose) is blocked by \(gate.unmetDescription)")
        }
    }
}
