import Gatehouse

/// Who may call a route.
public enum RouteAccess: Sendable, Equatable, CustomStringConvertible {
    /// Anyone who passes the request guard: login, refresh, and the status the login page shows.
    case `public`
    /// A signed-in admin whose role includes this one.
    case role(AdminRole)

    public var description: String {
        switch self {
        case .public: return "public"
        case .role(let role): return role.rawValue
        }
    }
}
