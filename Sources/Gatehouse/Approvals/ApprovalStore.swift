import JOSE
import Storage

/// Two-person approval over `gatehouse_approval_settings` and `gatehouse_approvals`: which actions need it, the
/// requests waiting for a second admin, and the CLI's recorded bypasses. Every change is audited; the action an
/// approval lets run is audited by its own service, with an actor naming both admins (`ApprovalStore.actor`).
///
/// A request is decided once: `claim` moves it from pending to running in one guarded write (two admins approving at
/// the same moment: one runs it, the other is told it is closed), and `finish` records what the action answered. A
/// request its process left `running` is settled when next read (`interruptedAfter`).
public struct ApprovalStore {
    public let store: Store
    public init(store: Store) { self.store = store }

    /// The most a stored request body may hold (the console's bodies for these actions are a few hundred bytes).
    public static let maxBodyBytes = 64 * 1024
    /// How long `health` warns after a bypass on the host.
    public static let bypassWarning = Seconds(24 * 3600)
    /// How long a request may stay `running` before it is taken as cut off with its process: an approved action is
    /// one request through one route, answered in seconds.
    public static let interruptedAfter = Seconds(15 * 60)

    // MARK: settings

    /// The settings' read, also announced with a store's opening while a CLI command is watched (`ApprovalWatch`).
    static var settingsStatement: SQLStatement {
        SQLStatement("SELECT actions, expires_after, updated_at, updated_by FROM gatehouse_approval_settings WHERE id = 1")
    }

    public func settings() throws -> ApprovalSettings {
        guard let row = try store.db.rows(Self.settingsStatement.sql, Self.settingsStatement.arguments).first else {
            return .none
        }
        let actions = (row["actions"].string ?? "").split(separator: " ").compactMap { ApprovalAction(rawValue: String($0)) }
        return ApprovalSettings(actions: actions.sorted(), expiresAfter: Seconds(row["expires_after"].int64 ?? ApprovalSettings.defaultExpiry.value),
                                updatedAt: row["updated_at"].string.flatMap(Timestamp.init(iso8601:)), updatedBy: row["updated_by"].string)
    }

    /// Whether `action` needs approval in the console now.
    public func requires(_ action: ApprovalAction) throws -> Bool {
        try settings().requires(action)
    }

    /// Sets which actions need approval (empty: none) and, when given, how long a request waits. Audited.
    @discardableResult
    public func require(_ actions: Set<ApprovalAction>, expiresAfter: Seconds? = nil, actor: Actor, now: Timestamp) throws -> ApprovalSettings {
        if let expiresAfter, !ApprovalSettings.expiryRange.contains(expiresAfter.value) {
            throw GatehouseError.invalid("a request must wait from 1 minute to 30 days for its approval, not \(expiresAfter.value) s",
                                         fix: "pass --expires-after 24h (the default), or any duration from 1m to 30d")
        }
        let before = try settings()
        let expiry = expiresAfter ?? before.expiresAfter
        let names = actions.sorted().map(\.rawValue)
        try store.db.write {
            try store.db.execute("DELETE FROM gatehouse_approval_settings WHERE id = 1")
            try store.db.execute("INSERT INTO gatehouse_approval_settings (id, actions, expires_after, updated_at, updated_by) VALUES (1, ?, ?, ?, ?)",
                                 [names.joined(separator: " "), expiry.value, now.iso8601, actor.name])
            try store.audit.append(store.db, actor: actor, action: "approvals.require", subject: names.isEmpty ? "none" : names.joined(separator: " "),
                                   details: ["before": .string(before.actions.map(\.rawValue).joined(separator: " ")),
                                             "expires_after": .int(expiry.value)], at: now)
        }
        return try settings()
    }

    // MARK: requests

    /// Records a request for `action` made by `requester` (a username) and answers it, pending. The body is the
    /// request's JSON as sent; `detail` is what the reviewer sees beside it. `settings`, when the caller has read
    /// them, spare a second read.
    public func request(_ action: ApprovalAction, method: String, path: String, query: String?, body: String, detail: String?,
                        requester: String, actor: Actor, settings: ApprovalSettings? = nil, now: Timestamp) throws -> Approval {
        guard body.utf8.count <= Self.maxBodyBytes else {
            throw GatehouseError.invalid("the request body is over \(Self.maxBodyBytes / 1024) KB; an action that needs approval is a small request")
        }
        let expiry = try (settings ?? self.settings()).expiresAfter
        let id: Int64 = try store.db.write {
            let id = try store.db.nextID(in: "gatehouse_approvals")
            try store.db.execute("""
                INSERT INTO gatehouse_approvals (id, action, method, path, query, body, detail, requested_by, requested_at, expires_at, status)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')
                """, [id, action.rawValue, method, path, query.map { SQLValue.text($0) } ?? .null, body, detail.map { SQLValue.text($0) } ?? .null,
                      requester, now.iso8601, now.adding(seconds: expiry.value).iso8601])
            try store.audit.append(store.db, actor: actor, action: "approval.requested", subject: "approval \(id)",
                                   details: ["action": .string(action.rawValue), "request": .string("\(method) \(path)")], at: now)
            return id
        }
        return try show(id, now: now)
    }

    /// One request, or not found.
    public func show(_ id: Int64, now: Timestamp) throws -> Approval {
        guard let row = try store.db.row("SELECT * FROM gatehouse_approvals WHERE id = ?", [id]) else {
            throw GatehouseError.notFound("no approval request \(id)", fix: "the Approvals page (or approvals list on the host) lists the requests")
        }
        return try settled(try Approval.from(row, now: now), now: now)
    }

    /// Requests newest first: the pending ones only (not expired), or all of them.
    public func list(pendingOnly: Bool, limit: Int = 200, now: Timestamp) throws -> [Approval] {
        let rows = pendingOnly
            ? try store.db.rows("SELECT * FROM gatehouse_approvals WHERE status = 'pending' AND expires_at > ? ORDER BY id DESC LIMIT ?", [now.iso8601, limit])
            : try store.db.rows("SELECT * FROM gatehouse_approvals ORDER BY id DESC LIMIT ?", [limit])
        return try rows.map { try settled(try Approval.from($0, now: now), now: now) }
    }

    /// `approval`, or, when its process stopped while running it, the request settled: `approved` when the action's
    /// own audit entry (whose actor names this approval) shows it ran, else `failed`. Each action is one transaction,
    /// so an action with no entry wrote nothing, and its requester may ask again.
    private func settled(_ approval: Approval, now: Timestamp) throws -> Approval {
        guard approval.status == .running, let decidedAt = approval.decidedAt, let approver = approval.decidedBy,
              decidedAt.adding(seconds: Self.interruptedAfter.value) <= now else { return approval }
        let actor = Self.actor(requestedBy: approval.requestedBy, approvedBy: Actor(approver), approval: approval.id)
        let entry = try store.db.row("SELECT id, action FROM gatehouse_audit WHERE actor = ? ORDER BY id LIMIT 1", [actor.name])
        let ran = entry != nil
        let note = ran
            ? "the process running it stopped before its answer was recorded; audit entry \(entry?["id"].int64 ?? 0) (\(entry?["action"].string ?? "?")) shows it ran"
            : "the process running it stopped; the audit log shows nothing of it ran, so nothing changed: ask again"
        let outcome = String(decoding: try JSONValue.object(["interrupted": .string(note)]).encoded(), as: UTF8.self)
        try store.db.write {
            try store.db.execute("UPDATE gatehouse_approvals SET status = ?, outcome = ? WHERE id = ? AND status = 'running'",
                                 [ran ? "approved" : "failed", outcome, approval.id])
            try store.audit.append(store.db, actor: Actor("gatehouse"), action: "approval.interrupted", subject: "approval \(approval.id)",
                                   details: ["action": .string(approval.action.rawValue), "ran": .bool(ran)], at: now)
        }
        guard let row = try store.db.row("SELECT * FROM gatehouse_approvals WHERE id = ?", [approval.id]) else { return approval }
        return try Approval.from(row, now: now)
    }

    /// How many requests wait for a decision.
    public func pendingCount(now: Timestamp) throws -> Int {
        Int(try store.db.scalar("SELECT count(*) FROM gatehouse_approvals WHERE status = 'pending' AND expires_at > ?", [now.iso8601]).int64 ?? 0)
    }

    /// Takes a pending request for `approver` (a username for the console, the CLI's actor on the host) to run now:
    /// refused when the approver made it (`self_approval`) or it is no longer pending (`approval_closed`).
    public func claim(_ id: Int64, approver: String, actor: Actor, now: Timestamp) throws -> Approval {
        let approval = try show(id, now: now)
        if approval.status == .expired { try expire(approval, now: now) }
        guard approval.status == .pending else { throw Self.closed(approval) }
        guard !Self.samePerson(approval.requestedBy, approver) else {
            try store.audit.append(store.db, actor: actor, action: "approval.self_refused", subject: "approval \(id)",
                                   details: ["action": .string(approval.action.rawValue)], at: now)
            throw GatehouseError("\(approval.requestedBy) asked for approval \(id): another admin must approve it",
                                 fix: "ask another admin to review it on the console's Approvals page", code: .selfApproval)
        }
        try store.db.write {
            try store.db.execute("UPDATE gatehouse_approvals SET status = 'running', decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'",
                                 [actor.name, now.iso8601, id],
                                 expecting: ChangeExpectation(count: 1) { _ in Self.closed(approval) })
        }
        return try show(id, now: now)
    }

    /// Records what the approved action answered: `approved` when it succeeded, else `failed` with its error.
    public func finish(_ approval: Approval, succeeded: Bool, status: Int, outcome: String?, actor: Actor, now: Timestamp) throws {
        try store.db.write {
            try store.db.execute("UPDATE gatehouse_approvals SET status = ?, outcome_status = ?, outcome = ? WHERE id = ?",
                                 [succeeded ? "approved" : "failed", status, outcome.map { SQLValue.text($0) } ?? .null, approval.id])
            try store.audit.append(store.db, actor: actor, action: succeeded ? "approval.approved" : "approval.failed", subject: "approval \(approval.id)",
                                   details: ["action": .string(approval.action.rawValue), "requested_by": .string("console:\(approval.requestedBy)"),
                                             "request": .string("\(approval.method) \(approval.path)"), "status": .int(Int64(status))], at: now)
        }
    }

    /// Closes a pending request without running it. The requester may withdraw their own.
    public func deny(_ id: Int64, reason: String, actor: Actor, now: Timestamp) throws -> Approval {
        let text = try OperatorText.check(reason, field: "the reason")
        guard !text.isEmpty, text.count <= 500 else {
            throw GatehouseError.invalid("a denial needs a reason of 1 to 500 characters", fix: "say why, e.g. --reason \"wrong user, see SUP-7\"")
        }
        let approval = try show(id, now: now)
        if approval.status == .expired { try expire(approval, now: now) }
        guard approval.status == .pending else { throw Self.closed(approval) }
        try store.db.write {
            try store.db.execute("UPDATE gatehouse_approvals SET status = 'denied', decided_by = ?, decided_at = ?, reason = ? WHERE id = ? AND status = 'pending'",
                                 [actor.name, now.iso8601, text, id],
                                 expecting: ChangeExpectation(count: 1) { _ in Self.closed(approval) })
            try store.audit.append(store.db, actor: actor, action: "approval.denied", subject: "approval \(id)",
                                   details: ["action": .string(approval.action.rawValue), "requested_by": .string("console:\(approval.requestedBy)"),
                                             "reason": .string(text)], at: now)
        }
        return try show(id, now: now)
    }

    /// The actor an approved action's own audit entry names: the requester, and who approved it.
    public static func actor(requestedBy: String, approvedBy: Actor, approval: Int64) -> Actor {
        Actor("console:\(requestedBy), approved by \(approvedBy.name) (approval \(approval))")
    }

    private func expire(_ approval: Approval, now: Timestamp) throws {
        try store.db.write {
            try store.db.execute("UPDATE gatehouse_approvals SET status = 'expired' WHERE id = ? AND status = 'pending'", [approval.id])
            try store.audit.append(store.db, actor: Actor("gatehouse"), action: "approval.expired", subject: "approval \(approval.id)",
                                   details: ["action": .string(approval.action.rawValue), "requested_by": .string("console:\(approval.requestedBy)")], at: now)
        }
    }

    private static func closed(_ approval: Approval) -> GatehouseError {
        let state: String
        switch approval.status {
        case .expired: state = "expired at \(approval.expiresAt.iso8601) without a decision"
        case .running: state = "being run by \(approval.decidedBy ?? "another admin")"
        default: state = "\(approval.status.rawValue) by \(approval.decidedBy ?? "?")"
        }
        return GatehouseError("approval \(approval.id) is \(state)", fix: approval.status == .expired ? "ask again: make the change again in the console" : nil,
                              code: .approvalClosed)
    }

    /// Whether `approver` (a username, `console:<username>` or a CLI actor `cli:<name>`) is the requesting admin.
    static func samePerson(_ requester: String, _ approver: String) -> Bool {
        let bare = approver.split(separator: ":", maxSplits: 1).count == 2 && (approver.hasPrefix("console:") || approver.hasPrefix("cli:"))
            ? String(approver.split(separator: ":", maxSplits: 1)[1]) : approver
        return bare.lowercased() == requester.lowercased()
    }

    // MARK: the host's bypass

    /// Records that `action` ran from the CLI on the host while the console requires approval for it.
    public func recordBypass(_ action: ApprovalAction, command: String, actor: Actor, now: Timestamp) throws {
        _ = try store.db.write {
            try store.audit.append(store.db, actor: actor, action: "approval.bypassed", subject: action.rawValue,
                                   details: ["approval": .string("bypassed (cli)"), "command": .string(command)], at: now)
        }
    }

    /// The latest bypass since `since`: when, by whom, which action.
    public func latestBypass(since: Timestamp) throws -> (at: Timestamp, actor: String, action: String)? {
        guard let row = try store.db.row("""
            SELECT at, actor, subject FROM gatehouse_audit WHERE action = 'approval.bypassed' AND at >= ? ORDER BY id DESC LIMIT 1
            """, [since.iso8601]), let at = row["at"].string.flatMap(Timestamp.init(iso8601:)) else { return nil }
        return (at, row["actor"].string ?? "?", row["subject"].string ?? "?")
    }
}
