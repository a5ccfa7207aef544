import Gatehouse
import HTTPServer

/// Merging a split identity, over `MergePlanner`, `MergeApplier`, `MergeUndo` and `MergeRecords`,
/// answering what `gatehouse merge … --json` prints and never a row's values (the stored plan holds
/// token values and password hashes; only `MergePlanView` leaves the server):
///
/// - `POST /api/merges/plan` {from, into, keepEmail?, keepSubscription?, keepPassword?, sameProvider?, carryRoles?}
///   → `{plan, decisions}`: the readable diff, conflicts and decisions, warnings, and the plan id once every
///   conflict is decided (`plan.planID` is null and `plan.unresolved` counts what is missing before) (support)
/// - `POST /api/merges/:planId/apply` {ticket} → what was applied, in one transaction (support)
/// - `POST /api/merges/:id/undo` {reason} → what was restored (support)
/// - `GET /api/merges?limit` → merges, newest first, with who each joined by name and email (viewer)
/// - `GET /api/merges/:id` → one merge with every row it touched, without values, and who it joined (viewer)
enum MergeRoutes {
    static func register(on router: inout Router) {
        router.add("POST", "/api/merges/plan", role: .support) { ctx in
            let body = try ctx.body(MergePlanRequest.self)
            let decisions = try body.decisions()
            let actor = try ctx.actor
            let plan = try ctx.stores.withStore {
                try MergePlanner(store: $0).plan(source: body.from, target: body.into, decisions: decisions, actor: actor, now: ctx.now)
            }
            return try JSONBody.response(MergePlanResponse(plan))
        }
        router.add("POST", "/api/merges/:planId/apply", role: .support, factor: .stepUp, approval: .mergeApply) { ctx in
            let body = try ctx.body(MergeApplyRequest.self)
            let planID = ctx.parameters["planId"] ?? ""
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore {
                try MergeApplier(store: $0).apply(planID: planID, ticket: body.ticket, actor: actor, now: ctx.now)
            })
        }
        router.add("POST", "/api/merges/:id/undo", role: .support, factor: .stepUp, approval: .mergeUndo) { ctx in
            let body = try ctx.body(MergeUndoRequest.self)
            let mergeID = ctx.parameters["id"] ?? ""
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore {
                try MergeUndo(store: $0).undo(mergeID: mergeID, reason: body.reason, actor: actor, now: ctx.now)
            })
        }
        router.add("GET", "/api/merges", role: .viewer) { ctx in
            let limit = try ctx.integerQuery("limit", default: 100, range: 1...10_000)
            return try JSONBody.response(try ctx.stores.withStore { store in
                let records = MergeRecords(store: store)
                return try records.list(limit: limit).map { try MergeRecordResponse($0, in: records) }
            })
        }
        router.add("GET", "/api/merges/:id", role: .viewer) { ctx in
            let id = ctx.parameters["id"] ?? ""
            return try JSONBody.response(try ctx.stores.withStore { store in
                let records = MergeRecords(store: store)
                return try MergeRecordResponse(try records.show(id), in: records)
            })
        }
    }
}
