import Storage

/// A console admin as listed: never the password hash.
public struct Admin: Sendable, Codable, Equatable {
    public let id: Int64
    public let username: String
    public let role: AdminRole
    public let disabled: Bool
    public let createdAt: Timestamp
    public let updatedAt: Timestamp

    /// The actor recorded in the audit log for changes this admin makes through the console.
    public var consoleActor: Actor { Actor("console:\(username)") }

    init(row: Row) throws {
        id = row["id"].int64 ?? 0
        username = try row.string("username")
        role = AdminRole(rawValue: try row.string("role")) ?? .viewer
        disabled = row.bool("disabled")
        createdAt = Timestamp(iso8601: row["created_at"].string ?? "") ?? Timestamp(milliseconds: 0)
        updatedAt = Timestamp(iso8601: row["updated_at"].string ?? "") ?? Timestamp(milliseconds: 0)
    }
}
