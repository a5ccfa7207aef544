import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Locking

/// The few HTTP calls Gatehouse makes to Apple (`/auth/keys`, `/auth/revoke`), over the toolchain's URLSession
/// (libcurl and the system CA store on Linux), made synchronous and bounded: every call ends within `timeout`
/// seconds, answered or failed, never hangs.
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

    private func send(method: String, path: String, form: [(String, String)]?) throws(Failure) -> Answer {
        guard let url = URL(string: baseURL + path), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http" else {
            throw .unreachable("\(baseURL) is not an http(s) URL (check GATEHOUSE_APPLE_BASE_URL)")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("gatehouse", forHTTPHeaderField: "User-Agent")
        if let form {
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(Self.formEncode(form).utf8)
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }

        let result = Locked<Result<Answer, Failure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let timeout = self.timeout
        let task = session.dataTask(with: request) { data, response, error in
            let outcome: Result<Answer, Failure>
            if let error {
                outcome = .failure(Self.classify(error, timeout: timeout))
            } else if let http = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for (name, value) in http.allHeaderFields {
                    if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
                }
                outcome = .success(Answer(status: http.statusCode, headers: headers, body: data.map { [UInt8]($0) } ?? []))
            } else {
                outcome = .failure(.connectionLost("no HTTP answer"))
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        task.resume()
        // URLSession enforces the timeout; the extra second is only a backstop against a callback that never comes.
        if done.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            throw .timedOut(seconds: timeout)
        }
        switch result.value {
        case .success(let answer): return answer
        case .failure(let failure): throw failure
        case nil: throw .timedOut(seconds: timeout)
        }
    }

    private static func classify(_ error: Error, timeout: Double) -> Failure {
        guard let error = error as? URLError else { return .unreachable(String(describing: error).prefix(200).description) }
        switch error.code {
        case .timedOut: return .timedOut(seconds: timeout)
        case .cannotConnectToHost: return .unreachable("connection refused")
        case .cannotFindHost, .dnsLookupFailed: return .unreachable("the host name does not resolve")
        case .notConnectedToInternet: return .unreachable("no network")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
             .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            return .unreachable("the TLS handshake failed (\(error.localizedDescription))")
        case .networkConnectionLost: return .connectionLost("the server closed the connection")
        case .badServerResponse, .cannotParseResponse, .zeroByteResource: return .connectionLost("the answer was not valid HTTP")
        default: return .unreachable("\(error.localizedDescription) (URLError \(error.code.rawValue))")
        }
    }
}
