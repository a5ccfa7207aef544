import Foundation
import HTTPClient

/// The few HTTP calls Gatehouse makes to Apple (`/auth/keys`, `/auth/revoke`, `/auth/token`, `/auth/usermigrationinfo`), through `HTTPClient` (libcurl loaded
/// with `dlopen`; TLS with the system CA store), synchronous and bounded: every call ends within `timeout` seconds,
/// answered or failed, never hangs.
///
///     let client = AppleHTTPClient(baseURL: AppleHTTPClient.baseURL(nil))
///     let answer = try client.get("/auth/keys")
///
/// The base is `https://appleid.apple.com` unless `GATEHOUSE_APPLE_BASE_URL` says otherwise (the tests' local
/// server; plain http only to this machine). Request bodies are never logged or put in an error: they hold tokens and client secrets.
public struct AppleHTTPClient: Sendable {
    /// Apple's base URL.
    public static let appleBaseURL = "https://appleid.apple.com"

    /// The variable that names another base URL: `https://`, or plain `http://` only to this machine (`OutboundURL`).
    public static let baseURLVariable = "GATEHOUSE_APPLE_BASE_URL"

    /// The base URL in use: an explicit one, else `GATEHOUSE_APPLE_BASE_URL`, else Apple's. Each call checks it
    /// (`OutboundURL`) before anything is sent.
    public static func baseURL(_ explicit: String?) -> String {
        let chosen = explicit ?? ProcessInfo.processInfo.environment[baseURLVariable].flatMap { $0.isEmpty ? nil : $0 } ?? appleBaseURL
        return chosen.hasSuffix("/") ? String(chosen.dropLast()) : chosen
    }

    /// Seconds a call may take in all, from `GATEHOUSE_APPLE_TIMEOUT_SECONDS` (default 10, 1 to 120).
    public static var defaultTimeout: Double {
        let text = ProcessInfo.processInfo.environment["GATEHOUSE_APPLE_TIMEOUT_SECONDS"] ?? ""
        guard let value = Double(text), value >= 0.1, value <= 120 else { return 10 }
        return value
    }

    /// An answer: status, headers (names lowercased), body.
    public typealias Answer = HTTPAnswer
    /// Why a call got no answer.
    public typealias Failure = HTTPFailure

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
    /// `headers` are extra header lines (`Authorization: Bearer …`), never logged.
    public func post(_ path: String, form: [(String, String)], headers: [String] = []) throws(Failure) -> Answer {
        try send(method: "POST", path: path, form: form, headers: headers)
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

    private func send(method: String, path: String, form: [(String, String)]?, headers extra: [String] = []) throws(Failure) -> Answer {
        // The client secret and the user's tokens go with these calls, and a key set fetched in the clear could be
        // anyone's: https only, loopback excepted (the tests' local server), by the rule every outbound client shares.
        do { _ = try OutboundURL(baseURL, variable: Self.baseURLVariable) } catch { throw .unreachable(error.description) }
        let url = baseURL + path
        let headers = ["Accept: application/json"] + (form == nil ? [] : ["Content-Type: application/x-www-form-urlencoded"]) + extra
        return try HTTPClient.send(HTTPRequest(method: method, url: url, headers: headers, body: form.map { Array(Self.formEncode($0).utf8) },
                                               timeout: timeout, caFile: Self.caFile, maxAnswerBytes: Self.maxAnswerBytes))
    }
}
