/// `RegistrationResponseJSON` (WebAuthn Level 3 §5.1): what `navigator.credentials.create()` gives, serialised with
/// `PublicKeyCredential.toJSON()`, binary fields as unpadded base64url. Members not listed (`clientExtensionResults`,
/// `authenticatorAttachment`) are read past.
public struct RegistrationResponseJSON: Sendable, Hashable, Codable {
    /// The credential id, base64url (the same as `rawId`).
    public var id: String
    /// The credential id, base64url.
    public var rawId: String
    /// The authenticator's response.
    public var response: AuthenticatorAttestationResponseJSON
    /// "public-key".
    public var type: String

    public init(id: String, rawId: String, response: AuthenticatorAttestationResponseJSON, type: String = "public-key") {
        self.id = id
        self.rawId = rawId
        self.response = response
        self.type = type
    }
}

/// `AuthenticatorAttestationResponseJSON`: the registration ceremony's response.
public struct AuthenticatorAttestationResponseJSON: Sendable, Hashable, Codable {
    /// The exact client data bytes, base64url.
    public var clientDataJSON: String
    /// The CBOR attestation object (fmt, attStmt, authData), base64url.
    public var attestationObject: String
    /// Transport hints (`usb`, `nfc`, `ble`, `smart-card`, `hybrid`, `internal`).
    public var transports: [String]?

    public init(clientDataJSON: String, attestationObject: String, transports: [String]? = nil) {
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
    }
}

/// `AuthenticationResponseJSON` (WebAuthn Level 3 §5.1): what `navigator.credentials.get()` gives, serialised with
/// `toJSON()`.
public struct AuthenticationResponseJSON: Sendable, Hashable, Codable {
    /// The credential id, base64url (the same as `rawId`).
    public var id: String
    /// The credential id, base64url: look the stored credential up by it.
    public var rawId: String
    /// The authenticator's response.
    public var response: AuthenticatorAssertionResponseJSON
    /// "public-key".
    public var type: String

    public init(id: String, rawId: String, response: AuthenticatorAssertionResponseJSON, type: String = "public-key") {
        self.id = id
        self.rawId = rawId
        self.response = response
        self.type = type
    }
}

/// `AuthenticatorAssertionResponseJSON`: the authentication ceremony's response.
public struct AuthenticatorAssertionResponseJSON: Sendable, Hashable, Codable {
    /// The exact client data bytes, base64url.
    public var clientDataJSON: String
    /// The authenticator data bytes, base64url.
    public var authenticatorData: String
    /// The signature over authenticatorData ‖ SHA-256(clientDataJSON), base64url (ES256 in ASN.1 DER).
    public var signature: String
    /// The user handle a discoverable credential returns; absent or empty otherwise.
    public var userHandle: String?

    public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String? = nil) {
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}
