/// The linking policy: email-based takeover and a linkSocial switch left on indefinitely.
public struct PolicyHealthChecks: HealthCheckProvider {
    public let group = "policy"
    public init() {}

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        let snapshot = try PolicyStore(store: store).snapshot(now: context.now)
        var checks: [HealthCheck] = []
        let autoLink = snapshot.risks.filter { $0.key == PolicyKey.autoLinkAllowDifferentEmails.rawValue }
        if let risk = autoLink.first {
            checks.append(HealthCheck(id: "policy.autolink_different_emails", status: .critical, summary: risk.message,
                                      action: "\(run: .policySet, "autoLink.allowDifferentEmails false", .option(.reason, "'...'"))"))
        } else {
            checks.append(HealthCheck(id: "policy.autolink_different_emails", status: .ok, summary: "auto-link requires matching emails"))
        }
        for risk in snapshot.risks where risk.key != PolicyKey.autoLinkAllowDifferentEmails.rawValue {
            checks.append(HealthCheck(id: "policy.\(risk.key)", status: risk.severity == .critical ? .critical : .warning, summary: risk.message,
                                      action: "review the key with \(command: .policyShow)"))
        }
        let switchKey = PolicyKey.linkSocialAllowDifferentEmails.rawValue
        if let entry = snapshot.entries.first(where: { $0.key == switchKey }), entry.value == .bool(true) {
            if let reverts = entry.revertsAt {
                checks.append(HealthCheck(id: "policy.linksocial_switch", status: .ok,
                                          summary: "linkSocial.allowDifferentEmails is on until \(reverts.iso8601) (\(entry.reason ?? "no reason"))"))
            } else {
                checks.append(HealthCheck(id: "policy.linksocial_switch", status: .warning,
                                          summary: "linkSocial.allowDifferentEmails is on with no expiry (set by \(entry.setBy ?? "?"))",
                                          action: "give it an end: \(run: .policySet, "linkSocial.allowDifferentEmails true", .option(.for, "7d"), .option(.reason, "'...'"))"))
            }
        } else {
            checks.append(HealthCheck(id: "policy.linksocial_switch", status: .ok, summary: "linkSocial.allowDifferentEmails is off"))
        }
        return checks
    }
}
