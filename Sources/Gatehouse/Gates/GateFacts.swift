import Storage

/// An operator's declaration about one requirement (`gatehouse_gate_requirements`).
public struct GateDeclaration: Sendable, Codable, Equatable {
    /// The provider and the requirement declared.
    public let provider: GateProvider
    public let requirement: GateRequirement
    /// nil: declared for every platform the requirement applies to.
    public let platform: GatePlatform?
    /// Met or not, and what was checked.
    public let met: Bool
    public let evidence: String
    /// When a met requirement stops being met.
    public let expiresAt: Timestamp?
    /// Who declared it, and when.
    public let setBy: String
    public let setAt: Timestamp

    /// `all` or the platform's name, as stored.
    public var scope: String { platform?.rawValue ?? "all" }
}

/// Whether a provider is offered on a platform (`gatehouse_gates`).
public struct GateEnablement: Sendable, Codable, Equatable {
    /// Whether the provider is offered there.
    public let enabled: Bool
    /// When it was last enabled or disabled.
    public let since: Timestamp
    /// Who changed it last, and why.
    public let changedBy: String
    public let reason: String
}

/// Everything a board is computed from: the stored declarations and enablements, and what the derived
/// requirements read through their services (the key ring, the provider configuration).
struct GateFacts: Sendable {
    var declarations: [GateDeclaration]
    var enablements: [String: GateEnablement]
    var keys: [AppleKey]
    var providers: ProviderReport

    static func key(_ provider: GateProvider, _ platform: GatePlatform) -> String { "\(provider.rawValue)/\(platform.rawValue)" }

    /// These facts with `declaration` in place of the one of its provider, requirement and scope, in the order `load`
    /// reads them.
    func declaring(_ declaration: GateDeclaration) -> GateFacts {
        var facts = self
        facts.declarations.removeAll { $0.provider == declaration.provider && $0.requirement == declaration.requirement && $0.scope == declaration.scope }
        facts.declarations.append(declaration)
        facts.declarations.sort { ($0.provider.rawValue, $0.requirement.rawValue, $0.scope) < ($1.provider.rawValue, $1.requirement.rawValue, $1.scope) }
        return facts
    }

    /// These facts with `enablement` for `provider` on `platform`.
    func enabling(_ provider: GateProvider, _ platform: GatePlatform, _ enablement: GateEnablement) -> GateFacts {
        var facts = self
        facts.enablements[Self.key(provider, platform)] = enablement
        return facts
    }

    func enablement(_ provider: GateProvider, _ platform: GatePlatform) -> GateEnablement? {
        enablements[Self.key(provider, platform)]
    }

    /// The declaration in force for a requirement on a platform: the platform's own, else the one for all.
    func declaration(_ requirement: GateRequirement, on platform: GatePlatform) -> GateDeclaration? {
        let mine = declarations.filter { $0.provider == requirement.provider && $0.requirement == requirement }
        return mine.first { $0.platform == platform } ?? mine.first { $0.platform == nil }
    }

    /// Reads the facts. Runs inside the caller's transaction when there is one.
    static func load(_ store: Store) throws -> GateFacts {
        let db = store.db
        var declarations: [GateDeclaration] = []
        for row in try db.rows("SELECT * FROM gatehouse_gate_requirements ORDER BY provider, requirement, platform") {
            // Rows this build does not know (written by a newer Gatehouse) are left alone.
            guard let provider = GateProvider(rawValue: try row.string("provider")),
                  let requirement = GateRequirement(rawValue: try row.string("requirement")), requirement.provider == provider else { continue }
            let scope = try row.string("platform")
            let platform = GatePlatform(rawValue: scope)
            guard platform != nil || scope == "all" else { continue }
            declarations.append(GateDeclaration(provider: provider, requirement: requirement, platform: platform, met: try row.int("met") == 1,
                                                evidence: try row.string("evidence"), expiresAt: try time(row, "expires_at", optional: true),
                                                setBy: try row.string("set_by"), setAt: try time(row, "set_at", optional: false)!))
        }
        var enablements: [String: GateEnablement] = [:]
        for row in try db.rows("SELECT * FROM gatehouse_gates") {
            guard let provider = GateProvider(rawValue: try row.string("provider")),
                  let platform = GatePlatform(rawValue: try row.string("platform")) else { continue }
            enablements[key(provider, platform)] = GateEnablement(enabled: try row.int("enabled") == 1, since: try time(row, "since", optional: false)!,
                                                                  changedBy: try row.string("changed_by"), reason: try row.string("reason"))
        }
        return GateFacts(declarations: declarations, enablements: enablements, keys: try AppleKeyRing(store: store).list(),
                         providers: try ProviderConfiguration(store: store).report())
    }

    private static func time(_ row: Row, _ column: String, optional: Bool) throws -> Timestamp? {
        guard let text = row[column].string else {
            if optional { return nil }
            throw GatehouseError("a gate row has no \(column)", code: .corrupt)
        }
        guard let time = Timestamp(iso8601: text) else {
            throw GatehouseError("a gate row holds an unreadable \(column) \"\(GateInput.shown(text))\"", fix: "set it again with \(command: .gatesSet)", code: .corrupt)
        }
        return time
    }
}
