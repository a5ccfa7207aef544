import HTTPServer

/// The console's checks on every request, before any route runs: the `Host` header must name the
/// address being served (DNS rebinding), state-changing requests must come from the console's own
/// origin, and paths must be plain.
struct RequestGuard: Sendable {
    /// `host:port` values accepted in `Host`, and `http://host:port` values accepted in `Origin`.
    let allowedHosts: Set<String>
    let allowedOrigins: Set<String>

    init(address: String, port: UInt16, allowRemote: Bool) {
        var hosts: Set<String> = ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
        if allowRemote {
            hosts.insert(address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)")
        }
        allowedHosts = hosts
        allowedOrigins = Set(hosts.map { "http://" + $0 })
    }

    /// Nil when the request may proceed; otherwise the error to answer.
    func check(_ request: HTTPRequest) -> APIError? {
        guard let host = request.header("host")?.lowercased(), allowedHosts.contains(host) else {
            return APIError(status: 403, code: "forbidden_host", message: "this console only answers requests addressed to its own loopback address",
                            fix: "open the URL `gatehouse serve` printed")
        }
        if !["GET", "HEAD", "OPTIONS"].contains(request.method) {
            if let origin = request.header("origin"), !allowedOrigins.contains(origin.lowercased()) {
                return APIError(status: 403, code: "forbidden_origin", message: "cross-origin requests are refused")
            }
        }
        if !Self.isPlainPath(request.path) {
            return APIError(status: 400, code: "bad_path", message: "the request path is not allowed")
        }
        return nil
    }

    /// Absolute, no `..` or `.` segments, no encoded dots, slashes, backslashes or NULs, no control characters.
    static func isPlainPath(_ path: String) -> Bool {
        guard path.hasPrefix("/"), path.utf8.count <= 2048 else { return false }
        let lowered = path.lowercased()
        for forbidden in ["%2e", "%2f", "%5c", "%00", "\\", "//"] where lowered.contains(forbidden) { return false }
        if path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) { return false }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() where segment == ".." || segment == "." {
            return false
        }
        return true
    }
}
