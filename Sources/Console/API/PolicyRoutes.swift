import Gatehouse
import HTTPServer

/// The account-linking policy over `PolicyStore` and `LinkSimulator`:
///
/// - `GET /api/policy` → the effective policy (viewer)
/// - `POST /api/policy` {key, value, reason, for?, ifVersion?, acceptTakeoverRisk?} → what changed (admin)
/// - `GET /api/policy/history?key&limit` → changes and reverts, newest first (viewer)
/// - `POST /api/policy/simulate` {flow, via?, user?, provider, email?, emailVerified?, accountId?, issuer?, requestSignUp?,
///   providerOptions?, generic?, genericIdTokens?, updateUserInfoOnLink?, with?} → Better Auth's answer (support)
enum PolicyRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/policy", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { try PolicyStore(store: $0).snapshot(now: ctx.now) })
        }
        router.add("POST", "/api/policy", role: .admin, factor: .stepUp, approval: .policySet) { ctx in
            let change = try ctx.body(PolicySetRequest.self).change()
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore { try PolicyStore(store: $0).set(change, actor: actor, now: ctx.now) })
        }
        router.add("GET", "/api/policy/history", role: .viewer) { ctx in
            let key = try ctx.textQuery("key").map { try PolicyKey.named($0) }
            let limit = try ctx.integerQuery("limit", default: 200, range: 1...10_000)
            return try JSONBody.response(try ctx.stores.withStore { try PolicyStore(store: $0).history(key: key, limit: limit, now: ctx.now) })
        }
        router.add("POST", "/api/policy/simulate", role: .support) { ctx in
            let body = try ctx.body(PolicySimulateRequest.self)
            let overrides = try body.overrides()
            let decision = try ctx.stores.withStore { store -> LinkDecision in
                let simulator = LinkSimulator(store: store)
                switch try APIError.choice(body.flow, field: "\"flow\"", as: PolicySimulateRequest.Kind.self) {
                case .link?:
                    guard let user = body.user, !user.isEmpty else {
                        throw APIError.badRequest("a link simulation needs \"user\", the signed-in user's Better Auth id")
                    }
                    return try simulator.simulateLink(user: BetterAuthUserID(user), attempt: try body.attempt(), overrides: overrides, now: ctx.now)
                case .signin?:
                    return try simulator.simulateSignIn(attempt: try body.attempt(), overrides: overrides, now: ctx.now)
                case nil:
                    throw APIError.badRequest("a simulation needs \"flow\": link or signin")
                }
            }
            return try JSONBody.response(decision)
        }
    }
}
