/// A failure an operator can act on: what went wrong, with which input, and what to do.
///
///     throw GatehouseError.notFound("no merge plan \(id)", fix: "list plans with \(command: .mergeList)")
///
/// Its message and fix name inputs and commands as `DomainText` references; each front end renders them
/// (`markedDescription` is the text to render), and `description` renders them in neutral words.
///
/// The domain throws these for what it decides, and lets Storage's errors through as they are: each front end
/// turns a storage failure into one of these in one place (`GatehouseError(storeFailure:)`, called by the CLI's
/// top-level `catch`, the console's `APIError.from` and the health runner).
public struct GatehouseError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A stable code for scripts and the console's JSON errors. The console derives its HTTP status from it.
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// Anything without a more precise code.
        case failed
        /// The input was malformed or out of range.
        case invalid
        /// A lookup found nothing.
        case notFound = "not_found"
        /// The change conflicts with the current state (a version moved, a plan went stale).
        case conflict
        /// The change would break Guideline 4.8 (Google on iOS without Sign in with Apple).
        case guideline48 = "guideline_4_8"
        /// The value is derived from other facts and cannot be set by hand.
        case derived
        /// The change opens an account-takeover path and was not explicitly accepted.
        case takeoverRisk = "takeover_risk"
        /// Another process held the store's lock past the busy timeout.
        case busy
        /// The store (or its folder) cannot be written by this user, or is on a read-only filesystem.
        case readOnly = "read_only"
        /// Gatehouse's own rows or the database's pages are damaged.
        case corrupt
        /// The file is not a SQLite database, or SQLite found it damaged while reading.
        case notADatabase = "not_a_database"
        /// The disk holding the store is full.
        case diskFull = "disk_full"
        /// The store could not be opened at all.
        case cannotOpen = "cannot_open"
        /// The store's server cannot be reached now, or the connection to it was lost: retry shortly.
        case unavailable = "store_unavailable"
        /// A change was sent to the store and no answer says whether it was applied: check before running it again.
        case outcomeUnknown = "outcome_unknown"
        /// The store's role (or the file's owner) lacks a right the operation needs.
        case permissionDenied = "permission_denied"
        /// The store answered with an error Gatehouse has no better words for.
        case storeError = "store_error"
        /// Sealed keys exist but the master key file that opens them is missing.
        case masterKeyMissing = "master_key_missing"
        /// A sealed key did not open with the master key.
        case unsealFailed = "unseal_failed"
        /// OpenSSL refused an operation that cannot fail on valid input.
        case cryptoFailed = "crypto_failed"
        /// The console could not listen on its address.
        case listenFailed = "listen_failed"
        /// A secret would be printed and the caller did not ask for it to be revealed.
        case revealRequired = "reveal_required"
        /// A key failed its self-test (sign and verify, unseal) and was left as it was.
        case selfTestFailed = "self_test_failed"
        /// An admin tried to approve their own request: a second person must.
        case selfApproval = "self_approval"
        /// The approval request is no longer pending (approved, denied, expired, or running).
        case approvalClosed = "approval_closed"
    }

    /// What is wrong, naming the input.
    public let message: String
    /// What to do about it, if there is something to do.
    public let fix: String?
    /// What kind of failure it is.
    public let code: Code

    public init(_ message: String, fix: String? = nil, code: Code = .failed) {
        self.message = message
        self.fix = fix
        self.code = code
    }

    /// The message and fix in neutral words (`DomainText.Spelling.neutral`), for logs and tests.
    public var description: String { DomainText.render(markedDescription, .neutral) }

    /// The message and fix with their references still marked, for a front end to render in its spelling.
    public var markedDescription: String {
        guard let fix else { return message }
        return "\(message)\n  fix: \(fix)"
    }

    /// A lookup found nothing.
    public static func notFound(_ message: String, fix: String? = nil) -> GatehouseError {
        GatehouseError(message, fix: fix, code: .notFound)
    }

    /// The input was malformed.
    public static func invalid(_ message: String, fix: String? = nil) -> GatehouseError {
        GatehouseError(message, fix: fix, code: .invalid)
    }

    /// The change conflicts with the current state.
    public static func conflict(_ message: String, fix: String? = nil) -> GatehouseError {
        GatehouseError(message, fix: fix, code: .conflict)
    }
}
