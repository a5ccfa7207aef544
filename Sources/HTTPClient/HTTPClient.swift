import CLibCurl
import Foundation

/// The few HTTP calls Gatehouse makes (Apple's `/auth/keys` and `/auth/revoke`, Cloudflare D1's query API), over
/// libcurl loaded with `dlopen` (`LibCurl`; TLS verified against the system CA store or one named file), synchronous
/// and bounded: every call ends within `timeout` seconds, answered or failed, never hangs. (Not URLSession:
/// FoundationNetworking links libcurl into every start of the binary and breaks the static build on a machine
/// without libcurl-dev.)
///
///     let answer = try HTTPClient.send(HTTPRequest(method: "GET", url: "https://appleid.apple.com/auth/keys"))
///
/// Request bodies and headers are never logged or put in an error: they hold tokens, client secrets and API tokens.
public enum HTTPClient {
    /// Sends `request` and returns the answer, whatever its status.
    public static func send(_ request: HTTPRequest) throws(HTTPFailure) -> HTTPAnswer {
        let url = request.url
        let lowered = url.lowercased()
        guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://"), !url.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            throw .unreachable("it is not an http(s) URL")
        }
        let curl: LibCurl
        do { curl = try LibCurl.load() } catch { throw .unreachable(error.description) }
        guard let handle = curl.easyInit() else { throw .unreachable("libcurl could not make a handle") }
        defer { curl.easyCleanup(handle) }
        let sink = LibCurl.Sink(limit: request.maxAnswerBytes)
        let context = Unmanaged.passRetained(sink)
        defer { context.release() }
        var headers: OpaquePointer?
        defer { if let headers { curl.slistFreeAll(headers) } }
        for line in request.headers + ["Expect:"] { headers = curl.slistAppend(headers, line) }
        func setLong(_ option: Int32, _ value: Int) { _ = gatehouse_curl_setopt_long(curl.easySetopt, handle, option, value) }
        let milliseconds = Int((request.timeout * 1000).rounded())
        setLong(GH_CURLOPT_NOSIGNAL, 1)
        setLong(GH_CURLOPT_TIMEOUT_MS, max(milliseconds, 1))
        setLong(GH_CURLOPT_CONNECTTIMEOUT_MS, max(min(milliseconds, 5000), 1))
        setLong(GH_CURLOPT_PROTOCOLS, Int(GH_CURLPROTO_HTTP | GH_CURLPROTO_HTTPS))
        setLong(GH_CURLOPT_REDIR_PROTOCOLS, Int(GH_CURLPROTO_HTTPS))
        setLong(GH_CURLOPT_MAXFILESIZE, request.maxAnswerBytes)
        // The peer's certificate is verified against the system's CA store (curl's default, set here so that no
        // libcurl build or environment can turn it off), or the one file `caFile` names (a private CA, a test's own).
        setLong(GH_CURLOPT_SSL_VERIFYPEER, 1)
        setLong(GH_CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile = request.caFile { _ = caFile.withCString { gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_CAINFO, $0) } }
        _ = url.withCString { gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_URL, $0) }
        _ = "gatehouse".withCString { gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_USERAGENT, $0) }
        _ = gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_HTTPHEADER, UnsafeRawPointer(headers))
        _ = gatehouse_curl_setopt_callback(curl.easySetopt, handle, GH_CURLOPT_WRITEFUNCTION, LibCurl.write)
        _ = gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_WRITEDATA, context.toOpaque())
        _ = gatehouse_curl_setopt_callback(curl.easySetopt, handle, GH_CURLOPT_HEADERFUNCTION, LibCurl.header)
        _ = gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_HEADERDATA, context.toOpaque())
        if let body = request.body {
            setLong(GH_CURLOPT_POST, 1)
            setLong(GH_CURLOPT_POSTFIELDSIZE, body.count)
            // Copied by curl: the body (which may hold a token) need not outlive this call. COPYPOSTFIELDS reads
            // POSTFIELDSIZE bytes, so a body holding a NUL byte is sent whole.
            _ = body.withUnsafeBufferPointer { gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
        }
        let code = curl.easyPerform(handle)
        guard code == GH_CURLE_OK else {
            let words = curl.easyStrerror(code).map { String(cString: $0) } ?? "curl error \(code)"
            throw classify(code: code, words: words, timeout: request.timeout, limit: request.maxAnswerBytes)
        }
        var status = 0
        _ = gatehouse_curl_getinfo_long(curl.easyGetinfo, handle, Int32(GH_CURLINFO_RESPONSE_CODE), &status)
        return HTTPAnswer(status: status, headers: sink.headers, body: sink.bytes)
    }

    private static func classify(code: Int32, words: String, timeout: Double, limit: Int) -> HTTPFailure {
        switch code {
        case GH_CURLE_OPERATION_TIMEDOUT: return .timedOut(seconds: timeout)
        case GH_CURLE_COULDNT_CONNECT: return .unreachable("connection refused")
        case GH_CURLE_COULDNT_RESOLVE_HOST, GH_CURLE_COULDNT_RESOLVE_PROXY: return .unreachable("the host name does not resolve")
        case GH_CURLE_SSL_CONNECT_ERROR, GH_CURLE_PEER_FAILED_VERIFICATION: return .unreachable("the TLS handshake failed (\(words))")
        case GH_CURLE_GOT_NOTHING: return .connectionLost("the server closed the connection without an answer")
        case GH_CURLE_RECV_ERROR, GH_CURLE_SEND_ERROR, GH_CURLE_PARTIAL_FILE: return .connectionLost(words)
        case GH_CURLE_WRITE_ERROR, GH_CURLE_FILESIZE_EXCEEDED: return .connectionLost("the answer is over \(limit / 1024) KiB")
        default: return .unreachable(words)
        }
    }
}

/// One call: what to send, and its bounds.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    /// Header lines (`Name: value`).
    public var headers: [String]
    /// The body; nil for none (then the call is a GET).
    public var body: [UInt8]?
    /// Seconds the call may take in all.
    public var timeout: Double
    /// A PEM file of the certificate authorities to trust instead of the system's.
    public var caFile: String?
    /// The largest answer read; a larger one fails as `connectionLost`.
    public var maxAnswerBytes: Int

    public init(method: String = "GET", url: String, headers: [String] = [], body: [UInt8]? = nil, timeout: Double = 10,
                caFile: String? = nil, maxAnswerBytes: Int = 1 << 20) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.caFile = caFile
        self.maxAnswerBytes = maxAnswerBytes
    }
}

/// An answer: status, headers (names lowercased), body.
public struct HTTPAnswer: Sendable {
    public let status: Int
    public let headers: [String: String]
    public let body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a call got no answer.
public enum HTTPFailure: Error, Sendable, Equatable {
    /// No answer within the timeout.
    case timedOut(seconds: Double)
    /// The connection could not be made (refused, no route, unknown host, TLS failure); the text says which.
    case unreachable(String)
    /// The connection broke before a whole answer came.
    case connectionLost(String)

    /// One line for people, naming where.
    public func describe(_ url: String) -> String {
        switch self {
        case .timedOut(let seconds): return "no answer from \(url) within \(Self.format(seconds)) s"
        case .unreachable(let why): return "cannot reach \(url): \(why)"
        case .connectionLost(let why): return "the connection to \(url) broke before the answer was complete: \(why)"
        }
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }
}
