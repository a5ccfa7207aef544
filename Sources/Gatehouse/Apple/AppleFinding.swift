/// One thing a diagnosis found: a client secret's or an ID token's fault, a warning, or a check that passed.
public struct AppleFinding: Sendable, Codable, Equatable {
    /// How much it matters.
    public enum Severity: String, Sendable, Codable, Comparable {
        /// Checked and fine.
        case ok
        /// Worth knowing; does not make the token fail.
        case note
        /// Will fail soon or under some configuration.
        case warning
        /// Makes the token fail.
        case error

        private var rank: Int { [.ok: 0, .note: 1, .warning: 2, .error: 3][self]! }
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }

    public let severity: Severity
    /// A stable code for scripts (`der_signature`, `aud_mismatch`, …).
    public let code: String
    /// What was found, in words.
    public let message: String
    /// What the other side reports for it (Apple's `invalid_client`; Better Auth's
    /// `JWTClaimValidationFailed: unexpected "aud" claim value`), when it fails.
    public let reported: String?
    /// What to change.
    public let fix: String?

    public init(_ severity: Severity, _ code: String, _ message: String, reported: String? = nil, fix: String? = nil) {
        self.severity = severity
        self.code = code
        self.message = message
        self.reported = reported
        self.fix = fix
    }
}
