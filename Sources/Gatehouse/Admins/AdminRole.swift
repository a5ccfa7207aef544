/// What a console admin may do. Roles are ordered: each includes everything the one before it may do.
///
/// - `viewer`: every read.
/// - `support`: plus user merges and the link simulator.
/// - `admin`: everything, including Apple keys, policy, gates and admins.
///
///     AdminRole.support.allows(.viewer)   // true
///     AdminRole.viewer.allows(.admin)     // false
public enum AdminRole: String, CaseIterable, Sendable, Codable, Comparable {
    case viewer
    case support
    case admin

    private var rank: Int {
        switch self {
        case .viewer: return 0
        case .support: return 1
        case .admin: return 2
        }
    }

    public static func < (lhs: AdminRole, rhs: AdminRole) -> Bool { lhs.rank < rhs.rank }

    /// Whether this role may do what `required` may do.
    public func allows(_ required: AdminRole) -> Bool { self >= required }

    /// The role with this name, or an error listing the roles.
    public static func named(_ text: String) throws -> AdminRole {
        guard let role = AdminRole(rawValue: text.lowercased()) else {
            throw GatehouseError.invalid("\"\(text.prefix(40))\" is not a role", fix: "use one of: viewer, support, admin")
        }
        return role
    }
}
