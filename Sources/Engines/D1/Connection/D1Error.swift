import Storage

/// A failure of a D1 store: Cloudflare's API refused or did not answer, or D1 refused a statement. The message names
/// the store (`d1://account/database`) and never holds the API token, a bound value or the SQL sent.
public struct D1Error: SQLFailure, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The store's name, the API base or the token variable is wrong before anything was sent.
        case configuration
        /// 401/403: the token is not valid, or may not use this database (or may only read it).
        case permission
        /// 404: no such account or database.
        case notFound
        /// 429 after the retries the `Retry-After` allowed.
        case rateLimited(retryAfter: Int?)
        /// 5xx, a timeout, a connection refused or cut mid-answer.
        case unavailable
        /// An answer that is not the API's JSON envelope, or a value Gatehouse cannot take exactly (an integer
        /// beyond 2^53, which D1 sends as a JavaScript number).
        case badAnswer
        /// D1 refused a statement (the SQLite message, with D1's code).
        case statement
        /// A statement of a write changed another number of rows than the write expects; the request changed nothing.
        case unexpectedChanges
        /// A write job read something that changed before its write arrived, and kept changing over every retry.
        case contention
        /// Gatehouse asked D1 for what it cannot do in one request (a read of rows the same write changes).
        case unsupported
    }

    public let kind: Kind
    public let message: String
    /// Whether the request that failed may have been applied (a write cut off after it was sent): the outcome is
    /// unknown, not "nothing changed".
    public let outcomeUnknown: Bool

    /// The guard statement (`D1Guard`) whose failure refused the request, if one did.
    let failedGuard: Int?

    public init(_ kind: Kind, _ message: String, outcomeUnknown: Bool = false) {
        self.init(kind, message, outcomeUnknown: outcomeUnknown, failedGuard: nil)
    }

    init(_ kind: Kind, _ message: String, outcomeUnknown: Bool, failedGuard: Int?) {
        self.kind = kind
        self.message = message
        self.outcomeUnknown = outcomeUnknown
        self.failedGuard = failedGuard
    }

    public var isUniqueViolation: Bool {
        kind == .statement && (message.contains("UNIQUE constraint failed") || message.contains("PRIMARY KEY constraint failed"))
    }

    public var isCorruption: Bool {
        kind == .statement && (message.contains("malformed") && message.contains("disk image"))
    }

    public var description: String { message }
}
