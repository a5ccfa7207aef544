import Gatehouse
import HTTPServer

/// Wraps every `/api` route: a route with a minimum role needs `Authorization: Bearer <access token>`
/// of an admin with that role. Refusals are 401 with `x-auth-error` (`token_expired`, `token_reuse`,
/// `token_revoked`, `invalid_token`), or 403 `forbidden_role` when the role is too low. Then the route's factor rule
/// (`RouteFactorRule`): 403 `mfa_enrollment_required` while the store requires a factor the admin has not enrolled
/// (but on enrolment routes), and 403 `step_up_required` on a step-up route when the admin has a factor and their
/// login's last factor check is older than the step-up window.
enum AuthMiddleware {
    /// Checks the token, then runs `next`; on a cheap read route (`deferring`), the check goes with the handler's
    /// first snapshot (`TokenCheck`) and the handler's response is kept only if the check then allows it.
    static func handle(_ context: RequestContext, access: RouteAccess, factor: RouteFactorRule = [], deferring: Bool = false,
                       next: Router.Handler) throws -> HTTPResponse {
        guard case .role(let required) = access else { return try next(context) }
        guard let token = bearerToken(context.request) else { throw APIError.unauthenticated(.invalid) }
        if deferring {
            let check = try TokenCheck(token: token, required: required, factor: factor, stepUpWindow: context.auth.stepUpWindow,
                                       now: context.now, pool: context.stores.pool, deadline: context.stores.deadline)
            var deferred = context
            deferred.stores = RequestStores(pool: context.stores.pool, check: check, deadline: context.stores.deadline)
            let response = Result { try next(deferred) }
            // A refused token is the answer, whatever the handler returned or ran into.
            _ = try check.session()
            return try response.get()
        }
        let session = try context.stores.withStore { try context.tokens($0).authenticate(accessToken: token, now: context.now) }
        if let refusal = refusal(session, required: required) ?? refusal(session, factor: factor, window: context.auth.stepUpWindow, now: context.now) {
            throw refusal
        }
        var authenticated = context
        authenticated.session = session
        return try next(authenticated)
    }

    /// 403 `forbidden_role` when the session's role is below `required`.
    static func refusal(_ session: AdminSession, required: AdminRole) -> APIError? {
        guard !session.admin.role.allows(required) else { return nil }
        return APIError(status: 403, code: "forbidden_role",
                        message: "this needs the \(required.rawValue) role; \(session.admin.username) is \(session.admin.role.rawValue)",
                        fix: "ask an admin to run `gatehouse admins` to change roles, or sign in as another admin")
    }

    /// 403 `mfa_enrollment_required` or `step_up_required` when the session does not meet the route's factor rule.
    static func refusal(_ session: AdminSession, factor: RouteFactorRule, window: Seconds, now: Timestamp) -> APIError? {
        if session.mfaRequired && !session.hasFactor && !factor.contains(.enrolment) {
            return APIError(status: 403, code: "mfa_enrollment_required",
                            message: "this store requires a second factor of every admin; \(session.admin.username) has none yet",
                            fix: "enrol one on the Account security page (POST /api/auth/mfa/totp)")
        }
        if factor.contains(.stepUp) && !session.hasFreshFactorCheck(window: window, now: now) {
            return APIError(status: 403, code: "step_up_required",
                            message: "this change needs your second factor again (the last check is older than \(window.value) s)",
                            fix: "prove your factor (POST /api/auth/step-up), then retry")
        }
        return nil
    }

    /// The token of an `Authorization: Bearer …` header.
    static func bearerToken(_ request: HTTPRequest) -> String? {
        guard let value = request.header("authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        // Usually there is nothing to trim, and Foundation's trimming is costly on every request.
        if parts[1].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) { return String(parts[1]) }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
