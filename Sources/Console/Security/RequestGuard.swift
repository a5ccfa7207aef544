import HTTPServer

/// The console's checks on every request, before any route runs: the `Host` header must name the
/// address being served (DNS rebinding), state-changing requests must come from the console's own
/// origin, and paths must be plain. A request with two `Host` fields is malformed (400).
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
    /// One pass over the bytes: it runs on every request, and Foundation's substring search cost more than the rest.
    /// Fast path kept for ops/bench's console row (≥ 5,000 req/s, static `/` ≥ 0.70× bare libmicrohttpd).
    static func isPlainPath(_ path: String) -> Bool {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/"), bytes.count <= 2048 else { return false }
        var previous: UInt8 = 0
        var segmentLength = 0
        var segmentDots = 0
        var percent = 0  // bytes of an escape seen so far: 1 after "%", 2 after "%x"
        var escapeHigh: UInt8 = 0
        for byte in bytes {
            if byte < 0x20 || byte == 0x7f || byte == UInt8(ascii: "\\") { return false }
            if byte == UInt8(ascii: "/") {
                if previous == UInt8(ascii: "/") { return false }
                if segmentLength > 0 && segmentLength == segmentDots && segmentDots <= 2 { return false }
                segmentLength = 0
                segmentDots = 0
            } else {
                segmentLength += 1
                if byte == UInt8(ascii: ".") { segmentDots += 1 }
            }
            // %2e (dot), %2f (slash), %5c (backslash), %00 (NUL), in any case.
            let lower = byte | 0x20
            switch percent {
            case 1:
                escapeHigh = byte
                percent = byte == UInt8(ascii: "2") || byte == UInt8(ascii: "5") || byte == UInt8(ascii: "0") ? 2 : 0
            case 2:
                switch escapeHigh {
                case UInt8(ascii: "2"): if lower == UInt8(ascii: "e") || lower == UInt8(ascii: "f") { return false }
                case UInt8(ascii: "5"): if lower == UInt8(ascii: "c") { return false }
                default: if byte == UInt8(ascii: "0") { return false }
                }
                percent = 0
            default:
                break
            }
            if byte == UInt8(ascii: "%") && percent == 0 { percent = 1 }
            previous = byte
        }
        return !(segmentLength > 0 && segmentLength == segmentDots && segmentDots <= 2)
    }
}
