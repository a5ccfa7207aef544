import Gatehouse
import HTTPServer

/// Deleting a user on request, over `UserDeletionPlanner`, `UserDeletionApplier`, `UserDeletionUndo` and
/// `UserDeletionRecords`, answering what `gatehouse users delete … --json` prints (never a row's values). Admin only:
/// a deletion takes everything of a person.
///
/// - `POST /api/users/:id/deletion/plan` {ticket} → `{plan, email}` (admin)
/// - `POST /api/deletions/:planId/apply` {confirmEmail, noRevoke?, reason?, retain?} → what was deleted and revoked (admin)
/// - `POST /api/deletions/:id/undo` {reason} → what was restored (admin)
/// - `POST /api/deletions/purge` → the deletions whose sealed rows were destroyed (admin)
/// - `GET /api/deletions?limit` → deletions, newest first (admin)
/// - `GET /api/deletions/:id` → one deletion (admin)
enum UserDeletionRoutes {
    static func register(on router: inout Router) {
        router.add("POST", "/api/users/:id/deletion/plan", role: .admin) { ctx in
            let body = try ctx.body(UserDeletionPlanRequest.self)
            let user = ctx.parameters["id"] ?? ""
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore { store in
                let planner = UserDeletionPlanner(store: store)
                let plan = try planner.plan(user: user, ticket: body.ticket, actor: actor, now: ctx.now)
                return UserDeletionPlanResponse(plan: plan, email: try planner.currentEmail(of: plan.userID) ?? "")
            })
        }
        router.add("POST", "/api/deletions/purge", role: .admin, factor: .stepUp) { ctx in
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore { try UserDeletionRecords(store: $0).purge(actor: actor, now: ctx.now) })
        }
        router.add("POST", "/api/deletions/:planId/apply", role: .admin, factor: .stepUp, approval: .userDelete) { ctx in
            let body = try ctx.body(UserDeletionApplyRequest.self)
            let planID = ctx.parameters["planId"] ?? ""
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore { store in
                let applier = UserDeletionApplier(store: store)
                let plan = try applier.plan(planID)
                let email = try UserDeletionPlanner(store: store).currentEmail(of: plan.userID) ?? ""
                guard !email.isEmpty, JavaScriptString.toLowerCase(body.confirmEmail.trimmingCharacters(in: .whitespaces)) == email else {
                    throw APIError.badRequest("\"confirmEmail\" is not the email of the user this plan deletes", fix: "type the user's email exactly as the page shows it")
                }
                return try applier.apply(planID: planID, revocation: try body.revocation(store: store, actor: actor),
                                         retain: body.retain?.seconds ?? UserDeletionApplier.defaultRetention, actor: actor, now: ctx.now)
            })
        }
        router.add("POST", "/api/deletions/:id/undo", role: .admin, factor: .stepUp) { ctx in
            let body = try ctx.body(UserDeletionUndoRequest.self)
            let id = ctx.parameters["id"] ?? ""
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore { try UserDeletionUndo(store: $0).undo(deletionID: id, reason: body.reason, actor: actor, now: ctx.now) })
        }
        router.add("GET", "/api/deletions", role: .admin) { ctx in
            let limit = try ctx.integerQuery("limit", default: 100, range: 1...10_000)
            return try JSONBody.response(try ctx.stores.withStore { try UserDeletionRecords(store: $0).list(limit: limit) })
        }
        router.add("GET", "/api/deletions/:id", role: .admin) { ctx in
            let id = ctx.parameters["id"] ?? ""
            return try JSONBody.response(try ctx.stores.withStore { try UserDeletionRecords(store: $0).show(id) })
        }
    }
}
