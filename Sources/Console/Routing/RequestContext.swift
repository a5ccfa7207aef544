import Foundation
import Gatehouse
import HTTPServer

/// What a route handler gets: the request, its path parameters, the signed-in admin (on routes that
/// need one), the console's services and the time of the request.
///
///     router.add("POST", "/api/policy", role: .admin) { ctx in
///         let body = try ctx.body(PolicySetRequest.self)
///         let result = try ctx.stores.withStore { try PolicyStore(store: $0).set(body.change(), actor: try ctx.actor, now: ctx.now) }
///         return try JSONBody.response(result)
///     }
public struct RequestContext: Sendable {
    public let request: HTTPRequest
    /// A short id for correlating a response with the server's log.
    public let requestID: String
    /// Values of `:name` segments in the route pattern.
    public let parameters: [String: String]
    /// The console's stores; on a route whose token check waits for the first read, they carry it.
    public internal(set) var stores: RequestStores
    /// Token lifetimes, throttle rules and the clock.
    public let auth: AuthSettings
    /// The time this request is handled at (from the console's clock, so tests can move it).
    public let now: Timestamp
    /// The signed-in admin's session; set by `AuthMiddleware` on every non-public route.
    public internal(set) var session: AdminSession?
    /// Set while a request another admin approved runs (`ApprovalRoutes`): its changes are audited as both admins'.
    public internal(set) var approved: ApprovedRun? = nil
    /// Runs a stored request through the console's routes as approved; set by the server.
    var replay: (@Sendable (HTTPRequest, ApprovedRun, RequestContext) throws -> HTTPResponse)? = nil

    /// The signed-in admin. Throws on a public route, where nobody is signed in.
    public var admin: Admin {
        get throws { try requireSession().admin }
    }

    /// The audit actor for changes made in this request: `console:<username>`, or for an approved request the
    /// requester and the approver (`console:alice, approved by console:bob (approval 3)`).
    public var actor: Actor {
        get throws {
            if let approved { return approved.actor }
            return try requireSession().actor
        }
    }

    /// The session, or a 401 (a route that needs one was registered as public by mistake). On a route whose token
    /// check waits for the first read, the check is made now if no read has carried it yet.
    public func requireSession() throws -> AdminSession {
        if let session { return session }
        if let check = stores.check { return try check.session() }
        throw APIError.unauthenticated(.invalid)
    }

    /// Whether the request's token has been found good (up front, or by a check that went with a read).
    var isSignedIn: Bool { session != nil || stores.check?.isAccepted == true }

    /// The query item `name`, if present.
    public func query(_ name: String) -> String? { request.queryItems().first { $0.name == name }?.value }

    /// The JSON request body decoded as `T` (415 if it is not JSON, 400 if it does not decode).
    public func body<T: Decodable>(_ type: T.Type) throws -> T { try JSONBody.decode(type, from: request) }

    /// The token service over `store`, with the console's lifetimes and throttle.
    public func tokens(_ store: Store) -> TokenService {
        var service = TokenService(store: store, lifetimes: auth.lifetimes, throttle: auth.throttle)
        service.webauthn = auth.assertionVerifier
        return service
    }
}
