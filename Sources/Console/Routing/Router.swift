import Foundation
import Gatehouse
import HTTPServer

/// What a route handler gets: the request, its path parameters, and the console's services.
public struct RequestContext: Sendable {
    public let request: HTTPRequest
    /// A short id for correlating a response with the server's log.
    public let requestID: String
    /// Values of `:name` segments in the route pattern.
    public let parameters: [String: String]
    public let stores: StorePool

    /// The query item `name`, if present.
    public func query(_ name: String) -> String? { request.queryItems().first { $0.name == name }?.value }
}

/// Routes by method and path pattern (`/api/users/:id`). No business rule lives here: handlers call
/// the Gatehouse service layer.
public struct Router: Sendable {
    public typealias Handler = @Sendable (RequestContext) throws -> HTTPResponse

    struct Route: Sendable {
        let method: String
        let segments: [String]
        let handler: Handler
    }

    private var routes: [Route] = []

    public init() {}

    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        routes.append(Route(method: method, segments: pattern.split(separator: "/").map(String.init), handler: handler))
    }

    /// The handler and parameters for a request path, or the error to answer.
    func match(method: String, path: String) -> Result<(Handler, [String: String]), APIError> {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        var pathMatched = false
        for route in routes where route.segments.count == segments.count {
            var parameters: [String: String] = [:]
            var matched = true
            for (pattern, segment) in zip(route.segments, segments) {
                if pattern.hasPrefix(":") {
                    guard let decoded = segment.removingPercentEncoding, !decoded.isEmpty else { matched = false; break }
                    parameters[String(pattern.dropFirst())] = decoded
                } else if pattern != segment {
                    matched = false
                    break
                }
            }
            guard matched else { continue }
            pathMatched = true
            if route.method == method || (method == "HEAD" && route.method == "GET") { return .success((route.handler, parameters)) }
        }
        return .failure(pathMatched ? APIError(status: 405, code: "method_not_allowed", message: "\(method) is not allowed here") : .notFound())
    }
}
