import Gatehouse
import HTTPServer

/// Two-person approval, over `ApprovalStore` and `ApprovalGate`, answering what `gatehouse approvals … --json` prints:
///
/// - `GET /api/approvals?status=pending|all&limit` → requests, newest first: the pending ones by default (support:
///   support staff see what they asked for)
/// - `GET /api/approvals/settings` → which actions need approval and how long a request waits (viewer)
/// - `GET /api/approvals/:id` → one request with its body and the detail the reviewer needs (support)
/// - `POST /api/approvals/:id/approve` → runs the request as it was made, as the action's own answer (with
///   `X-Approval-Id`); 403 `self_approval` for the admin who asked, 409 `approval_closed` when it is not pending (admin,
///   step-up)
/// - `POST /api/approvals/:id/deny` {reason} → the request, denied (admin; the requester may withdraw their own)
///
/// Which actions need approval is set on the host (`gatehouse approvals require`), not here: a console admin could
/// otherwise turn the second person off alone.
enum ApprovalRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/approvals", role: .support) { ctx in
            let limit = try ctx.integerQuery("limit", default: 200, range: 1...10_000)
            let status = try ctx.textQuery("status", maxLength: 20) ?? "pending"
            guard status == "pending" || status == "all" else { throw APIError.badRequest("?status must be pending or all") }
            return try JSONBody.response(try ctx.stores.withStore {
                try ApprovalStore(store: $0).list(pendingOnly: status == "pending", limit: limit, now: ctx.now)
            })
        }
        router.add("GET", "/api/approvals/settings", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { try ApprovalStore(store: $0).settings() })
        }
        router.add("GET", "/api/approvals/:id", role: .support) { ctx in
            let id = try approvalID(ctx)
            return try JSONBody.response(try ctx.stores.withStore { try ApprovalStore(store: $0).show(id, now: ctx.now) })
        }
        router.add("POST", "/api/approvals/:id/approve", role: .admin, factor: .stepUp) { ctx in
            let id = try approvalID(ctx)
            let session = try ctx.requireSession()
            guard let replay = ctx.replay else { throw APIError(status: 500, code: "internal", message: "approvals cannot run here") }
            return try ApprovalGate.approve(id, approver: session.admin.username, actor: session.actor, context: ctx, runner: replay)
        }
        router.add("POST", "/api/approvals/:id/deny", role: .admin) { ctx in
            struct DenyRequest: Decodable { let reason: String }
            let id = try approvalID(ctx)
            let body = try ctx.body(DenyRequest.self)
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore { try ApprovalStore(store: $0).deny(id, reason: body.reason, actor: actor, now: ctx.now) })
        }
    }

    /// `:id`, a positive whole number, or 400.
    static func approvalID(_ ctx: RequestContext) throws -> Int64 {
        guard let text = ctx.parameters["id"], text.utf8.count <= 18, let id = Int64(text), id > 0 else {
            throw APIError.badRequest("the approval id must be a positive whole number", fix: "take it from GET /api/approvals")
        }
        return id
    }
}
