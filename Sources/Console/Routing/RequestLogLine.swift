import Gatehouse
import HTTPServer

/// One line of the console's request log (stderr): time, request id, method, path, status, duration.
///
/// The path is written as an operator can safely read it: a segment holding an email address (`@` or `%40`,
/// as in `/api/users/alice@example.com`) becomes `<email>`, since the log is kept longer and read by more
/// people than the user list; control characters (ESC, BEL, CR, LF, …) are written as `\u{001B}`, so a
/// request cannot forge log lines or drive the terminal of whoever tails the log. The query is never logged.
///
///     RequestLogLine.path("/api/users/alice@example.com")  // "/api/users/<email>"
enum RequestLogLine {
    /// The longest path written; the rest is cut.
    static let maxPathCharacters = 200

    /// The log line for a finished request, ending in a line feed.
    static func line(at time: Timestamp, requestID: String, method: String, path: String, status: Int, milliseconds: Double) -> String {
        let shownMethod = OperatorText.visible(String(method.prefix(10)), keepLineBreaks: false)
        let tenths = (milliseconds * 10).rounded()
        let duration = tenths.isFinite && tenths >= 0 && tenths < 1e12 ? "\(Int64(tenths) / 10).\(Int64(tenths) % 10)" : "?"
        return "\(time.iso8601) \(requestID) \(shownMethod) \(Self.path(path)) \(status) \(duration)ms\n"
    }

    /// `path` with email segments replaced and control characters made visible.
    static func path(_ path: String) -> String {
        let cut = String(path.prefix(maxPathCharacters))
        let redacted: String
        if cut.utf8.contains(UInt8(ascii: "@")) || cut.utf8.contains(UInt8(ascii: "%")) {
            redacted = cut.split(separator: "/", omittingEmptySubsequences: false)
                .map { isEmailLike($0) ? "<email>" : String($0) }
                .joined(separator: "/")
        } else {
            redacted = cut
        }
        return OperatorText.visible(redacted, keepLineBreaks: false)
    }

    /// Whether a path segment looks like it holds an email address: an `@`, raw or percent-encoded.
    static func isEmailLike(_ segment: Substring) -> Bool {
        segment.contains("@") || segment.lowercased().contains("%40")
    }
}
