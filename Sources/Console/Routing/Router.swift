import Foundation
import Gatehouse
import HTTPServer

/// Routes by method and path pattern (`/api/users/:id`). Every route declares who may call it: a
/// minimum role, or `public` (only login, refresh and the status line the login page shows). There
/// is no role-less `add`, so a new route cannot be left open by omission. No business rule lives
/// here: handlers call the Gatehouse service layer.
///
///     router.add("GET", "/api/policy", role: .viewer) { ctx in
///         try JSONBody.response(try ctx.stores.withStore { try PolicyStore(store: $0).snapshot(now: ctx.now) })
///     }
public struct Router: Sendable {
    /// A route's work: the request context in, a response out.
    public typealias Handler = @Sendable (RequestContext) throws -> HTTPResponse
    /// An inline route's work: it gets the store only as a `ReadOnlyStore`, so it cannot write.
    public typealias ReadOnlyHandler = @Sendable (ReadOnlyContext) throws -> HTTPResponse

    /// What a route runs: any handler, or, for an inline route, a read-only one. An inline route is exactly one whose
    /// work is `.readOnly`, so no route runs inline (with its token check deferred) and holds a writable store.
    enum Work: Sendable {
        case full(Handler)
        case readOnly(ReadOnlyHandler)
    }

    /// A registered route.
    struct Route: Sendable {
        let method: String
        let segments: [String]
        /// Each segment's parameter name (`:id` → `id`), nil for a constant segment.
        let parameterNames: [String?]
        let access: RouteAccess
        /// What the route asks of the admin's second factor (step-up, open during enrolment).
        let factor: RouteFactorRule
        /// The handler pool's lane (see `RouteCost`).
        let lane: HTTPServer.Lane
        let work: Work
        /// The action a second admin must approve when the store requires it (`gatehouse approvals require`).
        let approval: ApprovalAction?

        /// Runs on the connection's thread, its token check going with its first snapshot (see `addInline`).
        var inline: Bool {
            if case .readOnly = work { return true }
            return false
        }

        /// Runs the route's work.
        func handler(_ context: RequestContext) throws -> HTTPResponse {
            switch work {
            case .full(let handler): return try handler(context)
            case .readOnly(let handler): return try handler(ReadOnlyContext(context))
            }
        }
    }

    private var routes: [Route] = []

    public init() {}

    /// Adds a route that needs a signed-in admin with at least `role`, and, by `factor`, a fresh second-factor check
    /// (`.stepUp`: irreversible or security-relevant writes) or none while the admin still has to enrol (`.enrolment`).
    /// The check is made here, once, before the handler runs (`AuthMiddleware`). A route naming an `approval` action is
    /// held for a second admin when the store requires that action (`ApprovalGate`): it answers 202 and runs later.
    ///
    ///     router.add("POST", "/api/policy", role: .admin, factor: .stepUp, approval: .policySet) { ctx in … }
    public mutating func add(_ method: String, _ pattern: String, role: AdminRole, factor: RouteFactorRule = [], approval: ApprovalAction? = nil,
                             _ handler: @escaping Handler) {
        append(method, pattern, .role(role), factor, .full(handler), approval: approval)
    }

    /// Adds a GET route that needs a signed-in admin with at least `role` and runs on the connection's thread,
    /// skipping the hand-off to the handler pool: only for a read made of a few indexed lookups, whose time does not
    /// grow with the store (never a scan, never a password hash), since every other connection of that thread waits
    /// for it. On a database server's store every route runs on the pool (`ConsoleServer.State.inlineOnPool`): there
    /// a lookup is a wait.
    ///
    /// Its token check goes with its first snapshot (`TokenCheck`), so the handler reads before the token is found
    /// good and its response is dropped when it is not. That is why the handler gets a `ReadOnlyContext`, whose store
    /// has no write: an inline route that writes does not compile.
    public mutating func addInline(_ pattern: String, role: AdminRole, factor: RouteFactorRule = [], _ handler: @escaping ReadOnlyHandler) {
        precondition(!factor.contains(.stepUp), "an inline route reads; step-up is for writes")
        append("GET", pattern, .role(role), factor, .readOnly(handler))
    }

    /// Adds a route anyone may call (the login page's own needs only).
    public mutating func addPublic(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        append(method, pattern, .public, [], .full(handler))
    }

    private mutating func append(_ method: String, _ pattern: String, _ access: RouteAccess, _ factor: RouteFactorRule, _ work: Work,
                                 approval: ApprovalAction? = nil) {
        let segments = pattern.split(separator: "/").map(String.init)
        precondition(!routes.contains { $0.method == method && $0.segments == segments }, "route \(method) \(pattern) registered twice")
        routes.append(Route(method: method, segments: segments,
                            parameterNames: segments.map { $0.hasPrefix(":") ? String($0.dropFirst()) : nil }, access: access, factor: factor,
                            lane: RouteCost.lane(method: method, segments: segments), work: work, approval: approval))
    }

    /// Every route as `METHOD /path (access)`, for documentation and tests.
    public var table: [String] {
        routes.map { "\($0.method) /\($0.segments.joined(separator: "/")) (\($0.access))" }
    }

    /// The routes that need a fresh factor check (`.stepUp`), as `METHOD /path`.
    public var stepUpRoutes: [String] {
        routes.filter { $0.factor.contains(.stepUp) }.map { "\($0.method) /\($0.segments.joined(separator: "/"))" }
    }

    /// The routes held for a second admin's approval, as `METHOD /path` → the action.
    public var approvalRoutes: [String: ApprovalAction] {
        Dictionary(uniqueKeysWithValues: routes.compactMap { route in
            route.approval.map { ("\(route.method) /\(route.segments.joined(separator: "/"))", $0) }
        })
    }

    /// The routes open to an admin who has yet to enrol a factor (`.enrolment`), as `METHOD /path`.
    public var enrolmentRoutes: [String] {
        routes.filter { $0.factor.contains(.enrolment) }.map { "\($0.method) /\($0.segments.joined(separator: "/"))" }
    }

    /// The inline routes as `METHOD /path`, each with whether its handler is the read-only kind (always, by
    /// construction; the tests pin it).
    var inlineRoutes: [(route: String, readOnly: Bool)] {
        routes.filter(\.inline).map {
            let readOnly: Bool
            if case .readOnly = $0.work { readOnly = true } else { readOnly = false }
            return ("\($0.method) /\($0.segments.joined(separator: "/"))", readOnly)
        }
    }

    /// The route and parameters for a request path, or the error to answer.
    ///
    /// When several patterns match, the most specific wins whatever the order they were added in: segment by
    /// segment from the left, a constant (`/api/users/duplicates`) beats a parameter (`/api/users/:id`).
    func match(method: String, path: String) -> Result<(Route, [String: String]), APIError> {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        var pathMatched = false
        var best: (route: Route, parameters: [String: String])?
        for route in routes where route.segments.count == segments.count {
            guard let parameters = Self.parameters(of: route, for: segments) else { continue }
            pathMatched = true
            guard route.method == method || (method == "HEAD" && route.method == "GET") else { continue }
            if let current = best, !Self.isMoreSpecific(route, than: current.route) { continue }
            best = (route, parameters)
        }
        if let best { return .success((best.route, best.parameters)) }
        return .failure(pathMatched ? APIError(status: 405, code: "method_not_allowed", message: "\(method) is not allowed here") : .notFound())
    }

    /// The parameters a route's pattern takes from `segments`, or nil when it does not match.
    private static func parameters(of route: Route, for segments: [String]) -> [String: String]? {
        // The constant segments first: most routes fail there, before anything is decoded or stored.
        for (index, name) in route.parameterNames.enumerated() where name == nil {
            guard route.segments[index] == segments[index] else { return nil }
        }
        var parameters: [String: String] = [:]
        for (index, name) in route.parameterNames.enumerated() {
            guard let name else { continue }
            let segment = segments[index]
            // Foundation's decoding is costly for a hot route; most ids have nothing to decode.
            let decoded = segment.utf8.contains(UInt8(ascii: "%")) ? segment.removingPercentEncoding : segment
            guard let decoded, !decoded.isEmpty else { return nil }
            parameters[name] = decoded
        }
        return parameters
    }

    /// Whether `route` is more specific than `other` (same length): at the first segment where one is a constant
    /// and the other a parameter, the constant wins.
    private static func isMoreSpecific(_ route: Route, than other: Route) -> Bool {
        for (mine, theirs) in zip(route.parameterNames, other.parameterNames) {
            let mineIsParameter = mine != nil, theirsIsParameter = theirs != nil
            if mineIsParameter != theirsIsParameter { return theirsIsParameter }
        }
        return false
    }
}
