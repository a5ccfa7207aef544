import Gatehouse
import HTTPServer

/// The Apple-membership gate, over `GateStore` (with Guideline 4.8 and the membership's renewal as it
/// computes them), answering what `gatehouse gates … --json` prints:
///
/// - `GET /api/gates` → `{board, rule, requirements}`: every provider × platform with its state, unmet
///   requirements and how to meet them, the membership's renewal, the Guideline 4.8 verdict (viewer)
/// - `POST /api/gates/requirements` {provider, requirement, platform?, met, evidence, expires?, force?} → what changed (admin)
/// - `POST /api/gates/enable`, `POST /api/gates/disable` {provider, platform, reason} → the gate after (admin)
/// - `GET /api/gates/history?limit` → declarations, enables and disables, newest first (viewer)
/// - `GET /api/gates/export` → which providers the app should offer on each platform (viewer)
///
/// Refusals keep the service's words (the gate's own codes get their HTTP status in `APIError`).
enum GateRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/gates", role: .viewer) { ctx in
            try JSONBody.response(GateBoardResponse(board: try ctx.stores.withStore { try GateStore(store: $0).board(now: ctx.now) }))
        }
        router.add("POST", "/api/gates/requirements", role: .admin, factor: .stepUp) { ctx in
            let change = try ctx.body(GateSetRequest.self).change()
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore { try GateStore(store: $0).set(change, actor: actor, now: ctx.now) })
        }
        for (path, enable) in [("/api/gates/enable", true), ("/api/gates/disable", false)] {
            router.add("POST", path, role: .admin, factor: .stepUp, approval: enable ? .gateEnable : nil) { ctx in
                let body = try ctx.body(GateToggleRequest.self)
                let (provider, platform) = try body.gate()
                let actor = try ctx.actor
                return try JSONBody.response(try ctx.stores.withStore { store in
                        let gates = GateStore(store: store)
                        return enable
                            ? try gates.enable(provider, on: platform, reason: body.reason, actor: actor, now: ctx.now)
                            : try gates.disable(provider, on: platform, reason: body.reason, actor: actor, now: ctx.now)
                })
            }
        }
        router.add("GET", "/api/gates/history", role: .viewer) { ctx in
            let limit = try ctx.integerQuery("limit", default: 200, range: 1...100_000)
            return try JSONBody.response(try ctx.stores.withStore { try GateStore(store: $0).history(limit: limit) })
        }
        router.add("GET", "/api/gates/export", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { try GateStore(store: $0).export(now: ctx.now) })
        }
    }
}
