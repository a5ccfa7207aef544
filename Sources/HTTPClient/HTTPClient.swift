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
        // Every client checks its base URL when it is configured; this is the last word, before anything is sent.
        do { _ = try OutboundURL(url, variable: "the URL") } catch { throw .unreachable(error.description) }
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
            var connectSeconds = 0.0, handshakeSeconds = 0.0
            _ = gatehouse_curl_getinfo_double(curl.easyGetinfo, handle, Int32(GH_CURLINFO_CONNECT_TIME), &connectSeconds)
            _ = gatehouse_curl_getinfo_double(curl.easyGetinfo, handle, Int32(GH_CURLINFO_APPCONNECT_TIME), &handshakeSeconds)
            // Nothing can have been sent before the connection (and, for https, its TLS handshake) was made.
            let connected = connectSeconds > 0 && (!url.lowercased().hasPrefix("https:") || handshakeSeconds > 0)
            throw classify(code: code, words: words, timeout: request.timeout, limit: request.maxAnswerBytes, connected: connected)
        }
        var status = 0
        _ = gatehouse_curl_getinfo_long(curl.easyGetinfo, handle, Int32(GH_CURLINFO_RESPONSE_CODE), &status)
        return HTTPAnswer(status: status, headers: sink.headers, body: sink.bytes)
    }

    /// What a curl error means for the request: `unreachable` only for what provably happens before any byte of it is
    /// sent (a name that does not resolve, a connection refused or not made in time, a failed TLS handshake, an
    /// unreadable CA file); everything else — a cut connection, a malformed status line (curl's code 1 or 8), an
    /// HTTP/2 stream error (16, 92), any code not listed — may have followed the request, so a caller must treat its
    /// outcome as unknown.
    static func classify(code: Int32, words: String, timeout: Double, limit: Int, connected: Bool) -> HTTPFailure {
        switch code {
        case GH_CURLE_OPERATION_TIMEDOUT:
            return connected ? .timedOut(seconds: timeout) : .unreachable("no connection within \(HTTPFailure.format(min(timeout, 5))) s")
        case GH_CURLE_COULDNT_CONNECT: return .unreachable("connection refused")
        case GH_CURLE_COULDNT_RESOLVE_HOST, GH_CURLE_COULDNT_RESOLVE_PROXY: return .unreachable("the host name does not resolve")
        case GH_CURLE_SSL_CONNECT_ERROR, GH_CURLE_PEER_FAILED_VERIFICATION: return .unreachable("the TLS handshake failed (\(words))")
        case GH_CURLE_SSL_CACERT_BADFILE: return .unreachable("the CA file cannot be read (\(words))")
        case GH_CURLE_UNSUPPORTED_PROTOCOL, GH_CURLE_WEIRD_SERVER_REPLY: return .connectionLost("what came back is not well-formed HTTP (\(words))")
        case GH_CURLE_GOT_NOTHING: return .connectionLost("the server closed the connection without an answer")
        case GH_CURLE_WRITE_ERROR, GH_CURLE_FILESIZE_EXCEEDED: return .answerTooLarge(limit: limit)
        default: return .connectionLost(words)
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
    /// The largest answer read; a larger one fails as `answerTooLarge`.
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
    /// No answer within the timeout, on a connection that was made: the request may have been sent.
    case timedOut(seconds: Double)
    /// Nothing was sent: the URL was refused, or the connection could not be made (refused, not made in time, unknown
    /// host, TLS failure); the text says which.
    case unreachable(String)
    /// The connection broke, or what came back was not HTTP, after the request may have been sent.
    case connectionLost(String)
    /// The answer was longer than the request's `maxAnswerBytes` (the request was sent).
    case answerTooLarge(limit: Int)

    /// Whether any of the request may have reached the server: false only for `unreachable`.
    public var mayHaveBeenSent: Bool {
        if case .unreachable = self { return false }
        return true
    }

    /// One line for people, naming where.
    public func describe(_ url: String) -> String {
        switch self {
        case .timedOut(let seconds): return "no answer from \(url) within \(Self.format(seconds)) s"
        case .unreachable(let why): return "cannot reach \(url): \(why)"
        case .connectionLost(let why): return "the connection to \(url) broke before the answer was complete: \(why)"
        case .answerTooLarge(let limit): return "the answer from \(url) is over \(Self.size(limit)), more than Gatehouse reads"
        }
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : bytes >= 1024 ? "\(bytes / 1024) KiB" : "\(bytes) bytes"
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }
}
