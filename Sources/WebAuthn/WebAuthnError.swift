/// Why a registration or an assertion was refused. Each case is one step of WebAuthn Level 3 §7.1 (registration) or
/// §7.2 (authentication); `step` names it. Descriptions hold no key material or challenge.
public enum WebAuthnError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A base64url member is not canonical unpadded base64url, or a member is too large. The associated value names
    /// the member.
    case malformedResponse(String)
    /// The credential's `type` is not "public-key".
    case credentialTypeNotPublicKey
    /// `id` and `rawId` differ, or `rawId` is not the credential id in the authenticator data.
    case credentialIDMismatch
    /// `clientDataJSON` is not UTF-8 JSON with string `type`, `challenge` and `origin` members.
    case clientDataMalformed(String)
    /// The client data's `type` is not the ceremony's (`webauthn.create` or `webauthn.get`).
    case clientDataTypeMismatch(expected: String, received: String)
    /// The client data's challenge is not the one issued.
    case challengeMismatch
    /// The client data's origin is not the relying party's own (exact match).
    case originMismatch(received: String)
    /// The ceremony ran in a cross-origin iframe (`crossOrigin` true, or a `topOrigin`).
    case crossOrigin
    /// The attestation object is not a CBOR map with `fmt` (text), `attStmt` (map) and `authData` (bytes).
    case attestationObjectMalformed(String)
    /// The authenticator data does not parse.
    case authenticatorDataMalformed(AuthenticatorDataError)
    /// `rpIdHash` is not SHA-256 of the RP id.
    case rpIDHashMismatch
    /// The UP flag is clear.
    case userNotPresent
    /// The UV flag is clear and the policy requires it.
    case userNotVerified
    /// BS (backed up) is set without BE (backup eligible).
    case backupStateInvalid
    /// Registration's authenticator data has no attested credential data (AT clear).
    case attestedCredentialDataMissing
    /// The credential public key is of a type, curve or algorithm not accepted (only ES256 and RS256 are).
    case unsupportedPublicKey(COSEKeyError)
    /// Attestation `none` with a non-empty statement.
    case attestationStatementInvalid
    /// The assertion's credential is not among those allowed for this ceremony.
    case credentialNotAllowed
    /// The assertion's credential is not the stored credential it is being checked against.
    case storedCredentialMismatch
    /// The returned user handle is not the expected user's.
    case userHandleMismatch
    /// The stored public key does not parse (storage damage).
    case storedPublicKeyInvalid(COSEKeyError)
    /// The signature over authenticatorData ‖ SHA-256(clientDataJSON) does not verify with the stored key.
    case signatureInvalid
    /// Either counter is non-zero and the new one is not greater than the stored one: the authenticator may have
    /// been cloned. The caller audits this.
    case signCountNotIncreasing(stored: UInt32, received: UInt32)

    /// The verification step that failed, in words.
    public var step: String {
        switch self {
        case .malformedResponse: return "response encoding"
        case .credentialTypeNotPublicKey: return "credential type"
        case .credentialIDMismatch: return "credential id"
        case .clientDataMalformed: return "client data parsing"
        case .clientDataTypeMismatch: return "client data type"
        case .challengeMismatch: return "challenge"
        case .originMismatch: return "origin"
        case .crossOrigin: return "cross-origin"
        case .attestationObjectMalformed: return "attestation object"
        case .authenticatorDataMalformed: return "authenticator data"
        case .rpIDHashMismatch: return "RP id hash"
        case .userNotPresent: return "user presence"
        case .userNotVerified: return "user verification"
        case .backupStateInvalid: return "backup state"
        case .attestedCredentialDataMissing: return "attested credential data"
        case .unsupportedPublicKey: return "public key algorithm"
        case .attestationStatementInvalid: return "attestation statement"
        case .credentialNotAllowed: return "allowed credentials"
        case .storedCredentialMismatch: return "stored credential"
        case .userHandleMismatch: return "user handle"
        case .storedPublicKeyInvalid: return "stored public key"
        case .signatureInvalid: return "signature"
        case .signCountNotIncreasing: return "signature counter"
        }
    }

    public var description: String {
        switch self {
        case .malformedResponse(let member): return "the credential's \(member) is malformed"
        case .credentialTypeNotPublicKey: return "the credential's type is not \"public-key\""
        case .credentialIDMismatch: return "the credential's id, rawId and attested credential id do not agree"
        case .clientDataMalformed(let why): return "the client data is malformed: \(why)"
        case .clientDataTypeMismatch(let expected, let received):
            return "the client data's type is \"\(Self.clip(received))\", not \"\(expected)\""
        case .challengeMismatch: return "the client data's challenge is not the one issued"
        case .originMismatch(let received): return "the origin \"\(Self.clip(received))\" is not this console's"
        case .crossOrigin: return "the ceremony ran in a cross-origin frame"
        case .attestationObjectMalformed(let why): return "the attestation object is malformed: \(why)"
        case .authenticatorDataMalformed(let error): return "the authenticator data is malformed: \(error)"
        case .rpIDHashMismatch: return "the authenticator data is for another RP id"
        case .userNotPresent: return "the authenticator did not report user presence (UP)"
        case .userNotVerified: return "the authenticator did not verify the user (UV) and this policy requires it"
        case .backupStateInvalid: return "the authenticator reports a backed-up credential that is not backup-eligible"
        case .attestedCredentialDataMissing: return "the authenticator data has no attested credential (AT)"
        case .unsupportedPublicKey(let error): return "\(error)"
        case .attestationStatementInvalid: return "attestation \"none\" carries a non-empty statement"
        case .credentialNotAllowed: return "the credential is not one allowed for this sign-in"
        case .storedCredentialMismatch: return "the credential is not the stored credential it is checked against"
        case .userHandleMismatch: return "the credential's user handle is not this user's"
        case .storedPublicKeyInvalid(let error): return "the stored public key is invalid: \(error)"
        case .signatureInvalid: return "the assertion's signature does not verify with the credential's key"
        case .signCountNotIncreasing(let stored, let received):
            return "the signature counter went from \(stored) to \(received), not up: the authenticator may have been cloned"
        }
    }

    /// Client-chosen text, shortened for a message.
    private static func clip(_ text: String) -> String {
        text.count <= 100 ? text : String(text.prefix(100)) + "…"
    }
}
