import CLibCurl
import Foundation

/// The few HTTP calls Gatehouse makes to Apple (`/auth/keys`, `/auth/revoke`), over libcurl loaded with `dlopen`
/// (`LibCurl`; TLS with the system CA store), synchronous and bounded: every call ends within `timeout` seconds,
/// answered or failed, never hangs. (Not URLSession: FoundationNetworking links libcurl into every start of the
/// binary and breaks the static build on a machine without libcurl-dev.)
///
///     let client = AppleHTTPClient(baseURL: AppleHTTPClient.baseURL(nil))
///     let answer = try client.get("/auth/keys")
///
/// The base is `https://appleid.apple.com` unless `GATEHOUSE_APPLE_BASE_URL` says otherwise (the tests' local
/// server). Request bodies are never logged or put in an error: they hold tokens and client secrets.
public struct AppleHTTPClient: Sendable {
    /// Apple's base URL.
    public static let appleBaseURL = "https://appleid.apple.com"

    /// The base URL in use: an explicit one, else `GATEHOUSE_APPLE_BASE_URL`, else Apple's.
    public static func baseURL(_ explicit: String?) -> String {
        let chosen = explicit ?? ProcessInfo.processInfo.environment["GATEHOUSE_APPLE_BASE_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? appleBaseURL
        return chosen.hasSuffix("/") ? String(chosen.dropLast()) : chosen
    }

    /// Seconds a call may take in all, from `GATEHOUSE_APPLE_TIMEOUT_SECONDS` (default 10, 1 to 120).
    public static var defaultTimeout: Double {
        let text = ProcessInfo.processInfo.environment["GATEHOUSE_APPLE_TIMEOUT_SECONDS"] ?? ""
        guard let value = Double(text), value >= 0.1, value <= 120 else { return 10 }
        return value
    }

    /// An answer: status, headers (names lowercased), body.
    public struct Answer: Sendable {
        public let status: Int
        public let headers: [String: String]
        public let body: [UInt8]
    }

    /// Why a call got no answer.
    public enum Failure: Error, Sendable, Equatable {
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

    /// The base URL, without a trailing slash.
    public let baseURL: String
    /// Seconds a call may take in all.
    public let timeout: Double

    public init(baseURL: String, timeout: Double = AppleHTTPClient.defaultTimeout) {
        self.baseURL = baseURL
        self.timeout = timeout
    }

    /// `GET {base}{path}`.
    public func get(_ path: String) throws(Failure) -> Answer {
        try send(method: "GET", path: path, form: nil)
    }

    /// `POST {base}{path}` with an `application/x-www-form-urlencoded` body of `form`, in order.
    public func post(_ path: String, form: [(String, String)]) throws(Failure) -> Answer {
        try send(method: "POST", path: path, form: form)
    }

    /// `application/x-www-form-urlencoded` text: unreserved characters as they are, everything else `%XX`.
    public static func formEncode(_ form: [(String, String)]) -> String {
        func escape(_ text: String) -> String {
            var out = ""
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    out.unicodeScalars.append(Unicode.Scalar(byte))
                default:
                    out += String(format: "%%%02X", byte)
                }
            }
            return out
        }
        return form.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// The largest answer read; Apple's key set is about 2 KB.
    static let maxAnswerBytes = 1 << 20

    /// `GATEHOUSE_APPLE_CA_FILE`: the PEM file of the certificate authorities to trust instead of the system's.
    static var caFile: String? {
        getenv("GATEHOUSE_APPLE_CA_FILE").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    private func send(method: String, path: String, form: [(String, String)]?) throws(Failure) -> Answer {
        let url = baseURL + path
        let lowered = url.lowercased()
        guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://"), !url.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            throw .unreachable("\(baseURL) is not an http(s) URL (check GATEHOUSE_APPLE_BASE_URL)")
        }
        let curl: LibCurl
        do { curl = try LibCurl.load() } catch { throw .unreachable(error.description) }
        guard let handle = curl.easyInit() else { throw .unreachable("libcurl could not make a handle") }
        defer { curl.easyCleanup(handle) }
        let sink = LibCurl.Sink(limit: Self.maxAnswerBytes)
        let context = Unmanaged.passRetained(sink)
        defer { context.release() }
        var headers: OpaquePointer?
        defer { if let headers { curl.slistFreeAll(headers) } }
        for line in ["Accept: application/json", form == nil ? nil : "Content-Type: application/x-www-form-urlencoded", "Expect:"].compactMap({ $0 }) {
            headers = curl.slistAppend(headers, line)
        }
        func setLong(_ option: Int32, _ value: Int) { _ = gatehouse_curl_setopt_long(curl.easySetopt, handle, option, value) }
        let milliseconds = Int((timeout * 1000).rounded())
        setLong(GH_CURLOPT_NOSIGNAL, 1)
        setLong(GH_CURLOPT_TIMEOUT_MS, max(milliseconds, 1))
        setLong(GH_CURLOPT_CONNECTTIMEOUT_MS, max(min(milliseconds, 5000), 1))
        setLong(GH_CURLOPT_PROTOCOLS, Int(GH_CURLPROTO_HTTP | GH_CURLPROTO_HTTPS))
        setLong(GH_CURLOPT_REDIR_PROTOCOLS, Int(GH_CURLPROTO_HTTPS))
        setLong(GH_CURLOPT_MAXFILESIZE, Self.maxAnswerBytes)
        // The peer's certificate is verified against the system's CA store (curl's default, set here so that no
        // libcurl build or environment can turn it off), or the one file GATEHOUSE_APPLE_CA_FILE names (a private CA
        // in front of Apple, or a test's own).
        setLong(GH_CURLOPT_SSL_VERIFYPEER, 1)
        setLong(GH_CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile = Self.caFile { _ = caFile.withCString { gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_CAINFO, $0) } }
        _ = url.withCString { gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_URL, $0) }
        _ = "gatehouse".withCString { gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_USERAGENT, $0) }
        _ = gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_HTTPHEADER, UnsafeRawPointer(headers))
        _ = gatehouse_curl_setopt_callback(curl.easySetopt, handle, GH_CURLOPT_WRITEFUNCTION, LibCurl.write)
        _ = gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_WRITEDATA, context.toOpaque())
        _ = gatehouse_curl_setopt_callback(curl.easySetopt, handle, GH_CURLOPT_HEADERFUNCTION, LibCurl.header)
        _ = gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_HEADERDATA, context.toOpaque())
        if let form {
            let body = Self.formEncode(form)
            setLong(GH_CURLOPT_POST, 1)
            setLong(GH_CURLOPT_POSTFIELDSIZE, body.utf8.count)
            // Copied by curl: the body (which holds a token and a client secret) need not outlive this call.
            _ = body.withCString { gatehouse_curl_setopt_pointer(curl.easySetopt, handle, GH_CURLOPT_COPYPOSTFIELDS, $0) }
        }
        let code = curl.easyPerform(handle)
        guard code == GH_CURLE_OK else {
            let words = curl.easyStrerror(code).map { String(cString: $0) } ?? "curl error \(code)"
            throw Self.classify(code: code, words: words, timeout: timeout)
        }
        var status = 0
        _ = gatehouse_curl_getinfo_long(curl.easyGetinfo, handle, Int32(GH_CURLINFO_RESPONSE_CODE), &status)
        return Answer(status: status, headers: sink.headers, body: sink.bytes)
    }

    private static func classify(code: Int32, words: String, timeout: Double) -> Failure {
        switch code {
        case GH_CURLE_OPERATION_TIMEDOUT: return .timedOut(seconds: timeout)
        case GH_CURLE_COULDNT_CONNECT: return .unreachable("connection refused")
        case GH_CURLE_COULDNT_RESOLVE_HOST, GH_CURLE_COULDNT_RESOLVE_PROXY: return .unreachable("the host name does not resolve")
        case GH_CURLE_SSL_CONNECT_ERROR, GH_CURLE_PEER_FAILED_VERIFICATION: return .unreachable("the TLS handshake failed (\(words))")
        case GH_CURLE_GOT_NOTHING: return .connectionLost("the server closed the connection without an answer")
        case GH_CURLE_RECV_ERROR, GH_CURLE_SEND_ERROR, GH_CURLE_PARTIAL_FILE: return .connectionLost(words)
        case GH_CURLE_WRITE_ERROR, GH_CURLE_FILESIZE_EXCEEDED: return .connectionLost("the answer is over \(maxAnswerBytes / 1024) KiB")
        default: return .unreachable(words)
        }
    }
}
