/// A Better Auth user id (`user.id`): 32 letters and digits when Better Auth generated it.
public struct BetterAuthUserID: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    /// The sync server's sub for this user: `better_auth|<id>`.
    public var syncSub: SyncSub { SyncSub("better_auth|" + rawValue) }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public init(from decoder: Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(rawValue) }
}

/// A sync server subject, `better_auth|<Better Auth user id>`.
public struct SyncSub: Hashable, Sendable, Codable, CustomStringConvertible {
    public static let prefix = "better_auth|"
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    /// The Better Auth user id the sub names, if it has the `better_auth|` form.
    public var userID: BetterAuthUserID? {
        guard rawValue.hasPrefix(Self.prefix), rawValue.count > Self.prefix.count else { return nil }
        return BetterAuthUserID(String(rawValue.dropFirst(Self.prefix.count)))
    }
    public init(from decoder: Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(rawValue) }
}

/// Who made a change: `--actor`, a console admin, or the invoking OS user.
public struct Actor: Hashable, Sendable, Codable, CustomStringConvertible {
    public let name: String
    public init(_ name: String) { self.name = name }

    /// The longest actor name accepted from an operator.
    public static let maxLength = 200

    /// An actor named by an operator (`--actor`): one line of plain text, at most `maxLength` characters.
    public static func checked(_ name: String) throws -> Actor {
        let text = try OperatorText.check(name, field: "the actor")
        guard !text.isEmpty, text.count <= maxLength else {
            throw GatehouseError.invalid("the actor must be 1 to \(maxLength) characters", fix: "pass your name, e.g. \(field: .actor) ops-alice")
        }
        return Actor(text)
    }
    public var description: String { name }
    public init(from decoder: Decoder) throws { name = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(name) }
}

/// The issuers Better Auth 1.7 writes into `account.issuer`.
public enum Issuer {
    public static let credential = "local:credential"
    public static let apple = "https://appleid.apple.com"
    public static let google = "https://accounts.google.com"

    /// The issuer Better Auth 1.7.1 records for a provider id, from `BetterAuthProviders` (the one provider table).
    /// Where it depends on configuration or on the token (Cognito, Microsoft, generic OAuth), this is the
    /// `local:oauth:<id>` a provider without an issuer gets; ask `BetterAuthProviders.issuer(for:)` to know which.
    public static func forProvider(_ providerID: String) -> String {
        BetterAuthProviders.issuer(for: providerID).value ?? BetterAuthProviders.oauthIssuer(providerID)
    }
}
