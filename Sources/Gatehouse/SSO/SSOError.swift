/// Why a single sign-on was refused, or password login with it: a stable code (the console's `error.code`, and the
/// refusal page's), a sentence a person can act on, and never a token, code, state or secret.
public struct SSOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The refusals, each its own code so a test (and an operator reading the audit log) can tell them apart.
    public enum Reason: String, Sendable, CaseIterable {
        case passwordLoginDisabled = "password_login_disabled"
        case notConfigured = "sso_not_configured"
        case providerUnavailable = "sso_provider_unavailable"
        case providerError = "sso_provider_error"
        case stateMissing = "sso_state_missing"
        case stateMismatch = "sso_state_mismatch"
        case stateUsed = "sso_state_used"
        case stateExpired = "sso_state_expired"
        case codeRefused = "sso_code_refused"
        case idTokenMalformed = "id_token_malformed"
        case idTokenSignature = "id_token_signature"
        case idTokenIssuer = "id_token_issuer"
        case idTokenAudience = "id_token_audience"
        case idTokenExpired = "id_token_expired"
        case idTokenNonce = "id_token_nonce"
        case emailMissing = "email_missing"
        case emailNotVerified = "email_not_verified"
        case domainNotAllowed = "domain_not_allowed"
        case noMatchingGroup = "no_matching_group"
        case adminDisabled = "admin_disabled"
        case nameTaken = "name_taken"
        case ticketInvalid = "sso_ticket_invalid"
        case ticketUsed = "sso_ticket_used"
        case ticketExpired = "sso_ticket_expired"
        case reauthenticationNeeded = "reauthentication_needed"
    }

    public let reason: Reason
    /// What happened, for the person at the browser and the audit log.
    public let message: String

    public init(_ reason: Reason, _ message: String? = nil) {
        self.reason = reason
        self.message = message ?? Self.standardMessage(reason)
    }

    /// The stable code.
    public var code: String { reason.rawValue }

    /// The HTTP status the console answers with.
    public var status: Int {
        switch reason {
        case .stateMissing, .stateMismatch, .stateUsed, .stateExpired: return 400
        case .providerUnavailable: return 502
        case .ticketInvalid, .ticketUsed, .ticketExpired: return 401
        case .notConfigured: return 404
        default: return 403
        }
    }

    public var description: String { message }

    static func standardMessage(_ reason: Reason) -> String {
        switch reason {
        case .passwordLoginDisabled: return "password login is turned off on this console; sign in with single sign-on"
        case .notConfigured: return "single sign-on is not set up on this console"
        case .providerUnavailable: return "the identity provider could not be reached or gave an answer that is not usable"
        case .providerError: return "the identity provider did not sign you in"
        case .stateMissing: return "this sign-in was not started from this browser (no sign-in state); start again"
        case .stateMismatch: return "this sign-in's state does not match the one this browser started; start again"
        case .stateUsed: return "this sign-in was already completed once; start again"
        case .stateExpired: return "this sign-in took longer than 10 minutes; start again"
        case .codeRefused: return "the identity provider refused to exchange the sign-in's code"
        case .idTokenMalformed: return "the identity provider's ID token is not a well-formed signed token"
        case .idTokenSignature: return "the ID token's signature does not verify with the identity provider's keys"
        case .idTokenIssuer: return "the ID token was issued by another issuer than the configured one"
        case .idTokenAudience: return "the ID token was issued for another client"
        case .idTokenExpired: return "the ID token has expired (or was issued in the future)"
        case .idTokenNonce: return "the ID token's nonce does not match this sign-in"
        case .emailMissing: return "the identity provider sent no email for you; an SSO admin is named by their email"
        case .emailNotVerified: return "the identity provider does not vouch for your email (email_verified is not true)"
        case .domainNotAllowed: return "your email's domain is not the one allowed on this console"
        case .noMatchingGroup: return "you are in none of the groups that give access to this console"
        case .adminDisabled: return "your console account is disabled; ask an admin to enable it"
        case .nameTaken: return "a console admin with your email as name exists that is not yours from this provider"
        case .ticketInvalid: return "no valid sign-in ticket; sign in again"
        case .ticketUsed: return "this sign-in ticket was already used; sign in again"
        case .ticketExpired: return "this sign-in ticket is older than 60 seconds; sign in again"
        case .reauthenticationNeeded: return "this action needs a fresh sign-in: log out and sign in again with single sign-on, then retry within 5 minutes"
        }
    }
}
