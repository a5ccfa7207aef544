import JOSE
import Storage

/// One request for a second admin's approval: the console request as it was made, who made it, what the reviewer is
/// shown, and how it ended. `body`, `detail` and `outcome` are the JSON they were stored as.
public struct Approval: Sendable, Encodable, Equatable {
    public enum Status: String, Sendable, Codable, CaseIterable {
        case pending, running, approved, failed, denied, expired
    }

    public let id: Int64
    public let action: ApprovalAction
    public let method: String
    public let path: String
    public let query: String?
    public let body: JSONValue?
    /// What the reviewer needs beyond the body (a merge plan's rows, a policy change's value before), at request time.
    public let detail: JSONValue?
    /// The requesting admin's username.
    public let requestedBy: String
    public let requestedAt: Timestamp
    public let expiresAt: Timestamp
    public let status: Status
    /// Who approved or denied it (`console:<username>` or the CLI's actor).
    public let decidedBy: String?
    public let decidedAt: Timestamp?
    /// A denial's reason.
    public let reason: String?
    /// The HTTP status the approved action answered, and its answer (an error's code and message when it failed).
    public let outcomeStatus: Int?
    public let outcome: JSONValue?

    /// What the request asks for, in one line: `merge.apply: POST /api/merges/mp_1/apply`.
    public var summary: String { "\(action.rawValue): \(method) \(path)" }

    static func from(_ row: Row, now: Timestamp) throws -> Approval {
        let json = { (column: String) -> JSONValue? in
            guard let text = row[column].string else { return nil }
            return try? JSONValue.parse(Array(text.utf8))
        }
        let time = { (column: String) throws -> Timestamp in
            guard let value = row[column].string.flatMap(Timestamp.init(iso8601:)) else {
                throw GatehouseError("approval \(row["id"].int64 ?? 0) has no readable \(column)", code: .corrupt)
            }
            return value
        }
        let expires = try time("expires_at")
        var status = Status(rawValue: try row.string("status")) ?? .failed
        if status == .pending && expires <= now { status = .expired }
        return Approval(id: row["id"].int64 ?? 0, action: try ApprovalAction.named(try row.string("action")), method: try row.string("method"),
                        path: try row.string("path"), query: row["query"].string, body: json("body"), detail: json("detail"),
                        requestedBy: try row.string("requested_by"), requestedAt: try time("requested_at"), expiresAt: expires,
                        status: status, decidedBy: row["decided_by"].string, decidedAt: row["decided_at"].string.flatMap(Timestamp.init(iso8601:)),
                        reason: row["reason"].string, outcomeStatus: row["outcome_status"].int64.map(Int.init), outcome: json("outcome"))
    }
}

/// Which actions need approval, and how long a request waits.
public struct ApprovalSettings: Sendable, Encodable, Equatable {
    public static let defaultExpiry = Seconds(24 * 3600)
    public static let expiryRange: ClosedRange<Int64> = 60...(30 * 86_400)

    public let actions: [ApprovalAction]
    public let expiresAfter: Seconds
    public let updatedAt: Timestamp?
    public let updatedBy: String?

    public static let none = ApprovalSettings(actions: [], expiresAfter: defaultExpiry, updatedAt: nil, updatedBy: nil)

    public func requires(_ action: ApprovalAction) -> Bool { actions.contains(action) }

    private enum CodingKeys: String, CodingKey { case actions, expiresAfter, updatedAt, updatedBy }

    /// `expiresAfter` in whole seconds.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(actions, forKey: .actions)
        try container.encode(expiresAfter.value, forKey: .expiresAfter)
        try container.encodeIfPresent(updatedAt, forKey: .updatedAt)
        try container.encodeIfPresent(updatedBy, forKey: .updatedBy)
    }
}
