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
    /// Locked until `until`; `retryAfter` is the wait from the time of the attempt.
    case throttled(until: Timestamp, retryAfter: Seconds)

    public var description: String {
        switch self {
        case .invalidCredentials: return "the username or password is wrong, or the account is disabled"
        case .throttled(let until, _): return "too many failed logins; try again after \(until.iso8601)"
        }
    }
}
