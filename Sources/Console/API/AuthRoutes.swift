import Foundation
import Gatehouse
import HTTPServer

/// The console's login and token lifecycle:
///
/// - `POST /api/auth/login` {username, password} → {accessToken, refreshToken, expiresIn, username, role} (public); for an
///   admin with a second factor, {mfaRequired: true, mfaToken, methods, expiresAt, webauthn?} and no token
/// - `POST /api/auth/login/mfa` {mfaToken, method, code} → the token bundle (public); the mfaToken is single use and
///   lasts 5 minutes (401 `invalid_mfa_token`, `mfa_token_used`, `mfa_token_expired`); a wrong code is 401
///   `invalid_code` and counts toward the login throttle
/// - `POST /api/auth/step-up/options` → {methods, webauthn?, window} (viewer); `POST /api/auth/step-up` {method, code} → {factorCheckedAt}
///   (viewer): routes registered with `factor: .stepUp` then answer for the step-up window
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

    struct SecondFactorRequest: Decodable {
        let mfaToken: String
        let method: String
        /// A TOTP or recovery code; a passkey's answer is the body's `credential` (see `answer`).
        let code: String?
    }

    struct StepUpRequest: Decodable {
        let method: String
        let code: String?
    }

    /// What a factor's check is given: the `code`, or the body's `credential` (a WebAuthn
    /// `AuthenticationResponseJSON`) as JSON text for the verifier.
    static func answer(code: String?, request: HTTPRequest) -> String {
        if let code { return code }
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
              let credential = body["credential"], JSONSerialization.isValidJSONObject(credential),
              let data = try? JSONSerialization.data(withJSONObject: credential) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    struct StepUpOptionsResponse: Encodable {
        let methods: [SecondFactorMethod]
        let webauthn: WebAuthnRequestOptions?
        let window: Int64
    }

    struct SteppedUp: Encodable {
        let factorCheckedAt: Timestamp
        let window: Int64
    }

    struct RefreshRequest: Decodable {
        let refreshToken: String
    }

    struct Me: Encodable {
        let username: String
        let role: AdminRole
        let expiresAt: Timestamp
        let hasFactor: Bool
        let mfaRequired: Bool
        let factorCheckedAt: Timestamp?
        /// `local` or `sso` (an SSO admin has no password to re-enter).
        let source: AdminSource
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
            let outcome = try ctx.stores.withStore {
                try ctx.tokens($0).signIn(username: body.username, password: AdminPassword(presented: body.password),
                                          client: ctx.request.remoteAddress, now: ctx.now)
            }
            switch outcome {
            case .signedIn(let bundle): return try JSONBody.response(bundle)
            case .secondFactor(let challenge): return try JSONBody.response(challenge)
            }
        }
        router.addPublic("POST", "/api/auth/login/mfa") { ctx in
            let body = try ctx.body(SecondFactorRequest.self)
            let method = try method(body.method)
            return try JSONBody.response(try ctx.stores.withStore {
                try ctx.tokens($0).completeSignIn(mfaToken: body.mfaToken, method: method, answer: answer(code: body.code, request: ctx.request), client: ctx.request.remoteAddress, now: ctx.now)
            })
        }
        router.add("POST", "/api/auth/step-up/options", role: .viewer) { ctx in
            let session = try ctx.requireSession()
            let options = try ctx.stores.withStore { try ctx.tokens($0).stepUpOptions(session, now: ctx.now) }
            return try JSONBody.response(StepUpOptionsResponse(methods: options.methods, webauthn: options.webauthn, window: ctx.auth.stepUpWindow.value))
        }
        router.add("POST", "/api/auth/step-up", role: .viewer) { ctx in
            let session = try ctx.requireSession()
            let body = try ctx.body(StepUpRequest.self)
            let method = try method(body.method)
            try ctx.stores.withStore {
                try ctx.tokens($0).stepUp(session, method: method, answer: answer(code: body.code, request: ctx.request),
                                          client: ctx.request.remoteAddress, now: ctx.now)
            }
            return try JSONBody.response(SteppedUp(factorCheckedAt: ctx.now, window: ctx.auth.stepUpWindow.value))
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
        router.add("POST", "/api/auth/logout", role: .viewer, factor: .enrolment) { ctx in
            let session = try ctx.requireSession()
            try ctx.stores.withStore { try ctx.tokens($0).logout(session, now: ctx.now) }
            return try JSONBody.response(LoggedOut())
        }
        // Inline: the token check is one primary-key lookup.
        router.addInline("/api/auth/me", role: .viewer, factor: .enrolment) { ctx in
            let session = try ctx.requireSession()
            return try JSONBody.response(Me(username: session.admin.username, role: session.admin.role, expiresAt: session.expiresAt,
                                            hasFactor: session.hasFactor, mfaRequired: session.mfaRequired, factorCheckedAt: session.factorCheckedAt, source: session.admin.source))
        }
    }

    /// A request's `method` as a second-factor method (400 naming the choices).
    static func method(_ text: String) throws -> SecondFactorMethod {
        guard let method = try APIError.choice(text, field: "method", as: SecondFactorMethod.self) else {
            throw APIError.badRequest("method is empty", fix: "one of webauthn, totp, recovery")
        }
        return method
    }
}
