import Foundation
import Gatehouse
import HTTPServer
import JOSE

/// An approved request running again: who asked, who approved, which approval.
public struct ApprovedRun: Sendable, Equatable {
    public let approvalID: Int64
    public let requestedBy: String
    public let approver: Actor

    /// The actor the action's own audit entry names: both admins.
    public var actor: Actor { ApprovalStore.actor(requestedBy: requestedBy, approvedBy: approver, approval: approvalID) }
}

/// Two-person approval at the router: a route declared with an `approval` action is held when the store requires that
/// action. The request is recorded as it was made (after its role and factor checks passed) and answered 202
/// {approvalId, status: "pending"}; nothing else changes. When another admin approves it, `run` sends the same request
/// through the same route again, against the store as it is then, with `RequestContext.approved` set.
enum ApprovalGate {
    /// What a held request is answered.
    struct Pending: Encodable {
        let approvalId: Int64
        let status = "pending"
        let action: String
        let expiresAt: Timestamp
        let message: String
    }

    /// 202 when `action` needs approval and this request is not itself an approved one; nil to go on.
    static func hold(_ action: ApprovalAction, _ context: RequestContext) throws -> HTTPResponse? {
        guard context.approved == nil else { return nil }
        let session = try context.requireSession()
        let body = try bodyText(context.request)
        let approval: Approval? = try context.stores.withStore { store in
            let approvals = ApprovalStore(store: store)
            let settings = try approvals.settings()
            guard settings.requires(action) else { return nil }
            let detail = ApprovalDetail.text(action, context, store)
            return try approvals.request(action, method: context.request.method, path: context.request.path, query: context.request.query,
                                         body: body, detail: detail, requester: session.admin.username, actor: session.actor,
                                         settings: settings, now: context.now)
        }
        guard let approval else { return nil }
        return try JSONBody.response(Pending(approvalId: approval.id, action: action.rawValue, expiresAt: approval.expiresAt,
                                             message: "\(action.summary.prefix(1).uppercased() + action.summary.dropFirst()) needs a second admin's approval: request \(approval.id) waits for one on the Approvals page, and nothing changes until then."),
                                     status: 202)
    }

    /// The request's JSON body as text (`{}` for none), refused unless it is one JSON value.
    static func bodyText(_ request: HTTPRequest) throws -> String {
        guard !request.body.isEmpty else { return "{}" }
        guard request.body.count <= ApprovalStore.maxBodyBytes else {
            throw APIError.badRequest("the request body is over \(ApprovalStore.maxBodyBytes / 1024) KB")
        }
        do { _ = try JSONValue.parse(request.body) } catch {
            throw APIError.badRequest("the request body is not JSON", fix: "send one JSON object")
        }
        return String(decoding: request.body, as: UTF8.self)
    }

    /// The stored request as the HTTP request it was.
    static func request(_ approval: Approval, remoteAddress: String) throws -> HTTPRequest {
        let body = try approval.body.map { Array(try JSONEncoder().encode($0)) } ?? []
        return HTTPRequest(method: approval.method, path: approval.path, query: approval.query,
                           headers: ["Content-Type": "application/json"], body: body, remoteAddress: remoteAddress)
    }

    /// Runs an approved request through `router`: the route it names (which must still be one that needs approval),
    /// with `context`'s stores and time and `run` as who asked and who approved.
    static func run(_ request: HTTPRequest, _ run: ApprovedRun, _ context: RequestContext, router: Router) throws -> HTTPResponse {
        guard case .success(let (route, parameters)) = router.match(method: request.method, path: request.path), route.approval != nil else {
            throw APIError(status: 409, code: "approval_route_gone", message: "\(request.method) \(request.path) is no longer an action that takes an approval")
        }
        var replayed = RequestContext(request: request, requestID: context.requestID, parameters: parameters, stores: context.stores,
                                      auth: context.auth, now: context.now, session: context.session)
        replayed.approved = run
        return try route.handler(replayed)
    }

    /// Claims approval `id` for the approver, runs it, and records what it answered: the action's own response,
    /// with `X-Approval-Id`. A refused action (a plan gone stale) leaves the approval `failed` with its error.
    static func approve(_ id: Int64, approver: String, actor: Actor, context: RequestContext,
                        runner: (HTTPRequest, ApprovedRun, RequestContext) throws -> HTTPResponse) throws -> HTTPResponse {
        let approval = try context.stores.withStore { try ApprovalStore(store: $0).claim(id, approver: approver, actor: actor, now: context.now) }
        let outcome: HTTPResponse
        do {
            let request = try Self.request(approval, remoteAddress: context.request.remoteAddress)
            outcome = try runner(request, ApprovedRun(approvalID: approval.id, requestedBy: approval.requestedBy, approver: actor), context)
        } catch {
            outcome = JSONBody.error(APIError.from(error))
        }
        let succeeded = (200..<300).contains(outcome.status)
        try context.stores.withStore {
            try ApprovalStore(store: $0).finish(approval, succeeded: succeeded, status: outcome.status,
                                                outcome: outcome.body.isEmpty ? nil : String(decoding: outcome.body, as: UTF8.self), actor: actor, now: context.now)
        }
        var response = outcome
        response.headers["X-Approval-Id"] = String(approval.id)
        return response
    }
}

/// What a reviewer sees beside a held request's body, read when it is made: the merge plan's rows, the merge being
/// undone, the policy entry's value before. Nil where the body says it all, or the lookup fails (the action itself
/// then refuses it when approved).
enum ApprovalDetail {
    static func text(_ action: ApprovalAction, _ context: RequestContext, _ store: Store) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            let data: Data?
            switch action {
            case .mergeApply:
                data = try encoder.encode(MergePlanResponse(try MergeApplier(store: store).plan(context.parameters["planId"] ?? "")))
            case .mergeUndo:
                let records = MergeRecords(store: store)
                data = try encoder.encode(try MergeRecordResponse(try records.show(context.parameters["id"] ?? ""), in: records))
            case .policySet:
                let key = try context.body(PolicySetRequest.self).key
                let entry = try PolicyStore(store: store).snapshot(now: context.now).entries.first { $0.key == key }
                data = try entry.map { try encoder.encode($0) }
            case .userDelete:
                let plan = try UserDeletionApplier(store: store).plan(context.parameters["planId"] ?? "")
                let email = try UserDeletionPlanner(store: store).currentEmail(of: plan.userID) ?? ""
                data = try encoder.encode(UserDeletionPlanResponse(plan: plan, email: email))
            case .gateEnable, .appleKeyRevoke, .appleKeyActivate, .admins:
                data = nil
            }
            return data.map { String(decoding: $0, as: UTF8.self) }
        } catch {
            return nil
        }
    }
}

/// Approving from the CLI on the host: the same claim, run and record as `POST /api/approvals/:id/approve`, through
/// the console's own routes in this process (no console needs to be running).
public enum ApprovalRunner {
    /// Approves request `id` as `actor` and answers the action's HTTP status and JSON body.
    public static func approve(_ id: Int64, storePath: String, configurationPath: String?, actor: Actor,
                               now: Timestamp = .now()) throws -> (status: Int, body: [UInt8]) {
        var router = Router()
        APIRoutes.register(on: &router)
        let pool = try StorePool(path: storePath, configurationPath: configurationPath, size: 1)
        let context = RequestContext(request: HTTPRequest(method: "POST", path: "/api/approvals/\(id)/approve"), requestID: "cli",
                                     parameters: ["id": String(id)], stores: RequestStores(pool: pool, check: nil, deadline: nil),
                                     auth: AuthSettings(), now: now, session: nil)
        let response = try ApprovalGate.approve(id, approver: actor.name, actor: actor, context: context) { request, run, context in
            try ApprovalGate.run(request, run, context, router: router)
        }
        return (response.status, response.body)
    }
}
