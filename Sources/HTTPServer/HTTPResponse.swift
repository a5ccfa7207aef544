/// A complete HTTP response returned by a ``HTTPServer/Handler``.
///
/// `Content-Length` is computed from `body` by the server (a `Content-Length` or `Transfer-Encoding` set here
/// is not sent); `Date` is added unless set. For a `HEAD` request only the headers are sent.
public struct HTTPResponse: Sendable {
    /// The status code, 100–999; anything else is sent as 500.
    public var status: Int
    /// The header fields, sent in this order.
    public var headers: HTTPHeaders
    /// The body bytes; copied when the response is queued.
    public var body: [UInt8]

    /// A response with the given status, headers and body.
    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response: `.text(404, "no such key\n")`.
    public static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: ["Content-Type": "text/plain; charset=utf-8"],
            body: Array(text.utf8)
        )
    }
}
