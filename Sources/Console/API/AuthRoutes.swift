import Gatehouse
import HTTPServer

/// The console's login and token lifecycle:
///
/// - `POST /api/auth/login` {username, password} → {accessToken, refreshToken, expiresIn, username, role} (public)
/// - `POST /api/auth/refresh` {refreshToken} → a new bundle; the old refresh token is consumed (public)
/// - `POST /api/auth/logout` → revokes this login's token family (viewer)
/// - `GET /api/auth/me` → {username, role, expiresAt} (viewer)
/// - `GET /api/auth/setup` → {hasAdmins, command?} (public): whether anyone can log in yet, and, when nobody can,
///   the command that creates the first admin on this store (the login page shows it)
///
/// A refused password is 401 `invalid_credentials` (no `x-auth-error`); a throttled login is 429
/// with `Retry-After`. A refused refresh token is 401 with `x-auth-error`; on this route every such
/// 401 (even `token_expired`) means "log in again".
enum AuthRoutes {
    struct LoginRequest: Decodable {
        let username: String
        let password: String
    }

    struct RefreshRequest: Decodable {
        let refreshToken: String
    }

    struct Me: Encodable {
        let username: String
        let role: AdminRole
        let expiresAt: Timestamp
    }

    struct Setup: Encodable {
        let hasAdmins: Bool
        /// Only while the store has no admin: the store's place is no secret then, and the page needs it.
        let command: String?
    }

    struct LoggedOut: Encodable {
        let loggedOut = true
    }

    static func register(on router: inout Router) {
        router.addPublic("POST", "/api/auth/login") { ctx in
            let body = try ctx.body(LoginRequest.self)
            let bundle = try ctx.stores.withStore {
                try ctx.tokens($0).login(username: body.username, password: AdminPassword(presented: body.password),
                                          client: ctx.request.remoteAddress, now: ctx.now)
            }
            return try JSONBody.response(bundle)
        }
        router.addPublic("GET", "/api/auth/setup") { ctx in
            let setup = try ctx.stores.withStore { store in
                try AdminDirectory(store: store).count() > 0 ? Setup(hasAdmins: true, command: nil)
                    : Setup(hasAdmins: false, command: FirstAdmin.setupCommand(store: store.location))
            }
            return try JSONBody.response(setup)
        }
        router.addPublic("POST", "/api/auth/refresh") { ctx in
            let body = try ctx.body(RefreshRequest.self)
            return try JSONBody.response(try ctx.stores.withStore { try ctx.tokens($0).refresh(body.refreshToken, now: ctx.now) })
        }
        router.add("POST", "/api/auth/logout", role: .viewer) { ctx in
            let session = try ctx.requireSession()
            try ctx.stores.withStore { try ctx.tokens($0).logout(session, now: ctx.now) }
            return try JSONBody.response(LoggedOut())
        }
        // Inline: the token check is one primary-key lookup.
        router.addInline("/api/auth/me", role: .viewer) { ctx in
            let session = try ctx.requireSession()
            return try JSONBody.response(Me(username: session.admin.username, role: session.admin.role, expiresAt: session.expiresAt))
        }
    }
}
