import Foundation
import Storage

/// The Apple-membership gate in the store: the board, operator declarations, enabling and disabling a provider
/// per platform (with App Store Review Guideline 4.8 enforced), the history and the export.
///
/// Every change runs in one `BEGIN IMMEDIATE` transaction that recomputes the board under the write lock, writes
/// the row, a history row and an audit entry, so two operators can never enable past each other's change.
///
///     let gates = GateStore(store: store)
///     try gates.set(GateChange(provider: .apple, requirement: .membership, met: true, evidence: "receipt 1234",
///                              expires: Timestamp(iso8601: "2027-03-01")), actor: actor, now: .now())
///     try gates.enable(.apple, on: .ios, reason: "iOS 2.0 release", actor: actor, now: .now())
///     let offer = try gates.export(now: .now()).providers(on: .ios)
public struct GateStore {
    /// The store.
    public let store: Store

    public init(store: Store) { self.store = store }

    // MARK: Reading

    /// The board at `now`.
    public func board(now: Timestamp) throws -> GateBoard {
        try store.db.read { GateBoard.compute(try GateFacts.load(store), now: now) }
    }

    /// Every change, newest first.
    public func history(limit: Int = 200) throws -> [GateHistoryEntry] {
        try store.db.rows("SELECT * FROM gatehouse_gate_history ORDER BY id DESC LIMIT ?", [max(0, limit)]).map(GateHistoryEntry.init(row:))
    }

    /// Which providers the app should offer on each platform at `now`.
    public func export(now: Timestamp) throws -> GateExport { GateExport(board: try board(now: now)) }

    // MARK: Declaring requirements

    /// Declares an operator requirement met or unmet. Refuses derived requirements (naming how they are met),
    /// a platform the requirement does not apply to, blank or oversized evidence, an expiry on `unmet`, a
    /// membership without its renewal date, and a past expiry on `met` unless `force`.
    @discardableResult
    public func set(_ change: GateChange, actor: Actor, now: Timestamp) throws -> GateSetResult {
        if change.requirement.source == .derived { throw try derivedRefusal(change.requirement, platform: change.platform, now: now) }
        let evidence = try validate(change, now: now)
        return try store.db.write {
            let facts = try GateFacts.load(store)
            let before = GateBoard.compute(facts, now: now)
            let scope = change.platform?.rawValue ?? "all"
            let previous = facts.declarations.first {
                $0.provider == change.requirement.provider && $0.requirement == change.requirement && $0.scope == scope
            }
            let forced = change.force && change.met && (change.expires.map { $0 <= now } ?? false)
            try store.db.execute("""
                INSERT INTO gatehouse_gate_requirements (provider, requirement, platform, met, evidence, expires_at, set_by, set_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (provider, requirement, platform) DO UPDATE SET met = excluded.met, evidence = excluded.evidence,
                    expires_at = excluded.expires_at, set_by = excluded.set_by, set_at = excluded.set_at
                """, [change.requirement.provider.rawValue, change.requirement.rawValue, scope, change.met ? 1 : 0, evidence,
                      change.expires?.iso8601, actor.name, now.iso8601])
            try store.db.execute("""
                INSERT INTO gatehouse_gate_history (at, actor, action, provider, platform, requirement, met, expires_at, forced, text)
                VALUES (?, ?, 'set', ?, ?, ?, ?, ?, ?, ?)
                """, [now.iso8601, actor.name, change.requirement.provider.rawValue, scope, change.requirement.rawValue,
                      change.met ? 1 : 0, change.expires?.iso8601, forced ? 1 : 0, evidence])
            // The board after the change, worked out rather than read back (a store that sends a write's statements
            // together, D1, cannot answer a read of them).
            let declared = GateDeclaration(provider: change.requirement.provider, requirement: change.requirement, platform: change.platform,
                                           met: change.met, evidence: evidence, expiresAt: change.expires, setBy: actor.name, setAt: now)
            let after = GateBoard.compute(facts.declaring(declared), now: now)
            let moved = zip(before.gates, after.gates).filter { $0.state != $1.state }.map { GateTransition(gate: $1.name, from: $0.state, to: $1.state) }
            var details: [String: AuditValue] = [
                "provider": .string(change.requirement.provider.rawValue), "requirement": .string(change.requirement.rawValue),
                "platform": .string(scope), "met": .bool(change.met), "evidence": .string(evidence),
                "expires_at": change.expires.map { .string($0.iso8601) } ?? .null,
                "previous": previous.map { .string($0.met ? "met" : "unmet") } ?? .null,
                "gates_changed": .list(moved.map { "\($0.gate): \($0.from.rawValue) → \($0.to.rawValue)" }),
            ]
            if forced { details["forced_past_date"] = .bool(true) }
            try store.audit.append(store.db, actor: actor, action: "gates.set", subject: "\(change.requirement.provider.rawValue)/\(change.requirement.rawValue)/\(scope)",
                                   details: details, at: now)
            var warnings: [String] = []
            for transition in moved where transition.to == .lapsed {
                let gate = after.gates.first { $0.name == transition.gate }!
                warnings.append("\(gate.prose) is now lapsed (\(gate.unmetDescription)): restore the requirement, or disable it with \(run: .gatesDisable, "\(gate.provider.rawValue)", .option(.platform, gate.platform.rawValue), .option(.reason, "\"...\"")))")
            }
            if forced {
                warnings.append("the expiry \(change.expires!.iso8601) is in the past (accepted with \(field: .force)): \(change.requirement.rawValue) reads as expired")
            }
            if after.guideline48.breached && !before.guideline48.breached { warnings.append(after.guideline48.message) }
            return GateSetResult(provider: change.requirement.provider, requirement: change.requirement, platform: scope, met: change.met,
                                 expiresAt: change.expires, previous: previous, transitions: moved, warnings: warnings, board: after)
        }
    }

    /// Why a derived requirement cannot be set, with where it stands now and how it is met.
    func derivedRefusal(_ requirement: GateRequirement, platform: GatePlatform?, now: Timestamp) throws -> GatehouseError {
        let on = platform.flatMap { requirement.platforms.contains($0) ? $0 : nil } ?? requirement.platforms[0]
        let status = try board(now: now).gate(requirement.provider, on).requirements.first { $0.requirement == requirement }
        let current = status.map { " It is \($0.isMet ? "met" : "unmet") on \(on.rawValue) now: \($0.detail)." } ?? ""
        return GatehouseError("\(requirement.rawValue) cannot be set by hand: it is derived from the store (\(requirement.summary)).\(current)",
                              fix: status?.fix ?? requirement.howToMeet(platform: platform), code: .derived)
    }

    /// Checks a declaration before any transaction opens; returns the evidence as stored.
    func validate(_ change: GateChange, now: Timestamp) throws -> String {
        let requirement = change.requirement
        guard requirement.source == .operator else {
            throw GatehouseError("\(requirement.rawValue) cannot be set by hand: it is derived from the store (\(requirement.summary))",
                                 fix: requirement.howToMeet(platform: change.platform), code: .derived)
        }
        if let platform = change.platform {
            if requirement.isAccountWide {
                throw GatehouseError.invalid("\(requirement.rawValue) belongs to the whole Apple team, not to a platform; \(field: .platform) \(platform.rawValue) does not apply",
                                             fix: "omit \(field: .platform)")
            }
            guard requirement.platforms.contains(platform) else {
                throw GatehouseError.invalid("\(requirement.rawValue) applies to \(requirement.platforms.map(\.rawValue).joined(separator: " and ")) only, not to \(platform.rawValue)",
                                             fix: "pass \(field: .platform) \(requirement.platforms[0].rawValue), or omit \(field: .platform)")
            }
        }
        let evidence = try GateInput.text(change.evidence, label: "the evidence", field: .evidence, multiline: true)
        if let expires = change.expires {
            guard change.met else {
                throw GatehouseError.invalid("\(field: .expires) applies only to a requirement declared met", fix: "omit \(field: .expires) when declaring \(requirement.rawValue) unmet")
            }
            let limit = now.adding(seconds: Int64(GateInput.maxYearsAhead) * 366 * 86_400)
            guard expires <= limit else {
                throw GatehouseError.invalid("\(field: .expires) \(expires.iso8601) is more than \(GateInput.maxYearsAhead) years ahead",
                                             fix: "check the date: an Apple Developer Program membership renews every year")
            }
            if expires <= now && !change.force {
                throw GatehouseError.invalid("\(field: .expires) \(expires.iso8601) is in the past: \(requirement.rawValue) would already be expired, so it is not accepted as met",
                                             fix: requirement == .membership
                                                ? "check the renewal date under Membership in the Apple Developer account; to record a past date anyway, add \(field: .force) (it reads as expired)"
                                                : "check the date; to record a past date anyway, add \(field: .force) (it reads as expired)")
            }
        } else if change.met && requirement.needsExpiry {
            throw GatehouseError.invalid("\(requirement.rawValue) met needs its renewal date, so the gate can warn before it lapses",
                                         fix: "pass \(field: .expires) YYYY-MM-DD (the renewal date under Membership in the Apple Developer account)")
        }
        return evidence
    }

    // MARK: Enabling and disabling

    /// Enables a provider on a platform. Needs the gate `ready`; Google on ios also needs Apple live on ios
    /// (Guideline 4.8). Enabling an enabled gate changes nothing.
    @discardableResult
    public func enable(_ provider: GateProvider, on platform: GatePlatform, reason: String, actor: Actor, now: Timestamp) throws -> GateEnableResult {
        let reason = try GateInput.text(reason, label: "the reason", field: .reason, multiline: true)
        return try store.db.write {
            let facts = try GateFacts.load(store)
            let board = GateBoard.compute(facts, now: now)
            let gate = board.gate(provider, platform)
            if gate.enabled { return GateEnableResult(gate: gate, changed: false, board: board) }
            if gate.state == .blocked {
                throw GatehouseError.conflict("refusing to enable \(gate.prose): it is blocked by \(gate.unmetDescription); enabling needs every requirement met (ready)",
                                              fix: gate.fixes.joined(separator: "; "))
            }
            try Guideline48.checkEnable(provider, platform, board: board)
            return try write(gate, enabled: true, reason: reason, facts: facts, actor: actor, now: now)
        }
    }

    /// Disables a provider on a platform. Apple on ios cannot be disabled while Google is enabled on ios
    /// (Guideline 4.8). Disabling a disabled gate changes nothing.
    @discardableResult
    public func disable(_ provider: GateProvider, on platform: GatePlatform, reason: String, actor: Actor, now: Timestamp) throws -> GateEnableResult {
        let reason = try GateInput.text(reason, label: "the reason", field: .reason, multiline: true)
        return try store.db.write {
            let facts = try GateFacts.load(store)
            let board = GateBoard.compute(facts, now: now)
            let gate = board.gate(provider, platform)
            if !gate.enabled { return GateEnableResult(gate: gate, changed: false, board: board) }
            try Guideline48.checkDisable(provider, platform, board: board)
            return try write(gate, enabled: false, reason: reason, facts: facts, actor: actor, now: now)
        }
    }

    /// Writes an enablement, its history row and its audit entry; runs inside the caller's write transaction, whose
    /// reads gave `facts`.
    private func write(_ gate: GateStatus, enabled: Bool, reason: String, facts: GateFacts, actor: Actor, now: Timestamp) throws -> GateEnableResult {
        let action = enabled ? "enable" : "disable"
        try store.db.execute("""
            INSERT INTO gatehouse_gates (provider, platform, enabled, since, changed_by, reason) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (provider, platform) DO UPDATE SET enabled = excluded.enabled, since = excluded.since,
                changed_by = excluded.changed_by, reason = excluded.reason
            """, [gate.provider.rawValue, gate.platform.rawValue, enabled ? 1 : 0, now.iso8601, actor.name, reason])
        let after = GateBoard.compute(facts.enabling(gate.provider, gate.platform, GateEnablement(enabled: enabled, since: now, changedBy: actor.name, reason: reason)),
                                      now: now)
        let updated = after.gate(gate.provider, gate.platform)
        try store.db.execute("""
            INSERT INTO gatehouse_gate_history (at, actor, action, provider, platform, from_state, to_state, text)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [now.iso8601, actor.name, action, gate.provider.rawValue, gate.platform.rawValue, gate.state.rawValue, updated.state.rawValue, reason])
        try store.audit.append(store.db, actor: actor, action: "gates.\(action)", subject: gate.name, details: [
            "provider": .string(gate.provider.rawValue), "platform": .string(gate.platform.rawValue), "reason": .string(reason),
            "from_state": .string(gate.state.rawValue), "to_state": .string(updated.state.rawValue),
        ], at: now)
        return GateEnableResult(gate: updated, changed: true, board: after)
    }
}

/// A declaration to make with `GateStore.set`.
public struct GateChange: Sendable {
    /// The operator requirement declared.
    public var requirement: GateRequirement
    /// nil: for every platform the requirement applies to.
    public var platform: GatePlatform?
    /// Met or unmet.
    public var met: Bool
    /// What was checked, and where: required, at most 2000 characters.
    public var evidence: String
    /// When the requirement stops being met (the membership's renewal date).
    public var expires: Timestamp?
    /// Accept an expiry in the past (it then reads as expired).
    public var force: Bool

    /// A declaration; see the properties.
    public init(requirement: GateRequirement, platform: GatePlatform? = nil, met: Bool, evidence: String, expires: Timestamp? = nil, force: Bool = false) {
        self.requirement = requirement
        self.platform = platform
        self.met = met
        self.evidence = evidence
        self.expires = expires
        self.force = force
    }
}

/// A gate whose state a change moved.
public struct GateTransition: Sendable, Codable, Equatable {
    /// `apple/ios`.
    public let gate: String
    /// The state before and after.
    public let from: GateState
    public let to: GateState
}

/// What `GateStore.set` did.
public struct GateSetResult: Sendable, Codable {
    /// What was declared: provider, requirement, scope, met, expiry.
    public let provider: GateProvider
    public let requirement: GateRequirement
    /// `all` or the platform.
    public let platform: String
    public let met: Bool
    public let expiresAt: Timestamp?
    /// The declaration it replaced.
    public let previous: GateDeclaration?
    /// Gates whose state moved.
    public let transitions: [GateTransition]
    /// Gates that lapsed, a forced past date, a new Guideline 4.8 breach.
    public let warnings: [String]
    /// The board after the change.
    public let board: GateBoard
}

/// What `GateStore.enable` / `disable` did.
public struct GateEnableResult: Sendable, Codable {
    /// The gate after the change.
    public let gate: GateStatus
    /// False when it already was enabled (or disabled).
    public let changed: Bool
    /// The board after the change.
    public let board: GateBoard
}
