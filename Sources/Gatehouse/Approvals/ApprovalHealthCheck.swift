/// `console.approvals`: which actions need a second admin, how many requests wait, and a warning for a day after an
/// action that needs approval was run from the CLI on the host instead (the break-glass path, `approval.bypassed`).
public struct ApprovalHealthCheck: HealthCheckProvider {
    public let group = "console"
    public init() {}

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        let approvals = ApprovalStore(store: store)
        let settings = try approvals.settings()
        if let bypass = try approvals.latestBypass(since: context.now.adding(seconds: -ApprovalStore.bypassWarning.value)) {
            return [HealthCheck(id: "console.approvals", status: .warning,
                                summary: "\(bypass.action) ran from the CLI at \(bypass.at.iso8601) by \(bypass.actor) without a second admin's approval (approval: bypassed (cli))",
                                action: "check it was meant: the audit log's approval.bypassed entries say who ran what; this warning clears 24 h after the bypass")]
        }
        guard !settings.actions.isEmpty else {
            return [HealthCheck(id: "console.approvals", status: .ok, summary: "no action needs a second admin's approval")]
        }
        let pending = try approvals.pendingCount(now: context.now)
        return [HealthCheck(id: "console.approvals", status: .ok,
                            summary: "\(settings.actions.count) action(s) need a second admin's approval; \(pending) request(s) waiting")]
    }
}
