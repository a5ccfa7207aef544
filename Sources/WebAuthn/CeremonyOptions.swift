import JOSE

/// The user a credential is created for (`PublicKeyCredentialUserEntity`).
public struct WebAuthnUser: Sendable, Hashable {
    /// The user handle: 1–64 opaque bytes, stable for the user, holding nothing personal (a random id, not a name).
    public var handle: [UInt8]
    /// The account name the browser shows ("alice").
    public var name: String
    /// A friendlier name the browser may show ("Alice Martin").
    public var displayName: String

    public init(handle: [UInt8], name: String, displayName: String) {
        self.handle = handle
        self.name = name
        self.displayName = displayName
    }
}

/// Why options could not be built.
public enum WebAuthnOptionsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A user handle that is empty or longer than 64 bytes.
    case userHandleLength(Int)
    /// The system's random generator failed.
    case randomness

    public var description: String {
        switch self {
        case .userHandleLength(let count): return "a WebAuthn user handle is 1 to 64 bytes, not \(count)"
        case .randomness: return "the system's random number generator failed"
        }
    }
}

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3 §5.4): what `navigator.credentials.create()` is given
/// (after `PublicKeyCredential.parseCreationOptionsFromJSON`, or the same decoding done by hand).
public struct PublicKeyCredentialCreationOptionsJSON: Sendable, Hashable, Encodable {
    /// `rp`: who asks.
    public struct RelyingPartyEntity: Sendable, Hashable, Encodable {
        /// The RP id.
        public let id: String
        /// The name the browser shows.
        public let name: String
    }

    /// `user`: whom the credential is for.
    public struct UserEntity: Sendable, Hashable, Encodable {
        /// The user handle, base64url.
        public let id: String
        /// The account name.
        public let name: String
        /// The friendlier name.
        public let displayName: String
    }

    /// One `pubKeyCredParams` entry.
    public struct CredentialParameters: Sendable, Hashable, Encodable {
        /// "public-key".
        public let type: String
        /// The COSE algorithm offered.
        public let alg: COSEAlgorithm
    }

    /// `authenticatorSelection`: a discoverable credential and user verification preferred.
    public struct AuthenticatorSelection: Sendable, Hashable, Encodable {
        /// "preferred".
        public let residentKey: String
        /// The relying party's policy.
        public let userVerification: UserVerificationRequirement
    }

    /// Who asks.
    public let rp: RelyingPartyEntity
    /// Whom the credential is for.
    public let user: UserEntity
    /// The fresh challenge: keep it with the pending registration.
    public let challenge: WebAuthnChallenge
    /// ES256 and RS256, in order of preference.
    public let pubKeyCredParams: [CredentialParameters]
    /// Milliseconds.
    public let timeout: Int
    /// The user's credentials already registered, so that an authenticator does not register twice.
    public let excludeCredentials: [CredentialDescriptor]
    /// A discoverable credential and user verification preferred.
    public let authenticatorSelection: AuthenticatorSelection
    /// "none": no attestation statement is asked for.
    public let attestation: String
}

/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn Level 3 §5.5): what `navigator.credentials.get()` is given.
public struct PublicKeyCredentialRequestOptionsJSON: Sendable, Hashable, Encodable {
    /// The fresh challenge: keep it with the pending sign-in or step-up.
    public let challenge: WebAuthnChallenge
    /// Milliseconds.
    public let timeout: Int
    /// The RP id the assertion is scoped to.
    public let rpId: String
    /// The user's registered credentials.
    public let allowCredentials: [CredentialDescriptor]
    /// The relying party's policy.
    public let userVerification: UserVerificationRequirement
}

/// `PublicKeyCredentialDescriptorJSON`: a credential named in `excludeCredentials` or `allowCredentials`.
public struct CredentialDescriptor: Sendable, Hashable, Encodable {
    /// "public-key".
    public let type: String
    /// The credential id (base64url in JSON).
    public let id: CredentialID
    /// Transport hints as registration reported them; left out of the JSON when nil.
    public let transports: [String]?

    public init(id: CredentialID, transports: [String]? = nil) {
        self.type = "public-key"
        self.id = id
        self.transports = transports
    }
}

extension RelyingParty {
    /// Creation options for registering a credential for `user`, with a fresh 32-byte challenge (or `challenge`, one
    /// the caller issued and keeps): ES256 and RS256, a discoverable credential and user verification preferred,
    /// attestation `none`.
    ///
    ///     let options = try rp.creationOptions(user: WebAuthnUser(handle: handle, name: "alice", displayName: "Alice"),
    ///                                          excludeCredentials: registered.map { CredentialDescriptor(id: $0.id) })
    public func creationOptions(
        user: WebAuthnUser,
        excludeCredentials: [CredentialDescriptor],
        challenge: WebAuthnChallenge? = nil
    ) throws(WebAuthnOptionsError) -> PublicKeyCredentialCreationOptionsJSON {
        guard (1...64).contains(user.handle.count) else { throw .userHandleLength(user.handle.count) }
        let issued: WebAuthnChallenge
        if let challenge { issued = challenge } else { issued = try Self.freshChallenge() }
        return PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: id, name: name),
            user: .init(id: Base64URL.encode(user.handle), name: user.name, displayName: user.displayName),
            challenge: issued,
            pubKeyCredParams: algorithms.map { .init(type: "public-key", alg: $0) },
            timeout: timeoutMilliseconds,
            excludeCredentials: excludeCredentials,
            authenticatorSelection: .init(residentKey: "preferred", userVerification: userVerification),
            attestation: "none")
    }

    /// Request options for signing in or stepping up with one of `allowCredentials`, with a fresh 32-byte challenge.
    public func requestOptions(
        allowCredentials: [CredentialDescriptor]
    ) throws(WebAuthnOptionsError) -> PublicKeyCredentialRequestOptionsJSON {
        PublicKeyCredentialRequestOptionsJSON(
            challenge: try Self.freshChallenge(),
            timeout: timeoutMilliseconds,
            rpId: id,
            allowCredentials: allowCredentials,
            userVerification: userVerification)
    }

    private static func freshChallenge() throws(WebAuthnOptionsError) -> WebAuthnChallenge {
        do {
            return try WebAuthnChallenge.random()
        } catch {
            throw .randomness
        }
    }
}
