import Foundation
import Storage

/// The account-linking policy in the store: show, set (optionally for a bounded time, optionally only
/// at a known version), history and export.
///
/// Timed values revert on read: a value past its `reverts_at` reads as the value it replaced, and the
/// version reads as if the revert had been written. The next write records each such revert as its own
/// history row and audit entry (actor `gatehouse (timer)`) before applying its own change, all in one
/// `BEGIN IMMEDIATE` transaction, so concurrent writers never lose a change or reuse a version.
///
///     let policy = PolicyStore(store: store)
///     try policy.set(PolicyChange(key: .linkSocialAllowDifferentEmails, value: .bool(true),
///                                 reason: "INC-42 support window", duration: Seconds(7200)), actor: actor, now: .now())
///     let effective = try policy.snapshot(now: .now()).policy
public struct PolicyStore {
    /// The store.
    public let store: Store

    /// The actor recorded for automatic reverts.
    public static let timerActor = Actor("gatehouse (timer)")
    /// The reason recorded for automatic reverts.
    public static let expiredReason = "timed value expired"
    /// The longest reason accepted.
    public static let maxReasonLength = 2000
    /// The shortest `--for`: a runtime caches the policy briefly, so shorter would not take effect.
    public static let minDuration = Seconds(60)
    /// The longest `--for`: a timed value is for an operation window; anything longer is a decision
    /// to make permanently, with its own review, and a 30-day-old "previous value" is likely stale.
    public static let maxDuration = Seconds(30 * 86_400)
    /// The accepted range of `--for`, as operators write it.
    public static let durationRange = "1m to 30d"

    public init(store: Store) { self.store = store }

    // MARK: Reading

    /// The effective policy at `now`, every key with who set it, when, why and when it reverts.
    public func snapshot(now: Timestamp) throws -> PolicySnapshot {
        let state = try store.db.read { try PolicyState.load(store.db) }
        return state.snapshot(now: now)
    }

    /// Every change and every automatic revert, newest first; reverts that are due but not yet written
    /// are included (marked `pending`). With `key`, only that key's.
    public func history(key: PolicyKey? = nil, limit: Int = 200, now: Timestamp) throws -> [PolicyHistoryEntry] {
        try store.db.read {
            let state = try PolicyState.load(store.db)
            let pending = state.dueReverts(now: now).reversed().filter { key == nil || $0.key == key }.map { revert in
                PolicyHistoryEntry(version: revert.version, key: revert.key.rawValue, kind: .revert, from: revert.from, to: revert.to,
                                   actor: Self.timerActor.name, reason: Self.expiredReason, effectiveAt: revert.at, recordedAt: nil,
                                   revertsAt: nil, pending: true)
            }
            var sql = "SELECT * FROM gatehouse_policy_history"
            var arguments: [SQLBindable] = []
            if let key { sql += " WHERE key = ?"; arguments.append(key.rawValue) }
            sql += " ORDER BY version DESC LIMIT ?"
            arguments.append(max(0, limit - pending.count))
            let written = try store.db.rows(sql, arguments).map(PolicyHistoryEntry.init(row:))
            return Array((pending + written).prefix(max(0, limit)))
        }
    }

    /// The effective policy in the shape the runtime's `createBetterAuth(env)` factory reads.
    public func export(now: Timestamp) throws -> PolicyExport {
        var export = PolicyExport(snapshot: try snapshot(now: now))
        export.security = PolicyExport.Security(googleDisabledSubs: try GoogleAccountFlags.disabledSubs(in: store))
        return export
    }

    // MARK: Writing

    /// Applies a change (after recording any reverts that fell due) and returns what happened.
    /// Throws `conflict` when `ifVersion` is given and the policy is at another version.
    @discardableResult
    public func set(_ change: PolicyChange, actor: Actor, now: Timestamp) throws -> PolicyChangeResult {
        try validate(change, actor: actor)
        // Not `store.change`: the audit details (version, old value) are known only inside the
        // transaction, and reverts are audited under their own actor first. Same guarantee:
        // every audit entry commits or rolls back with the change it describes.
        return try store.db.write {
            // The policy and the audit chain's head in one read (one round trip on a server); every entry this change
            // appends follows from it, none reads it again.
            var (state, head) = try PolicyState.loadWithAuditHead(store.db)
            let reverts = try materialise(&state, head: &head, now: now)
            if let expected = change.ifVersion, expected != state.version {
                throw GatehouseError.conflict("the policy is at version \(state.version), not \(expected) (\(field: .ifVersion) \(expected)): it changed since you read it",
                                              fix: "run \(command: .policyShow) (or \(command: .policyHistory)), check the change, then retry with \(field: .ifVersion) \(state.version)")
            }
            let current = state.rows[change.key]
            let old = current?.value ?? change.key.defaultValue
            var revertsAt: Timestamp?
            var revertsTo: PolicyValue?
            if let duration = change.duration {
                revertsAt = now.adding(seconds: duration.value)
                // Re-timing a key that is already timed keeps the value from before the first timed
                // change: extending a window must not make the temporary value permanent.
                revertsTo = current?.previous ?? old
            }
            let version = state.version + 1
            let row = PolicyRow(key: change.key, value: change.value, version: version, setBy: actor.name, setAt: now,
                                reason: change.reason, revertsAt: revertsAt, previous: revertsTo)
            try write(row, old: old, kind: .set, effectiveAt: now, recordedAt: now)
            var details: [String: AuditValue] = [
                "key": .string(change.key.rawValue), "from": .string(old.json), "to": .string(change.value.json),
                "version": .int(Int64(version)), "reason": .string(change.reason),
            ]
            if let revertsAt, let revertsTo {
                details["reverts_at"] = .string(revertsAt.iso8601)
                details["reverts_to"] = .string(revertsTo.json)
            }
            if let expected = change.ifVersion { details["if_version"] = .int(Int64(expected)) }
            if change.key.opensTakeover(change.value) { details["takeover_risk_accepted"] = .bool(true) }
            try store.audit.append(store.db, actor: actor, action: "policy.set", subject: change.key.rawValue, details: details, at: now, after: head)
            return PolicyChangeResult(version: version, key: change.key.rawValue, from: old, to: change.value,
                                      revertsAt: revertsAt, revertsTo: revertsTo, revertsRecorded: reverts)
        }
    }

    /// Writes every revert that fell due, oldest first, each with its own version, history row and
    /// audit entry. Runs inside the caller's write transaction.
    private func materialise(_ state: inout PolicyState, head: inout AuditLog.Head, now: Timestamp) throws -> [PolicyHistoryEntry] {
        var recorded: [PolicyHistoryEntry] = []
        for revert in state.dueReverts(now: now) {
            let row = PolicyRow(key: revert.key, value: revert.to, version: revert.version, setBy: Self.timerActor.name,
                                setAt: revert.at, reason: Self.expiredReason, revertsAt: nil, previous: nil)
            try write(row, old: revert.from, kind: .revert, effectiveAt: revert.at, recordedAt: now)
            let entry = try store.audit.append(store.db, actor: Self.timerActor, action: "policy.revert", subject: revert.key.rawValue, details: [
                "key": .string(revert.key.rawValue), "from": .string(revert.from.json), "to": .string(revert.to.json),
                "version": .int(Int64(revert.version)), "reason": .string(Self.expiredReason), "expired_at": .string(revert.at.iso8601),
            ], at: now, after: head)
            head = AuditLog.Head(id: entry.id, hash: entry.hash)
            state.rows[revert.key] = row
            state.version = revert.version
            recorded.append(PolicyHistoryEntry(version: revert.version, key: revert.key.rawValue, kind: .revert, from: revert.from, to: revert.to,
                                               actor: Self.timerActor.name, reason: Self.expiredReason, effectiveAt: revert.at,
                                               recordedAt: now, revertsAt: nil, pending: false))
        }
        return recorded
    }

    private func write(_ row: PolicyRow, old: PolicyValue, kind: PolicyHistoryEntry.Kind, effectiveAt: Timestamp, recordedAt: Timestamp) throws {
        let db = store.db
        try db.execute("""
            INSERT INTO gatehouse_policy (key, value_json, version, set_by, set_at, reason, reverts_at, previous_value_json)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, version = excluded.version, set_by = excluded.set_by,
                set_at = excluded.set_at, reason = excluded.reason, reverts_at = excluded.reverts_at, previous_value_json = excluded.previous_value_json
            """, [row.key.rawValue, row.value.json, row.version, row.setBy, row.setAt.iso8601, row.reason, row.revertsAt?.iso8601, row.previous?.json])
        try db.execute("""
            INSERT INTO gatehouse_policy_history (version, key, kind, old_value_json, new_value_json, actor, reason, effective_at, recorded_at, reverts_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [row.version, row.key.rawValue, kind.rawValue, old.json, row.value.json, row.setBy, row.reason,
                  effectiveAt.iso8601, recordedAt.iso8601, row.revertsAt?.iso8601])
        let expected = row.version - 1
        try db.execute("UPDATE gatehouse_policy_version SET version = ? WHERE id = 1 AND version = ?", [row.version, expected],
                       expecting: ChangeExpectation(count: 1) { _ in
                           GatehouseError("the policy version moved during a write transaction (expected \(expected))", code: .conflict)
                       })
    }

    /// Refuses a change before any transaction opens: type, reason, duration, takeover risk.
    func validate(_ change: PolicyChange, actor: Actor) throws {
        try change.key.check(change.value)
        let reason = change.reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else {
            throw GatehouseError.invalid("a reason is required for a policy change", fix: "pass \(field: .reason) \"why, e.g. the ticket\"")
        }
        guard change.reason.count <= Self.maxReasonLength else {
            throw GatehouseError.invalid("the reason is \(change.reason.count) characters; at most \(Self.maxReasonLength) are kept",
                                         fix: "shorten it and link the ticket or document instead")
        }
        _ = try OperatorText.check(change.reason, field: "the reason", multiline: true)
        if let duration = change.duration {
            guard duration >= Self.minDuration, duration <= Self.maxDuration else {
                throw GatehouseError.invalid("\(field: .for) \(duration) is outside \(Self.durationRange)",
                                             fix: "a timed value lasts from \(Self.durationRange); for longer, set it without \(field: .for) and change it back when done")
            }
        }
        if change.key.opensTakeover(change.value) && !change.acceptTakeoverRisk {
            throw GatehouseError("refusing to set \(change.key.rawValue) to true: it lets every link the runtime does not scope to linkSocial accept an account whose email differs from the user's; Better Auth 1.7.1 reads it only in linkSocial's redirect callback when the runtime does not apply the linkSocial value there, but any version or plugin that reads it while linking without the user's session opens email-based account takeover",
                                 fix: "for Hide My Email users set linkSocial.allowDifferentEmails instead; if you really mean it, add \(field: .acceptTakeoverRisk)", code: .takeoverRisk)
        }
        guard actor != Self.timerActor else {
            throw GatehouseError.invalid("the actor \"\(actor)\" is reserved for automatic reverts", fix: "pass \(field: .actor) with your own name")
        }
    }
}

/// A requested change to one key.
public struct PolicyChange: Sendable {
    public var key: PolicyKey
    public var value: PolicyValue
    /// Why: required, at most 2000 characters; kept in the history and the audit log.
    public var reason: String
    /// With a duration, the value reverts by itself to the value before it when the time is up.
    public var duration: Seconds?
    /// Apply only if the policy is at this version.
    public var ifVersion: Int?
    /// Required to set `autoLink.allowDifferentEmails` to true.
    public var acceptTakeoverRisk: Bool

    public init(key: PolicyKey, value: PolicyValue, reason: String, duration: Seconds? = nil, ifVersion: Int? = nil, acceptTakeoverRisk: Bool = false) {
        self.key = key
        self.value = value
        self.reason = reason
        self.duration = duration
        self.ifVersion = ifVersion
        self.acceptTakeoverRisk = acceptTakeoverRisk
    }
}

/// What `PolicyStore.set` did.
public struct PolicyChangeResult: Sendable, Codable {
    /// The policy's version after the change.
    public let version: Int
    public let key: String
    public let from: PolicyValue
    public let to: PolicyValue
    public let revertsAt: Timestamp?
    public let revertsTo: PolicyValue?
    /// Reverts that had fallen due and were recorded first.
    public let revertsRecorded: [PolicyHistoryEntry]
}

/// One key as `policy show` presents it.
public struct PolicyEntry: Sendable, Codable {
    public let key: String
    public let type: PolicyKey.Kind
    public let value: PolicyValue
    public let defaultValue: PolicyValue
    /// True when the key was never set (it holds its default).
    public let isDefault: Bool
    /// The version the key last changed at.
    public let changedInVersion: Int?
    public let setBy: String?
    public let setAt: Timestamp?
    public let reason: String?
    /// A timed value: when it reverts, and to what.
    public let revertsAt: Timestamp?
    public let revertsTo: PolicyValue?
    public let summary: String
}

/// The effective policy at one moment.
public struct PolicySnapshot: Sendable, Codable {
    /// The store-wide version, counting reverts that fell due but are not yet written.
    public let version: Int
    /// The time the snapshot is computed for.
    public let at: Timestamp
    public let entries: [PolicyEntry]
    public let risks: [PolicyRisk]
    /// The next automatic revert: a cached copy of the policy is valid until then.
    public let nextRevertAt: Timestamp?
    /// The requests the runtime applies `linkSocial.allowDifferentEmails` to (`PolicyExport.linkSocialRequests`), so that
    /// `policy show --json` and the console say which linking flows the switch reaches.
    public var linkSocialAppliesTo: [String] = PolicyExport.linkSocialRequests

    /// The effective values.
    public var policy: LinkingPolicy {
        entries.reduce(LinkingPolicy.defaults) { policy, entry in
            PolicyKey(rawValue: entry.key).map { policy.setting($0, entry.value) } ?? policy
        }
    }
}

/// One change or automatic revert in the policy's history.
public struct PolicyHistoryEntry: Sendable, Codable, Equatable {
    /// A set by an operator, or an automatic revert of a timed value.
    public enum Kind: String, Sendable, Codable { case set, revert }
    public let version: Int
    public let key: String
    public let kind: Kind
    public let from: PolicyValue
    public let to: PolicyValue
    public let actor: String
    public let reason: String
    /// When the value took effect (for a revert, when the timed value expired).
    public let effectiveAt: Timestamp
    /// When the row was written; nil for a revert that is due but not yet written.
    public let recordedAt: Timestamp?
    public let revertsAt: Timestamp?
    /// A revert computed on read, to be written by the next policy change.
    public let pending: Bool

    init(version: Int, key: String, kind: Kind, from: PolicyValue, to: PolicyValue, actor: String, reason: String,
         effectiveAt: Timestamp, recordedAt: Timestamp?, revertsAt: Timestamp?, pending: Bool) {
        self.version = version
        self.key = key
        self.kind = kind
        self.from = from
        self.to = to
        self.actor = actor
        self.reason = reason
        self.effectiveAt = effectiveAt
        self.recordedAt = recordedAt
        self.revertsAt = revertsAt
        self.pending = pending
    }

    init(row: Row) throws {
        func value(_ column: String) throws -> PolicyValue {
            guard let value = PolicyValue(json: try row.string(column)) else {
                throw GatehouseError("gatehouse_policy_history version \(row["version"].int64 ?? 0) holds an unreadable \(column)", code: .corrupt)
            }
            return value
        }
        self.init(version: try row.int("version"), key: try row.string("key"), kind: Kind(rawValue: try row.string("kind")) ?? .set,
                  from: try value("old_value_json"), to: try value("new_value_json"), actor: try row.string("actor"), reason: try row.string("reason"),
                  effectiveAt: Timestamp(iso8601: try row.string("effective_at")) ?? Timestamp(milliseconds: 0),
                  recordedAt: row.optionalString("recorded_at").flatMap(Timestamp.init(iso8601:)),
                  revertsAt: row.optionalString("reverts_at").flatMap(Timestamp.init(iso8601:)), pending: false)
    }
}

/// A stored `gatehouse_policy` row.
struct PolicyRow: Sendable, Equatable {
    var key: PolicyKey
    var value: PolicyValue
    var version: Int
    var setBy: String
    var setAt: Timestamp
    var reason: String
    var revertsAt: Timestamp?
    var previous: PolicyValue?
}

/// A revert that has fallen due, with the version it takes.
struct DueRevert: Sendable {
    let key: PolicyKey
    let from: PolicyValue
    let to: PolicyValue
    let at: Timestamp
    let version: Int
}

/// The stored policy: the version counter and the rows. Computes the effective state at any time.
struct PolicyState: Sendable {
    var version: Int
    var rows: [PolicyKey: PolicyRow]

    static func load(_ db: SQLDatabase) throws -> PolicyState {
        try load(db, extra: []).state
    }

    /// The state and the audit chain's head, read together (a write that appends to both).
    static func loadWithAuditHead(_ db: SQLDatabase) throws -> (PolicyState, AuditLog.Head) {
        let (state, extra) = try load(db, extra: [AuditLog.headStatement])
        return (state, AuditLog.head(extra[0]))
    }

    /// The version and the rows it numbers.
    static var statements: [SQLStatement] { [SQLStatement("SELECT version FROM gatehouse_policy_version WHERE id = 1"), SQLStatement("SELECT * FROM gatehouse_policy")] }

    /// The state, and the rows of `extra` read in the same snapshot.
    private static func load(_ db: SQLDatabase, extra: [SQLStatement]) throws -> (state: PolicyState, extra: [[Row]]) {
        // One snapshot (one round trip on a server): the version and the rows it numbers.
        let read = try db.snapshot(statements + extra)
        let version = read[0].first?[0].int64.map(Int.init) ?? 0
        var rows: [PolicyKey: PolicyRow] = [:]
        // Rows for keys this build does not know (written by a newer Gatehouse) are left alone.
        for row in read[1] {
            guard let key = PolicyKey(rawValue: try row.string("key")) else { continue }
            guard let value = PolicyValue(json: try row.string("value_json")) else {
                throw GatehouseError("gatehouse_policy holds an unreadable value for \(key.rawValue)", fix: "set the key again with \(command: .policySet)", code: .corrupt)
            }
            rows[key] = PolicyRow(key: key, value: value, version: try row.int("version"), setBy: try row.string("set_by"),
                                  setAt: Timestamp(iso8601: try row.string("set_at")) ?? Timestamp(milliseconds: 0), reason: try row.string("reason"),
                                  revertsAt: row.optionalString("reverts_at").flatMap(Timestamp.init(iso8601:)),
                                  previous: row.optionalString("previous_value_json").flatMap(PolicyValue.init(json:)))
        }
        return (PolicyState(version: version, rows: rows), Array(read.dropFirst(2)))
    }

    /// Timed values expired at `now`, in the order they expired, each with the version it takes.
    func dueReverts(now: Timestamp) -> [DueRevert] {
        let due = rows.values.compactMap { row -> (PolicyRow, Timestamp, PolicyValue)? in
            guard let at = row.revertsAt, let previous = row.previous, at <= now else { return nil }
            return (row, at, previous)
        }.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0.key < $1.0.key }
        return due.enumerated().map { index, item in
            DueRevert(key: item.0.key, from: item.0.value, to: item.2, at: item.1, version: version + index + 1)
        }
    }

    /// The state with every due revert applied, as the next write will record it.
    func effective(now: Timestamp) -> PolicyState {
        var state = self
        for revert in dueReverts(now: now) {
            state.rows[revert.key] = PolicyRow(key: revert.key, value: revert.to, version: revert.version, setBy: PolicyStore.timerActor.name,
                                               setAt: revert.at, reason: PolicyStore.expiredReason, revertsAt: nil, previous: nil)
            state.version = revert.version
        }
        return state
    }

    func snapshot(now: Timestamp) -> PolicySnapshot {
        let state = effective(now: now)
        let entries = PolicyKey.allCases.map { key -> PolicyEntry in
            let row = state.rows[key]
            return PolicyEntry(key: key.rawValue, type: key.kind, value: row?.value ?? key.defaultValue, defaultValue: key.defaultValue,
                               isDefault: row == nil, changedInVersion: row?.version, setBy: row?.setBy, setAt: row?.setAt, reason: row?.reason,
                               revertsAt: row?.revertsAt, revertsTo: row?.previous, summary: key.summary)
        }
        let policy = entries.reduce(LinkingPolicy.defaults) { $0.setting(PolicyKey(rawValue: $1.key)!, $1.value) }
        return PolicySnapshot(version: state.version, at: now, entries: entries, risks: policy.risks,
                              nextRevertAt: state.rows.values.compactMap(\.revertsAt).min())
    }
}

extension PolicyStore {
    /// Opens the store at `path` for this service. Its first reads go with the opening's own where the engine pays a
    /// request per question: the policy (what `snapshot` reads), and with `toChange` the audit chain's head too (what
    /// `set` reads, `PolicyState.loadWithAuditHead`).
    public static func open(path: String, configurationPath: String? = nil, toChange: Bool = false) throws -> PolicyStore {
        PolicyStore(store: try Store.open(path: path, configurationPath: configurationPath,
                                          startingWith: PolicyState.statements + (toChange ? [AuditLog.headStatement] : [])))
    }
}
