import Gatehouse

/// `POST /api/gates/requirements`: {provider, requirement, platform?, met, evidence, expires?, force?}.
///
/// `platform` absent or empty: for every platform the requirement applies to. `expires` is `YYYY-MM-DD`
/// (midnight UTC) or an ISO-8601 time, as `gatehouse gates set --expires` takes it.
struct GateSetRequest: Decodable, Sendable {
    let provider: String
    let requirement: String
    let platform: String?
    let met: Bool
    let evidence: String
    let expires: String?
    let force: Bool?

    /// The declaration, with names and the date read by the gate's own rules.
    func change() throws -> GateChange {
        let provider = try GateProvider.named(provider)
        var change = GateChange(requirement: try GateRequirement.named(requirement, provider: provider),
                                platform: try platform.flatMap { $0.isEmpty ? nil : try GatePlatform.named($0) },
                                met: met, evidence: evidence, force: force ?? false)
        if let expires, !expires.isEmpty { change.expires = try GateInput.date(expires, field: .expires) }
        return change
    }
}

/// `POST /api/gates/enable` and `/api/gates/disable`: {provider, platform, reason}.
struct GateToggleRequest: Decodable, Sendable {
    let provider: String
    let platform: String
    let reason: String

    /// The gate named, by the gate's own name rules.
    func gate() throws -> (GateProvider, GatePlatform) {
        (try GateProvider.named(provider), try GatePlatform.named(platform))
    }
}

/// What `GET /api/gates` answers: the board, and the operator requirements a declaration may name
/// (derived ones follow the store and are refused by `GateStore.set`), for the page's form.
struct GateBoardResponse: Encodable, Sendable {
    /// An operator requirement as the form offers it.
    struct Requirement: Encodable, Sendable {
        let provider: GateProvider
        let requirement: GateRequirement
        let platforms: [GatePlatform]
        let summary: String
        /// One declaration for the whole team: no platform.
        let accountWide: Bool
        /// Declaring it met needs an expiry (the membership's renewal date).
        let needsExpiry: Bool
    }

    let board: GateBoard
    /// App Store Review Guideline 4.8, in one sentence.
    let rule: String
    let requirements: [Requirement]

    init(board: GateBoard) {
        self.board = board
        rule = Guideline48.rule
        requirements = GateRequirement.allCases.filter { $0.source == .operator }.map {
            Requirement(provider: $0.provider, requirement: $0, platforms: $0.platforms, summary: $0.summary,
                        accountWide: $0.isAccountWide, needsExpiry: $0.needsExpiry)
        }
    }
}
