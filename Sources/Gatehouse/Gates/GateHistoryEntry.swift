import Storage

/// One change in `gatehouse_gate_history`: a requirement declared, a gate enabled or disabled.
public struct GateHistoryEntry: Sendable, Codable, Equatable {
    /// What was done.
    public enum Action: String, Sendable, Codable { case set, enable, disable }

    /// The row id: the order changes were made in.
    public let id: Int64
    /// When, by whom, and what.
    public let at: Timestamp
    public let actor: String
    public let action: Action
    /// The provider changed.
    public let provider: String
    /// The platform, or `all` for a requirement declared for every platform.
    public let platform: String
    /// set: the requirement, whether it was declared met, its expiry, and whether --force accepted a past date.
    public let requirement: String?
    public let met: Bool?
    public let expiresAt: Timestamp?
    public let forced: Bool
    /// enable/disable: the gate's state before and after.
    public let fromState: GateState?
    public let toState: GateState?
    /// set: the evidence; enable/disable: the reason.
    public let text: String

    init(row: Row) throws {
        id = row["id"].int64 ?? 0
        at = Timestamp(iso8601: try row.string("at")) ?? Timestamp(milliseconds: 0)
        actor = try row.string("actor")
        action = Action(rawValue: try row.string("action")) ?? .set
        provider = try row.string("provider")
        platform = try row.string("platform")
        requirement = row["requirement"].string
        met = row["met"].int64.map { $0 == 1 }
        expiresAt = row["expires_at"].string.flatMap(Timestamp.init(iso8601:))
        forced = row["forced"].int64 == 1
        fromState = row["from_state"].string.flatMap(GateState.init(rawValue:))
        toState = row["to_state"].string.flatMap(GateState.init(rawValue:))
        text = try row.string("text")
    }
}
