import HTTPServer

/// Which API routes run in the handler pool's slow lane (`HTTPServer.Lane.slow`): those whose cost is a
/// password hash or grows with the store (search, scans, checks over every row, exports). However many
/// of them are queued, one handler thread stays free for every other route, so a flood of logins or
/// searches cannot starve the console's cheap routes. Listed here in one place, as `METHOD /pattern`.
enum RouteCost {
    static let slowRoutes: Set<String> = [
        "POST /api/auth/login",                // PBKDF2, 600,000 iterations
        "POST /api/apple/export",              // asks for the password again
        "POST /api/apple/secret/mint",         // asks for the password again
        "POST /api/apple/keys/:id/selftest",
        "GET /api/users",                      // search
        "GET /api/users/duplicates",
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
        slowRoutes.contains("\(method) /\(segments.joined(separator: "/"))") ? .slow : .standard
    }
}
