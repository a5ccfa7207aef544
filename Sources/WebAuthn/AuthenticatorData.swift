/// The flags byte of authenticator data (WebAuthn Level 3 §6.1).
public struct AuthenticatorFlags: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// User present: someone touched or otherwise acknowledged the authenticator.
    public static let userPresent = AuthenticatorFlags(rawValue: 0x01)
    /// User verified: by PIN, biometrics or the like.
    public static let userVerified = AuthenticatorFlags(rawValue: 0x04)
    /// Backup eligible: the credential may be synced (a passkey in a password manager).
    public static let backupEligible = AuthenticatorFlags(rawValue: 0x08)
    /// Backed up: the credential is synced now.
    public static let backedUp = AuthenticatorFlags(rawValue: 0x10)
    /// Attested credential data follows the counter.
    public static let attestedCredentialData = AuthenticatorFlags(rawValue: 0x40)
    /// Extension data follows.
    public static let extensionData = AuthenticatorFlags(rawValue: 0x80)
}

/// The credential an authenticator created, as it appears in registration's authenticator data (§6.5.1).
public struct AttestedCredentialData: Sendable, Hashable {
    /// The authenticator model's AAGUID (16 bytes; zeros under attestation `none`).
    public let aaguid: [UInt8]
    /// The credential id (at most 1023 bytes).
    public let credentialID: [UInt8]
    /// The credential public key exactly as the authenticator encoded it: what to store.
    public let publicKeyCOSE: [UInt8]
    /// The same key, parsed.
    public let publicKey: COSEPublicKey
}

/// Why authenticator data does not parse.
public enum AuthenticatorDataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Shorter than its fixed part or than the lengths it announces.
    case truncated(String)
    /// A credential id longer than 1023 bytes.
    case credentialIDTooLong(Int)
    /// The credential public key is not one this relying party accepts.
    case publicKey(COSEKeyError)
    /// The extensions are not one CBOR map.
    case extensions(String)
    /// Bytes left over after everything the flags announce.
    case trailingBytes(Int)
    /// Larger than `AuthenticatorData.maxBytes`.
    case tooLarge(Int)

    public var description: String {
        switch self {
        case .truncated(let what): return "the authenticator data ends inside \(what)"
        case .credentialIDTooLong(let count): return "the credential id is \(count) bytes; at most 1023 are allowed"
        case .publicKey(let error): return "\(error)"
        case .extensions(let why): return "the authenticator extensions are invalid: \(why)"
        case .trailingBytes(let count): return "the authenticator data has \(count) bytes after what its flags announce"
        case .tooLarge(let count): return "the authenticator data is \(count) bytes, over the limit of \(AuthenticatorData.maxBytes)"
        }
    }
}

/// Authenticator data (WebAuthn Level 3 §6.1): rpIdHash (32) ‖ flags (1) ‖ signCount (4, big-endian)
/// ‖ attested credential data (when AT) ‖ extensions (a CBOR map, when ED).
///
///     let data = try AuthenticatorData(bytes)
///     data.flags.contains(.userPresent)
public struct AuthenticatorData: Sendable, Hashable {
    /// The bytes as received (what an assertion's signature covers).
    public let bytes: [UInt8]
    /// SHA-256 of the RP id the credential is scoped to.
    public let rpIDHash: [UInt8]
    /// UP, UV, BE, BS, AT, ED.
    public let flags: AuthenticatorFlags
    /// The signature counter; 0 from authenticators that keep none.
    public let signCount: UInt32
    /// Present exactly when the AT flag is set.
    public let attestedCredentialData: AttestedCredentialData?
    /// The authenticator extension outputs, present exactly when the ED flag is set. Not interpreted.
    public let extensions: [CBORKey: CBORValue]?

    /// The largest authenticator data accepted; real ones are a few hundred bytes (an RSA key included).
    public static let maxBytes = 16 * 1024

    /// Parses `bytes`, refusing anything left over after what the flags announce.
    public init(_ bytes: [UInt8]) throws(AuthenticatorDataError) {
        guard bytes.count <= Self.maxBytes else { throw .tooLarge(bytes.count) }
        guard bytes.count >= 37 else { throw .truncated("its fixed 37 bytes (rpIdHash, flags, signCount)") }
        self.bytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = AuthenticatorFlags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37

        if flags.contains(.attestedCredentialData) {
            guard bytes.count - offset >= 18 else { throw .truncated("the attested credential data's AAGUID and id length") }
            let aaguid = Array(bytes[offset..<offset + 16])
            let idLength = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard idLength <= 1023 else { throw .credentialIDTooLong(idLength) }
            guard bytes.count - offset >= idLength else { throw .truncated("the credential id") }
            let credentialID = Array(bytes[offset..<offset + idLength])
            offset += idLength
            let keyValue: CBORValue
            let used: Int
            do throws(CBORError) {
                (keyValue, used) = try CBORReader(maxDepth: 4, maxBytes: Self.maxBytes).readPrefix(bytes[offset...])
            } catch {
                throw .publicKey(.cbor(error))
            }
            let keyBytes = Array(bytes[offset..<offset + used])
            offset += used
            let key: COSEPublicKey
            do throws(COSEKeyError) {
                key = try COSEPublicKey(keyValue)
            } catch {
                throw .publicKey(error)
            }
            attestedCredentialData = AttestedCredentialData(
                aaguid: aaguid, credentialID: credentialID, publicKeyCOSE: keyBytes, publicKey: key)
        } else {
            attestedCredentialData = nil
        }

        if flags.contains(.extensionData) {
            guard offset < bytes.count else { throw .truncated("the extensions the ED flag announces") }
            let value: CBORValue
            do {
                value = try CBORReader(maxDepth: 8, maxBytes: Self.maxBytes).read(bytes[offset...])
            } catch {
                throw .extensions("\(error)")
            }
            guard let map = value.map else { throw .extensions("they are not a CBOR map") }
            extensions = map
            offset = bytes.count
        } else {
            extensions = nil
        }

        guard offset == bytes.count else { throw .trailingBytes(bytes.count - offset) }
    }
}
