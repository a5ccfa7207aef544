import Storage

/// Where a console admin comes from.
public enum AdminSource: String, Sendable, Codable, CaseIterable {
    /// Made on the host (`admins add`), with a password.
    case local
    /// Made by their first single sign-on through the company's OpenID provider (`sso set`); their username is their
    /// email, they have no password, and each sign-in takes their role from the provider's groups.
    case sso
}

/// A console admin as listed: never the password hash.
public struct Admin: Sendable, Codable, Equatable {
    public let id: Int64
    public let username: String
    public let role: AdminRole
    public let disabled: Bool
    public let createdAt: Timestamp
    public let updatedAt: Timestamp
    /// `local` or `sso`.
    public let source: AdminSource
    /// When they last signed in to the console (nil: never, or before this was recorded).
    public let lastLoginAt: Timestamp?

    /// The actor recorded in the audit log for changes this admin makes through the console.
    public var consoleActor: Actor { Actor("console:\(username)") }

    /// The columns `init(row:)` reads, for a `SELECT` from `gatehouse_admins`.
    static let columns = "id, username, role, disabled, created_at, updated_at, source, last_login_at"

    /// Reads an admin's row; `source` and `last_login_at` may be absent from the select (then local, never).
    init(row: Row) throws {
        id = row["id"].int64 ?? 0
        username = try row.string("username")
        role = AdminRole(rawValue: try row.string("role")) ?? .viewer
        disabled = row.bool("disabled")
        createdAt = Timestamp(iso8601: row["created_at"].string ?? "") ?? Timestamp(milliseconds: 0)
        updatedAt = Timestamp(iso8601: row["updated_at"].string ?? "") ?? Timestamp(milliseconds: 0)
        source = row["source"].string.flatMap(AdminSource.init(rawValue:)) ?? .local
        lastLoginAt = row["last_login_at"].string.flatMap(Timestamp.init(iso8601:))
    }
}
