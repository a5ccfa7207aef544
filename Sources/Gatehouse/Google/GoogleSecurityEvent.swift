import JOSE

/// One event of a security event token (RFC 8417) that Google's Cross-Account Protection (RISC) sent: its type, the
/// Google account it is about, and the event's own fields. A token carries its events in the `events` claim, keyed by
/// event type URI; Google sends one event per token.
public struct GoogleSecurityEvent: Sendable, Equatable {
    /// The event types Google sends, by their short names (the last part of the URI).
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case sessionsRevoked = "sessions-revoked"
        case tokensRevoked = "tokens-revoked"
        case tokenRevoked = "token-revoked"
        case accountDisabled = "account-disabled"
        case accountEnabled = "account-enabled"
        case credentialChangeRequired = "account-credential-change-required"
        case verification

        /// The event type URI (OpenID RISC Event Types 1.0; OAuth event types for the token events).
        public var uri: String {
            switch self {
            case .tokensRevoked, .tokenRevoked: return "https://schemas.openid.net/secevent/oauth/event-type/\(rawValue)"
            default: return "https://schemas.openid.net/secevent/risc/event-type/\(rawValue)"
            }
        }

        public init?(uri: String) {
            guard let kind = Kind.allCases.first(where: { $0.uri == uri }) else { return nil }
            self = kind
        }
    }

    /// How `token-revoked` names the refresh token: its first 16 characters, or Base64(SHA-512(SHA-512(token))).
    public enum TokenIdentifier: Sendable, Equatable {
        case prefix(String)
        case doubleSHA512(String)

        /// Whether `token` is the token this names.
        public func matches(_ token: String) -> Bool {
            switch self {
            case .prefix(let prefix): return prefix.count == 16 && token.hasPrefix(prefix)
            case .doubleSHA512(let hash): return Self.doubleSHA512(of: token) == hash
            }
        }

        static func doubleSHA512(of token: String) -> String {
            Base64.encode(SHA512.digest(SHA512.digest(Array(token.utf8))))
        }
    }

    public let kind: Kind
    public let jti: String
    public let issuedAt: Timestamp?
    /// The Google account's `sub` (`subject_type` `iss-sub`), for every event but `token-revoked` and `verification`.
    public let sub: String?
    /// `token-revoked`: the refresh token it names.
    public let token: TokenIdentifier?
    /// `account-disabled`: `hijacking`, `bulk-account`, or nil when Google gave none.
    public let reason: String?
    /// `verification`: the `state` the stream's verify request sent.
    public let state: String?
}
