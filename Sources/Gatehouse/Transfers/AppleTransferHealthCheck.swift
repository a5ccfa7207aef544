/// `apple.transfer`: an Apple app transfer's deadline cannot pass unnoticed. While work is not applied, it warns at
/// `AppleTransfer.warningDays` days left and is critical at `AppleTransfer.criticalDays`; the days left are a metric.
public struct AppleTransferHealthCheck: HealthCheckProvider {
    public let group = "apple"
    public init() {}

    public static let metric = "gatehouse_apple_transfer_days_left"

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        let transfers = AppleTransferStore(store: store)
        guard try transfers.latest() != nil else {
            return [HealthCheck(id: "apple.transfer", status: .ok, summary: "no Apple app transfer is recorded")]
        }
        let status = try transfers.status(now: context.now)
        let sample = HealthSample(metric: Self.metric, labels: ["to_team": status.toTeam], value: Double(status.daysLeft),
                                  help: "Days left before Apple's migration endpoints stop answering for the app transfer (60 days after it).")
        let gauge = HealthGauge(value: Double(status.daysLeft), warning: Double(AppleTransfer.warningDays),
                                critical: Double(AppleTransfer.criticalDays), lowerIsWorse: true)
        let counts = status.counts
        let progress = "\(counts.applied) of \(counts.accounts) Apple account(s) rewritten, \(counts.collected) collected, \(counts.exchanged) exchanged, \(counts.failed) failed"
        if status.stage == "applied" {
            // Nothing is left to do before the deadline: the chart of its days left ends here.
            return [HealthCheck(id: "apple.transfer", status: .ok, summary: "the transfer to team \(status.toTeam) is applied: \(progress)", samples: [sample])]
        }
        if status.stage == "exported" {
            // The sending side's part is done; the recipient's store, which applies, has this check too.
            return [HealthCheck(id: "apple.transfer", status: .ok,
                                summary: "the transfer identifiers for team \(status.toTeam) are exported to the recipient's store, which applies them: \(progress)", samples: [sample])]
        }
        if status.stage == "expired" {
            return [HealthCheck(id: "apple.transfer", status: .critical,
                                summary: "the transfer to team \(status.toTeam) closed on \(status.deadline) with work not applied: \(progress)",
                                action: "TN3159: transfer the app back to the sending team and start again (ops/runbooks/apple-transfer.md)", samples: [sample], gauge: gauge)]
        }
        let words = "\(status.daysLeft) day(s) left to migrate the Apple users to team \(status.toTeam) (stage \(status.stage)): \(progress)"
        let severity: HealthStatus = status.daysLeft <= AppleTransfer.criticalDays ? .critical : status.daysLeft <= AppleTransfer.warningDays ? .warning : .ok
        return [HealthCheck(id: "apple.transfer", status: severity, summary: words,
                            action: severity == .ok ? nil : "next: \(status.next) (ops/runbooks/apple-transfer.md)", samples: [sample], gauge: gauge)]
    }
}
