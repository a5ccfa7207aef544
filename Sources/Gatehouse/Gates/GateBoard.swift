/// Where a provider stands on a platform.
public enum GateState: String, Sendable, Codable, CaseIterable {
    /// Not enabled; at least one requirement is unmet.
    case blocked
    /// Not enabled; every requirement is met, so it may be enabled.
    case ready
    /// Enabled, and every requirement is met: the app offers it.
    case live
    /// Enabled, but a requirement has since lapsed (the membership expired, the key was revoked…).
    case lapsed
}

/// One requirement as it stands on one platform.
public struct GateRequirementStatus: Sendable, Codable, Equatable {
    /// Whether it is met, and if not, why not.
    public enum Condition: String, Sendable, Codable {
        case met
        /// Declared unmet, or (derived) not satisfied by the store.
        case unmet
        /// Operator-declared, never declared: unmet.
        case undeclared
        /// Declared met with an expiry that has passed.
        case expired
    }

    /// The requirement.
    public let requirement: GateRequirement
    /// Operator-declared or derived.
    public let source: GateRequirement.Source
    /// Met, unmet, undeclared or expired.
    public let condition: Condition
    /// What is known, in words.
    public let detail: String
    /// The declaration's evidence, scope (`all` or a platform), expiry, author and time; nil for derived ones.
    public let evidence: String?
    /// `all` or the platform the declaration in force was made for.
    public let declaredFor: String?
    /// When a met declaration stops being met.
    public let expiresAt: Timestamp?
    /// Who declared it, and when.
    public let setBy: String?
    public let setAt: Timestamp?
    /// How to meet it; nil when it is met.
    public let fix: String?

    /// Whether it counts as met now.
    public var isMet: Bool { condition == .met }
}

/// One provider on one platform.
public struct GateStatus: Sendable, Codable, Equatable {
    /// The provider.
    public let provider: GateProvider
    /// The platform.
    public let platform: GatePlatform
    /// Blocked, ready, live or lapsed.
    public let state: GateState
    /// Whether an operator enabled it (live or lapsed).
    public let enabled: Bool
    /// When it was last enabled or disabled, by whom and why; nil when never.
    public let since: Timestamp?
    public let changedBy: String?
    public let reason: String?
    /// Every requirement that applies on the platform.
    public let requirements: [GateRequirementStatus]
    /// The requirements not met, by name.
    public let unmet: [String]
    /// The earliest expiry among its met requirements.
    public let nextExpiry: Timestamp?

    /// `apple/ios`.
    public var name: String { "\(provider.rawValue)/\(platform.rawValue)" }
    /// `apple on ios`, for prose.
    public var prose: String { "\(provider.rawValue) on \(platform.rawValue)" }

    /// The unmet requirements with their conditions: `membership (expired), p8_key (unmet)`.
    public var unmetDescription: String {
        requirements.filter { !$0.isMet }.map { "\($0.requirement.rawValue) (\($0.condition.rawValue))" }.joined(separator: ", ")
    }

    /// The fixes of the unmet requirements, one a line.
    public var fixes: [String] { requirements.filter { !$0.isMet }.compactMap(\.fix) }
}

/// The gate board: every provider × platform with its state, the membership's renewal, and App Store Review
/// Guideline 4.8. Computed on read from the declarations, the enablements, the key ring and the provider
/// configuration, at a given time (so tests inject the clock).
public struct GateBoard: Sendable, Codable, Equatable {
    /// The time the board is computed for.
    public let at: Timestamp
    /// Provider-major, platform order: apple/ios, apple/desktop, apple/web, google/ios, …
    public let gates: [GateStatus]
    /// The membership's renewal; nil when no membership is declared met.
    public let membership: MembershipRenewal?
    /// Whether the board complies with App Store Review Guideline 4.8.
    public let guideline48: Guideline48.Verdict
    /// The earliest expiry on the board.
    public let nextExpiry: Timestamp?

    /// The gate of a provider on a platform.
    public func gate(_ provider: GateProvider, _ platform: GatePlatform) -> GateStatus {
        gates.first { $0.provider == provider && $0.platform == platform }!
    }

    /// Computes the board.
    static func compute(_ facts: GateFacts, now: Timestamp) -> GateBoard {
        var gates: [GateStatus] = []
        for provider in GateProvider.allCases {
            for platform in GatePlatform.allCases {
                let requirements = provider.requirements(on: platform).map { status($0, on: platform, facts, now: now) }
                let enablement = facts.enablement(provider, platform)
                let enabled = enablement?.enabled ?? false
                let allMet = requirements.allSatisfy(\.isMet)
                let state: GateState = enabled ? (allMet ? .live : .lapsed) : (allMet ? .ready : .blocked)
                let expiries = requirements.filter(\.isMet).compactMap(\.expiresAt)
                gates.append(GateStatus(provider: provider, platform: platform, state: state, enabled: enabled, since: enablement?.since,
                                        changedBy: enablement?.changedBy, reason: enablement?.reason, requirements: requirements,
                                        unmet: requirements.filter { !$0.isMet }.map(\.requirement.rawValue), nextExpiry: expiries.min()))
            }
        }
        let membership = facts.declaration(.membership, on: .ios).flatMap { MembershipRenewal($0, now: now) }
        return GateBoard(at: now, gates: gates, membership: membership, guideline48: Guideline48.verdict(gates),
                         nextExpiry: gates.compactMap(\.nextExpiry).min())
    }

    static func status(_ requirement: GateRequirement, on platform: GatePlatform, _ facts: GateFacts, now: Timestamp) -> GateRequirementStatus {
        switch requirement.source {
        case .operator: return declared(requirement, on: platform, facts, now: now)
        case .derived: return derived(requirement, on: platform, facts)
        }
    }

    static func declared(_ requirement: GateRequirement, on platform: GatePlatform, _ facts: GateFacts, now: Timestamp) -> GateRequirementStatus {
        guard let declaration = facts.declaration(requirement, on: platform) else {
            return GateRequirementStatus(requirement: requirement, source: .operator, condition: .undeclared, detail: "not declared yet",
                                         evidence: nil, declaredFor: nil, expiresAt: nil, setBy: nil, setAt: nil,
                                         fix: requirement.howToMeet(platform: platform))
        }
        let condition: GateRequirementStatus.Condition
        let detail: String
        if !declaration.met {
            condition = .unmet
            detail = "declared unmet by \(declaration.setBy) at \(declaration.setAt.iso8601)"
        } else if let expiry = declaration.expiresAt, expiry <= now {
            condition = .expired
            detail = "expired at \(expiry.iso8601) (declared met by \(declaration.setBy) at \(declaration.setAt.iso8601))"
        } else {
            condition = .met
            detail = "declared met by \(declaration.setBy) at \(declaration.setAt.iso8601)" + (declaration.expiresAt.map { "; expires \($0.iso8601)" } ?? "")
        }
        var fix: String?
        if condition == .expired && requirement == .membership {
            fix = "renew the membership, then: \(run: .gatesSet, "apple membership met", .option(.evidence, "\"...\""), .option(.expires, "<next renewal date>"))"
        } else if condition != .met {
            fix = requirement.howToMeet(platform: platform)
        }
        return GateRequirementStatus(requirement: requirement, source: .operator, condition: condition, detail: detail,
                                     evidence: declaration.evidence, declaredFor: declaration.scope, expiresAt: declaration.expiresAt,
                                     setBy: declaration.setBy, setAt: declaration.setAt, fix: fix)
    }

    static func derived(_ requirement: GateRequirement, on platform: GatePlatform, _ facts: GateFacts) -> GateRequirementStatus {
        func make(_ met: Bool, _ detail: String, fix: String? = nil) -> GateRequirementStatus {
            GateRequirementStatus(requirement: requirement, source: .derived, condition: met ? .met : .unmet, detail: detail,
                                  evidence: nil, declaredFor: nil, expiresAt: nil, setBy: nil, setAt: nil,
                                  fix: met ? nil : fix ?? requirement.howToMeet(platform: platform))
        }
        switch requirement {
        case .p8Key:
            if let active = facts.keys.first(where: { $0.state == .active }) {
                return make(true, "key \(active.keyID) is active (team \(active.teamID))")
            }
            if facts.keys.isEmpty { return make(false, "the key ring is empty") }
            let listed = facts.keys.map { key in
                "\(key.keyID) \(key.state.rawValue)" + (key.revokedAt.map { " at \($0.iso8601)" } ?? "")
            }.joined(separator: ", ")
            let activatable = facts.keys.first { $0.state == .staged || $0.state == .retired }
            return make(false, "no active key (\(listed))",
                        fix: activatable.map { "activate a key with \(run: .appleKeyActivate, "\($0.keyID)")" })
        case .bundleAudience:
            let apple = facts.providers.apple
            guard let bundle = apple.settings.bundleID else { return make(false, "no bundle id is configured") }
            if apple.nativeTokensAccepted == true {
                return make(true, "Better Auth accepts the bundle id \(bundle) as aud (from \(apple.audienceSource.rawValue))")
            }
            let accepted = apple.acceptedAudiences.isEmpty ? "nothing" : apple.acceptedAudiences.joined(separator: ", ")
            let fix = apple.findings.first { $0.code == "native_tokens_rejected" }?.fix
            return make(false, "Better Auth would reject native iOS tokens (aud = \(bundle)): it accepts \(accepted)", fix: fix)
        case .oauthClient:
            let google = GoogleProviderSettings.Platform(rawValue: platform.rawValue)
            if let google, let id = facts.providers.google.settings.clientIDs[google] {
                return make(true, "client id \(id) is configured for \(platform.rawValue)")
            }
            return make(false, "no Google client id is configured for \(platform.rawValue)")
        case .membership, .appID, .servicesID, .returnURLs:
            return make(false, "not a derived requirement")
        }
    }
}
