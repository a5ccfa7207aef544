import JOSE

/// The console as a WebAuthn relying party: its RP id, name and origin, and its user verification policy. It builds
/// the options JSON for `navigator.credentials.create()` / `.get()` and verifies what the browser sends back
/// (WebAuthn Level 3 §7.1 and §7.2).
///
///     let rp = RelyingParty(id: "console.example.com", name: "Gatehouse", origin: "https://console.example.com")
///     let options = try rp.creationOptions(user: user, excludeCredentials: existing)
///     // … keep options.challenge with the admin's pending ceremony, send options as JSON, receive the response …
///     let credential = try rp.verifyRegistration(response, expectedChallenge: pending.challenge)
///
/// What is left to the caller: the challenge is single use and expires (5 minutes); a registered credential id must
/// not already belong to anyone; an assertion's stored credential is looked up by `rawId`; the new counter is stored
/// and a `signCountNotIncreasing` failure audited.
public struct RelyingParty: Sendable, Hashable {
    /// The RP id: the console's host name (no scheme, no port), which credentials are scoped to.
    public var id: String
    /// The name shown by the browser's prompt.
    public var name: String
    /// The console's own origin (`https://host[:port]`), compared exactly with the client data's.
    public var origin: String
    /// Whether the UV flag is required; `preferred` asks for it and accepts its absence.
    public var userVerification: UserVerificationRequirement
    /// The algorithms offered and accepted, in order of preference.
    public var algorithms: [COSEAlgorithm]
    /// How long the browser waits for the user, in milliseconds (the challenge lives as long).
    public var timeoutMilliseconds: Int

    public init(
        id: String,
        name: String,
        origin: String,
        userVerification: UserVerificationRequirement = .preferred,
        algorithms: [COSEAlgorithm] = COSEAlgorithm.supported,
        timeoutMilliseconds: Int = 300_000
    ) {
        self.id = id
        self.name = name
        self.origin = origin
        self.userVerification = userVerification
        self.algorithms = algorithms
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// SHA-256 of the RP id, which authenticator data must start with.
    public var idHash: [UInt8] { SHA256.hash(Array(id.utf8)) }

    // MARK: - Registration (§7.1)

    /// Verifies a registration ceremony's response, step by step, and returns the credential to store.
    public func verifyRegistration(
        _ credential: RegistrationResponseJSON,
        expectedChallenge: WebAuthnChallenge
    ) throws(WebAuthnError) -> RegisteredCredential {
        guard credential.type == "public-key" else { throw .credentialTypeNotPublicKey }
        let rawID = try Self.decode(credential.rawId, "rawId")
        guard credential.id == credential.rawId else { throw .credentialIDMismatch }
        // Steps 5–11: the client data.
        let clientDataJSON = try Self.decode(credential.response.clientDataJSON, "response.clientDataJSON")
        try checkClientData(clientDataJSON, type: "webauthn.create", challenge: expectedChallenge)
        // Step 12: the attestation object.
        let attestationObject = try Self.decode(credential.response.attestationObject, "response.attestationObject")
        let (format, statement, authDataBytes) = try Self.attestationParts(attestationObject)
        let authData: AuthenticatorData
        do throws(AuthenticatorDataError) {
            authData = try AuthenticatorData(authDataBytes)
        } catch .publicKey(let keyError) where keyError.isUnsupported {
            throw .unsupportedPublicKey(keyError)
        } catch {
            throw .authenticatorDataMalformed(error)
        }
        // Steps 13–17: rpIdHash, UP, UV, BE/BS.
        try checkFlagsAndRP(authData)
        // Steps 19, 26: the credential and its algorithm.
        guard let attested = authData.attestedCredentialData, authData.flags.contains(.attestedCredentialData) else {
            throw .attestedCredentialDataMissing
        }
        guard algorithms.contains(attested.publicKey.algorithm) else {
            throw .unsupportedPublicKey(.unsupportedAlgorithm(attested.publicKey.algorithm.rawValue))
        }
        guard attested.credentialID == rawID else { throw .credentialIDMismatch }
        // Steps 21–22: `none` must carry an empty statement; any other format's statement is not verified (the
        // options ask for `none`, and no attestation trust policy applies).
        if format == "none", !statement.isEmpty { throw .attestationStatementInvalid }
        return RegisteredCredential(
            id: CredentialID(bytes: rawID),
            publicKeyCOSE: attested.publicKeyCOSE,
            algorithm: attested.publicKey.algorithm,
            signCount: authData.signCount,
            flags: authData.flags,
            aaguid: attested.aaguid,
            attestationFormat: format,
            transports: Self.transports(credential.response.transports))
    }

    /// fmt, attStmt and authData from an attestation object (§6.5.4).
    private static func attestationParts(_ bytes: [UInt8]) throws(WebAuthnError) -> (String, [CBORKey: CBORValue], [UInt8]) {
        let value: CBORValue
        do {
            value = try CBORReader().read(bytes)
        } catch {
            throw .attestationObjectMalformed("\(error)")
        }
        guard let map = value.map else { throw .attestationObjectMalformed("it is not a CBOR map") }
        guard let format = map[.text("fmt")]?.text, !format.isEmpty else {
            throw .attestationObjectMalformed("it has no text \"fmt\"")
        }
        guard let statement = map[.text("attStmt")]?.map else {
            throw .attestationObjectMalformed("it has no map \"attStmt\"")
        }
        guard let authData = map[.text("authData")]?.bytes else {
            throw .attestationObjectMalformed("it has no byte string \"authData\"")
        }
        return (format, statement, authData)
    }

    /// The reported transports, kept only when they look like transport names (they are echoed in options later).
    private static func transports(_ reported: [String]?) -> [String] {
        var kept: [String] = []
        for name in reported ?? [] where kept.count < 8 && !kept.contains(name) {
            let valid = !name.isEmpty && name.utf8.count <= 32
                && name.utf8.allSatisfy { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || $0 == UInt8(ascii: "-") }
            if valid { kept.append(name) }
        }
        return kept
    }

    // MARK: - Authentication (§7.2)

    /// Verifies an authentication ceremony's response against the stored credential it names, step by step, and
    /// returns the new counter to store.
    ///
    /// - Parameters:
    ///   - allowedCredentialIDs: the `allowCredentials` of the options issued; `rawId` must be one of them.
    ///   - credential: the stored credential whose id is `rawId`.
    ///   - expectedUserHandle: the user's handle (`user.id` at registration), checked when the response has one.
    public func verifyAuthentication(
        _ response: AuthenticationResponseJSON,
        expectedChallenge: WebAuthnChallenge,
        allowedCredentialIDs: [CredentialID],
        credential: StoredCredential,
        expectedUserHandle: [UInt8]? = nil
    ) throws(WebAuthnError) -> VerifiedAssertion {
        guard response.type == "public-key" else { throw .credentialTypeNotPublicKey }
        let rawID = CredentialID(bytes: try Self.decode(response.rawId, "rawId"))
        guard response.id == response.rawId else { throw .credentialIDMismatch }
        // Steps 5–6: an allowed credential, and the one whose key is given.
        guard allowedCredentialIDs.contains(rawID) else { throw .credentialNotAllowed }
        guard rawID == credential.id else { throw .storedCredentialMismatch }
        if let handle = response.response.userHandle, !handle.isEmpty, let expectedUserHandle {
            guard try Self.decode(handle, "response.userHandle") == expectedUserHandle else { throw .userHandleMismatch }
        }
        // Steps 7–14: the client data.
        let clientDataJSON = try Self.decode(response.response.clientDataJSON, "response.clientDataJSON")
        try checkClientData(clientDataJSON, type: "webauthn.get", challenge: expectedChallenge)
        // Steps 15–18: the authenticator data.
        let authDataBytes = try Self.decode(response.response.authenticatorData, "response.authenticatorData")
        let authData: AuthenticatorData
        do throws(AuthenticatorDataError) {
            authData = try AuthenticatorData(authDataBytes)
        } catch {
            throw .authenticatorDataMalformed(error)
        }
        try checkFlagsAndRP(authData)
        // Steps 20–21: the signature over authenticatorData ‖ SHA-256(clientDataJSON).
        let key: COSEPublicKey
        do throws(COSEKeyError) {
            key = try COSEPublicKey(cbor: credential.publicKeyCOSE)
        } catch {
            throw .storedPublicKeyInvalid(error)
        }
        let signature = try Self.decode(response.response.signature, "response.signature")
        guard key.isValidSignature(signature, for: authDataBytes + SHA256.hash(clientDataJSON)) else {
            throw .signatureInvalid
        }
        // Step 22: the counter, after the signature, so that only the genuine authenticator's data can raise it.
        if authData.signCount != 0 || credential.signCount != 0, authData.signCount <= credential.signCount {
            throw .signCountNotIncreasing(stored: credential.signCount, received: authData.signCount)
        }
        return VerifiedAssertion(credentialID: rawID, signCount: authData.signCount, flags: authData.flags)
    }

    // MARK: - Steps both ceremonies share

    private func checkClientData(_ bytes: [UInt8], type: String, challenge: WebAuthnChallenge) throws(WebAuthnError) {
        let clientData = try CollectedClientData(bytes)
        guard clientData.type == type else { throw .clientDataTypeMismatch(expected: type, received: clientData.type) }
        guard let received = Base64URL.decode(clientData.challenge), challenge.matches(received) else {
            throw .challengeMismatch
        }
        guard clientData.origin == origin else { throw .originMismatch(received: clientData.origin) }
        guard !clientData.crossOrigin, clientData.topOrigin == nil else { throw .crossOrigin }
    }

    private func checkFlagsAndRP(_ authData: AuthenticatorData) throws(WebAuthnError) {
        guard authData.rpIDHash == idHash else { throw .rpIDHashMismatch }
        guard authData.flags.contains(.userPresent) else { throw .userNotPresent }
        if userVerification == .required, !authData.flags.contains(.userVerified) { throw .userNotVerified }
        if authData.flags.contains(.backedUp), !authData.flags.contains(.backupEligible) { throw .backupStateInvalid }
    }

    /// The bytes of a base64url member; the largest accepted is 64 KiB of text.
    private static func decode(_ text: String, _ member: String) throws(WebAuthnError) -> [UInt8] {
        guard text.utf8.count <= 64 * 1024, let bytes = Base64URL.decode(text) else { throw .malformedResponse(member) }
        return bytes
    }
}

extension COSEKeyError {
    /// Whether this is a well-formed key of a kind not accepted, rather than a broken one.
    var isUnsupported: Bool {
        switch self {
        case .unsupportedKeyType, .unsupportedAlgorithm, .unsupportedCurve: return true
        default: return false
        }
    }
}
