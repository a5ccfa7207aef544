/// Why a token was refused. The raw values are the `x-auth-error` header values the console sends.
public enum TokenFailure: String, Sendable, Codable {
    /// The access token's lifetime is over: refresh once and retry.
    case expired = "token_expired"
    /// A refresh token was presented a second time: its whole family is now revoked. Log in again.
    case reuse = "token_reuse"
    /// The family was revoked (logout, reuse, password change, disabled admin). Log in again.
    case revoked = "token_revoked"
    /// Not a token this console issued (or one since deleted). Log in again.
    case invalid = "invalid_token"
}

/// A refused token, with a message safe to show (it never quotes the token).
public struct TokenError: Error, Sendable, Equatable, CustomStringConvertible {
    public let failure: TokenFailure
    public let message: String

    public init(_ failure: TokenFailure) {
        self.failure = failure
        switch failure {
        case .expired: message = "the access token has expired; refresh it"
        case .reuse: message = "this refresh token was already used; every token of this login is now revoked, log in again"
        case .revoked: message = "this login has ended; log in again"
        case .invalid: message = "no valid token; log in"
        }
    }

    public var description: String { message }
}

/// A refused login. The client learns only that the credentials were refused, or that it must wait.
public enum LoginError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidCredentials
    /// The second factor (a TOTP code, a recovery code, a passkey) was not accepted.
    case invalidSecondFactor
    /// The admin has a second factor: the login goes through `TokenService.signIn` and `completeSignIn`.
    case secondFactorRequired
    /// Locked until `until`; `retryAfter` is the wait from the time of the attempt.
    case throttled(until: Timestamp, retryAfter: Seconds)

    public var description: String {
        switch self {
        case .invalidCredentials: return "the username or password is wrong, or the account is disabled"
        case .invalidSecondFactor: return "the code or passkey was not accepted"
        case .secondFactorRequired: return "this admin has a second factor: the login needs it"
        case .throttled(let until, _): return "too many failed logins; try again after \(until.iso8601)"
        }
    }
}

/// A refused `mfaToken` (the login's second step): the client starts the login again.
public enum MFATokenError: String, Error, Sendable, CustomStringConvertible {
    /// Not a token this console issued.
    case invalid = "invalid_mfa_token"
    /// Already exchanged for tokens (single use).
    case used = "mfa_token_used"
    /// Older than 5 minutes.
    case expired = "mfa_token_expired"

    public var description: String {
        switch self {
        case .invalid: return "no valid login in progress; log in again"
        case .used: return "this login's second step is already done; log in again"
        case .expired: return "the login's second step took longer than 5 minutes; log in again"
        }
    }
}
