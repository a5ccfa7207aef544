import HTTPServer

/// The console's checks on every request, before any route runs: the `Host` header must name the
/// address being served (DNS rebinding), state-changing requests must come from the console's own
/// origin, and paths must be plain. A request with two `Host` fields is malformed (400).
struct RequestGuard: Sendable {
    /// `host:port` values accepted in `Host`, and `http://host:port` values accepted in `Origin`.
    let allowedHosts: Set<String>
    let allowedOrigins: Set<String>

    /// `publicOrigin`: the origin a proxy serves the console at (`serve --origin`, as browsers serialise it), accepted
    /// in `Origin`, and its host in `Host` for a proxy that passes the host on.
    init(address: String, port: UInt16, allowRemote: Bool, publicOrigin: String? = nil) {
        var hosts: Set<String> = ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
        if allowRemote {
            hosts.insert(address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)")
        }
        var origins = Set(hosts.map { "http://" + $0 })
        if let publicOrigin, let schemeEnd = publicOrigin.range(of: "://") {
            origins.insert(publicOrigin)
            hosts.insert(String(publicOrigin[schemeEnd.upperBound...]))
        }
        allowedHosts = hosts
        allowedOrigins = origins
    }

    /// Nil when the request may proceed; otherwise the error to answer.
    func check(_ request: HTTPRequest) -> APIError? {
        // Two Host fields could name two hosts, and a proxy and this console might each believe another one.
        if request.headers.values(for: "host").count > 1 {
            return APIError(status: 400, code: "bad_request", message: "the request has more than one Host header")
        }
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
    ///
    /// Written as one rule per line, each checked by `ConsolePathCheckTests`; it reads the path's UTF-8 bytes
    /// directly (it runs on every request, and Foundation's substring search cost more than the rest: ops/bench's
    /// console row, static `/` ≥ 0.70× bare libmicrohttpd).
    static func isPlainPath(_ path: String) -> Bool {
        let bytes = path.utf8
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: "."), backslash = UInt8(ascii: "\\")
        // Absolute, and of a sane length.
        guard bytes.first == slash, bytes.count <= 2048 else { return false }
        // No control character, DEL or backslash anywhere.
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7f || $0 == backslash }) { return false }
        // No escaped dot, slash, backslash or NUL (%2e %2f %5c %00, either case), which would decode into one.
        if hasForbiddenEscape(bytes) { return false }
        // No empty segment ("//") but a final one ("/a/"), and no "." or ".." segment.
        let segments = bytes.dropFirst().split(separator: slash, omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            if segment.isEmpty && index < segments.count - 1 { return false }
            if segment.elementsEqual([dot]) || segment.elementsEqual([dot, dot]) { return false }
        }
        return true
    }

    /// Whether `bytes` hold `%2e`, `%2f`, `%5c` or `%00` (hex digits in either case).
    private static func hasForbiddenEscape(_ bytes: String.UTF8View) -> Bool {
        var index = bytes.startIndex
        while let percent = bytes[index...].firstIndex(of: UInt8(ascii: "%")) {
            let high = bytes.index(after: percent)
            guard high < bytes.endIndex else { return false }
            let low = bytes.index(after: high)
            guard low < bytes.endIndex else { return false }
            switch (bytes[high], bytes[low] | 0x20) {
            case (UInt8(ascii: "2"), UInt8(ascii: "e")), (UInt8(ascii: "2"), UInt8(ascii: "f")),
                 (UInt8(ascii: "5"), UInt8(ascii: "c")), (UInt8(ascii: "0"), UInt8(ascii: "0")):
                return true
            default:
                index = high
            }
        }
        return false
    }
}
