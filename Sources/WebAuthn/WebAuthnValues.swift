import JOSE

/// A WebAuthn challenge: 32 fresh random bytes the relying party issues and the client data must echo.
/// Travels in JSON as unpadded base64url.
///
///     let challenge = try WebAuthnChallenge.random()
///     // keep challenge.bytes with the pending ceremony (single use, 5 minutes)
public struct WebAuthnChallenge: Sendable, Hashable, Codable {
    /// The challenge's bytes.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// 32 bytes from OpenSSL's CSPRNG (WebAuthn asks for at least 16).
    public static func random() throws -> WebAuthnChallenge {
        WebAuthnChallenge(bytes: try SecureRandom.bytes(32))
    }

    /// The unpadded base64url form, as the options JSON and the client data carry it.
    public var base64URL: String { Base64URL.encode(bytes) }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let bytes = Base64URL.decode(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not base64url"))
        }
        self.bytes = bytes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(base64URL)
    }

    /// Compares in time independent of where the bytes first differ.
    func matches(_ other: [UInt8]) -> Bool {
        guard other.count == bytes.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(bytes, other) { difference |= a ^ b }
        return difference == 0
    }
}

/// A credential id: opaque bytes (at most 1023) chosen by the authenticator, unpadded base64url in JSON.
public struct CredentialID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The id's bytes.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Reads the base64url form; nil when it is not canonical unpadded base64url.
    public init?(base64URL: String) {
        guard let bytes = Base64URL.decode(base64URL) else { return nil }
        self.bytes = bytes
    }

    /// The unpadded base64url form (what `RegistrationResponseJSON.rawId` carries).
    public var base64URL: String { Base64URL.encode(bytes) }

    public var description: String { base64URL }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let bytes = Base64URL.decode(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not base64url"))
        }
        self.bytes = bytes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(base64URL)
    }
}

/// WebAuthn's `UserVerificationRequirement`: whether a ceremony needs the UV flag.
public enum UserVerificationRequirement: String, Sendable, Hashable, Codable {
    /// UV must be set, or the ceremony fails.
    case required
    /// Ask for it; accept its absence (Gatehouse's policy: the password is the other factor).
    case preferred
    /// Do not ask for it.
    case discouraged
}

/// A credential as the relying party keeps it after registration, and hands back to verify an assertion.
public struct StoredCredential: Sendable, Hashable {
    /// The credential id.
    public var id: CredentialID
    /// The COSE_Key bytes exactly as registration returned them.
    public var publicKeyCOSE: [UInt8]
    /// The last signature counter accepted (0 when the authenticator keeps none).
    public var signCount: UInt32

    public init(id: CredentialID, publicKeyCOSE: [UInt8], signCount: UInt32) {
        self.id = id
        self.publicKeyCOSE = publicKeyCOSE
        self.signCount = signCount
    }
}

/// What a verified registration yields: everything to store for the new credential.
public struct RegisteredCredential: Sendable, Hashable {
    /// The credential id (the caller refuses one already registered to anyone).
    public let id: CredentialID
    /// The credential public key as COSE_Key bytes: store these, give them back as `StoredCredential.publicKeyCOSE`.
    public let publicKeyCOSE: [UInt8]
    /// The key's algorithm (ES256 or RS256).
    public let algorithm: COSEAlgorithm
    /// The initial signature counter.
    public let signCount: UInt32
    /// The authenticator data flags (UV, BE and BS are worth showing: a synced passkey or a device-bound key).
    public let flags: AuthenticatorFlags
    /// The authenticator model's AAGUID (16 bytes; zeros when it does not say).
    public let aaguid: [UInt8]
    /// The attestation format the authenticator used (`none` is asked for; the statement of any other is ignored).
    public let attestationFormat: String
    /// The transports the client reported (`usb`, `nfc`, `ble`, `hybrid`, `internal`, …), to hint in
    /// `allowCredentials`.
    public let transports: [String]
}

/// What a verified assertion yields.
public struct VerifiedAssertion: Sendable, Hashable {
    /// The credential that signed.
    public let credentialID: CredentialID
    /// The new signature counter: store it in place of the old one.
    public let signCount: UInt32
    /// The authenticator data flags.
    public let flags: AuthenticatorFlags

    /// Whether the authenticator verified the user (PIN, biometrics).
    public var userVerified: Bool { flags.contains(.userVerified) }
}
