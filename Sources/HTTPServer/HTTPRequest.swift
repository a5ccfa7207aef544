import Dispatch

/// A complete HTTP request as the server hands it to a ``HTTPServer/Handler``: the body is fully read.
public struct HTTPRequest: Sendable {
    /// The method exactly as the client sent it: `"GET"`, `"POST"`, ….
    public var method: String
    /// The request path as sent, without the query; percent-encoding is **not** decoded (`/a%20b`).
    public var path: String
    /// The raw query string after the first `?`, or `nil` when the target has no `?`.
    public var query: String?
    /// The request's header fields in the order received; look them up in any case.
    public var headers: HTTPHeaders
    /// The request body (empty when none was sent); chunked uploads arrive decoded.
    public var body: [UInt8]
    /// The client's IP address as text: `"127.0.0.1"`, `"::1"`.
    public var remoteAddress: String
    /// When the whole request was in (`DispatchTime` uptime, nanoseconds): a handler's time budget counts from here,
    /// so the time it waited for a handler thread is part of it.
    public var receivedAt: UInt64

    /// A request built by hand, for tests of code that handles requests.
    public init(
        method: String,
        path: String,
        query: String? = nil,
        headers: HTTPHeaders = [:],
        body: [UInt8] = [],
        remoteAddress: String = "127.0.0.1",
        receivedAt: UInt64 = DispatchTime.now().uptimeNanoseconds
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.receivedAt = receivedAt
    }

    /// The value of the first header called `name` (any case): `request.header("host")`.
    public func header(_ name: String) -> String? {
        headers[name]
    }

    /// The query's `name=value` pairs in order, percent-decoded with `+` read as a space.
    ///
    /// A pair without `=` has an empty value; empty pairs (`a=1&&b=2`) are skipped; a malformed escape
    /// such as `%zz` is kept as written. `?tag=a&tag=b` gives two items.
    public func queryItems() -> [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        var items: [(name: String, value: String)] = []
        for pair in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
                items.append((
                    name: Self.formDecode(pair[pair.startIndex..<equals]),
                    value: Self.formDecode(pair[pair.index(after: equals)...])
                ))
            } else {
                items.append((name: Self.formDecode(pair), value: ""))
            }
        }
        return items
    }

    /// Decodes `application/x-www-form-urlencoded` text: `%XX` escapes and `+` as a space.
    static func formDecode(_ bytes: Substring.UTF8View) -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                decoded.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"),
                      let high = bytes.index(index, offsetBy: 1, limitedBy: bytes.endIndex), high < bytes.endIndex,
                      let low = bytes.index(index, offsetBy: 2, limitedBy: bytes.endIndex), low < bytes.endIndex,
                      let h = hexValue(bytes[high]), let l = hexValue(bytes[low]) {
                decoded.append(h << 4 | l)
                index = low
            } else {
                decoded.append(byte)
            }
            index = bytes.index(after: index)
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
