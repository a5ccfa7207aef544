import Gatehouse

/// What a route asks of the signed-in admin's second factor, beyond their role (`Router.add(…, factor:)`).
public struct RouteFactorRule: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// An irreversible or security-relevant write: an admin with a factor needs a factor check within the step-up
    /// window (`AuthSettings.stepUpWindow`), else 403 `step_up_required`.
    public static let stepUp = RouteFactorRule(rawValue: 1)
    /// Open to an admin without a factor while the store requires one (enrolment, and the session's own routes);
    /// every other route answers them 403 `mfa_enrollment_required`.
    public static let enrolment = RouteFactorRule(rawValue: 2)
}

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
