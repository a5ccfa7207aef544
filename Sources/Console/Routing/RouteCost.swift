import HTTPServer

/// Which API routes run in the handler pool's priority and slow lanes (`HTTPServer.Lane`). Slow routes cost a
/// password hash or grow with the store (search, scans, checks over every row, exports): however many of them are
/// queued, handler threads stay free for every other route, so a flood of searches or health checks cannot starve
/// the console's cheap routes. The login is the one costly route that must never wait behind them (an admin locked
/// out by a viewer's flood): it goes in the priority lane, taken before slow work. Listed here in one place, as
/// `METHOD /pattern`.
enum RouteCost {
    static let priorityRoutes: Set<String> = [
        "POST /api/auth/login",                // PBKDF2, 600,000 iterations
        "POST /api/auth/login/mfa",            // the login's second step: no lockout behind slow work either
    ]

    static let slowRoutes: Set<String> = [
        "POST /api/apple/export",              // asks for the password again
        "POST /api/auth/mfa/totp",             // asks for the password again
        "POST /api/apple/secret/mint",         // asks for the password again
        "POST /api/apple/keys/:id/selftest",
        "GET /api/users",                      // search
        "GET /api/users/duplicates",
        "GET /api/users/:id/duplicates",       // a name search for one user
        "GET /api/accounts/check",
        "GET /api/audit/verify",               // the whole hash chain
        "GET /api/health",                     // every check
        "GET /api/status",                     // row counts
        "GET /api/gates/export",
        "POST /api/policy/simulate",
        "POST /api/merges/plan",
    ]

    /// The lane of a route given as `method` and its pattern's segments.
    static func lane(method: String, segments: [String]) -> HTTPServer.Lane {
        let route = "\(method) /\(segments.joined(separator: "/"))"
        return priorityRoutes.contains(route) ? .priority : slowRoutes.contains(route) ? .slow : .standard
    }
}
