import Storage

/// What a second factor is.
public enum FactorKind: String, Sendable, Codable, CaseIterable {
    /// An authenticator app's time-based codes (RFC 6238).
    case totp
    /// A passkey or security key (WebAuthn).
    case webauthn
}

/// How an admin proves a second factor: a factor kind, or one of their single-use recovery codes.
public enum SecondFactorMethod: String, Sendable, Codable, CaseIterable {
    case webauthn, totp, recovery
}

/// One of an admin's second factors as listed: never its secret or public key.
public struct AdminFactor: Sendable, Codable, Equatable {
    /// A random id (the console's routes name the factor by it).
    public let id: String
    public let kind: FactorKind
    public let name: String
    /// False while a TOTP factor waits for its first code (`SecondFactors.confirmTOTP`); a pending factor proves nothing.
    public let confirmed: Bool
    public let createdAt: Timestamp
    public let confirmedAt: Timestamp?
    public let lastUsedAt: Timestamp?
    /// A WebAuthn factor's credential id (base64url): no secret, the browser needs it to find the key.
    public let credentialId: String?

    init(row: Row) throws {
        id = try row.string("id")
        kind = FactorKind(rawValue: try row.string("kind")) ?? .totp
        name = try row.string("name")
        confirmedAt = row["confirmed_at"].string.flatMap(Timestamp.init(iso8601:))
        confirmed = confirmedAt != nil
        createdAt = row["created_at"].string.flatMap(Timestamp.init(iso8601:)) ?? Timestamp(milliseconds: 0)
        lastUsedAt = row["last_used_at"].string.flatMap(Timestamp.init(iso8601:))
        credentialId = row["credential_id"].string
    }
}

/// A stored WebAuthn credential, as a verifier checks an assertion against it.
public struct WebAuthnCredential: Sendable, Equatable {
    /// The factor's id.
    public let factorID: String
    /// The credential id, base64url.
    public let credentialID: String
    /// The COSE public key as registered.
    public let publicKey: [UInt8]
    /// The authenticator's signature counter as last seen (0: the authenticator keeps none).
    public let signCount: UInt32
    /// The admin's WebAuthn user handle (base64url), which a discoverable credential's assertion returns.
    public let userHandle: String?
}

/// The seam through which WebAuthn assertions are verified: Gatehouse keeps the credentials, their counters and the
/// challenges; a conforming type checks what the browser sent (WebAuthn Level 3 §7.2: type `webauthn.get`, the
/// challenge, the origin, `rpIdHash`, the UP flag, the signature over `authenticatorData ‖ SHA-256(clientDataJSON)`).
/// Without one (`SecondFactors.webauthn` nil), a passkey is not offered as a method and a `webauthn` answer is refused.
public protocol WebAuthnAssertionVerifier: Sendable {
    /// The credential id (base64url) an `AuthenticationResponseJSON` names, read without checking anything.
    func credentialID(of assertion: String) throws -> String
    /// The challenge (base64url) its `clientDataJSON` names, read without checking anything: a step-up finds the
    /// challenge it was issued by it (`MFAChallenges`), then `verify` checks it.
    func challenge(of assertion: String) throws -> String
    /// Checks `assertion` (`AuthenticationResponseJSON`) for `challenge` (base64url, as issued) against `credential`;
    /// returns the authenticator's signature counter from it. Throws when anything does not verify.
    func verify(assertion: String, challenge: String, credential: WebAuthnCredential) throws -> UInt32
    /// The RP id request options name (`rpId`): the console's origin's host; nil when it is not known.
    var relyingPartyID: String? { get }
}

extension WebAuthnAssertionVerifier {
    public var relyingPartyID: String? { nil }
}

/// The part of WebAuthn's `PublicKeyCredentialRequestOptions` (JSON form) Gatehouse knows: the challenge and the
/// admin's credentials. The relying party id is the console's origin's, added where that is known.
public struct WebAuthnRequestOptions: Sendable, Equatable, Encodable {
    public struct Descriptor: Sendable, Equatable, Encodable {
        public let type = "public-key"
        public let id: String
        enum CodingKeys: String, CodingKey { case type, id }
    }

    public let challenge: String
    /// The RP id the assertion is scoped to; left out of the JSON when nil.
    public let rpId: String?
    public let allowCredentials: [Descriptor]
    public let userVerification = "preferred"
    /// Milliseconds: the challenge's lifetime.
    public let timeout: Int64

    enum CodingKeys: String, CodingKey { case challenge, rpId, allowCredentials, userVerification, timeout }

    public init(challenge: String, rpId: String? = nil, credentials: [WebAuthnCredential], lifetime: Int64) {
        self.challenge = challenge
        self.rpId = rpId
        allowCredentials = credentials.map { Descriptor(id: $0.credentialID) }
        timeout = lifetime * 1000
    }
}

/// What enrolling a TOTP factor hands the admin once: the secret to type in, and the URI to scan.
public struct TOTPEnrolment: Sendable, Encodable {
    /// The pending factor's id.
    public let id: String
    /// The secret in base32, shown this once (it is stored only sealed).
    public let secret: String
    /// `otpauth://totp/Gatehouse:<username>?secret=…`, for a QR code.
    public let otpauthUri: String
}

/// What `SecondFactors.reset` removed.
public struct SecondFactorReset: Sendable, Codable, Equatable {
    public let username: String
    public let factorsRemoved: Int
    public let recoveryCodesRemoved: Int
    public let sessionsEnded: Int
}

/// An admin as `gatehouse admins list --json` shows them: with their factors' kinds and names, never a secret.
public struct AdminWithFactors: Sendable, Encodable {
    public let admin: Admin
    public let factors: [AdminFactor]
    public let recoveryCodesLeft: Int

    enum CodingKeys: String, CodingKey { case factors, recoveryCodesLeft }

    public func encode(to encoder: Encoder) throws {
        try admin.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(factors, forKey: .factors)
        try container.encode(recoveryCodesLeft, forKey: .recoveryCodesLeft)
    }
}
