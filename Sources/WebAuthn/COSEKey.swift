import JOSE

/// A COSE algorithm identifier (IANA "COSE Algorithms"), as WebAuthn's `pubKeyCredParams` and COSE keys name them.
public struct COSEAlgorithm: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: Int64

    public init(rawValue: Int64) {
        self.rawValue = rawValue
    }

    /// ECDSA with SHA-256 on P-256.
    public static let es256 = COSEAlgorithm(rawValue: -7)
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    public static let rs256 = COSEAlgorithm(rawValue: -257)

    /// The algorithms a Gatehouse credential may use, in the order the console offers them.
    public static let supported: [COSEAlgorithm] = [.es256, .rs256]

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String {
        switch self {
        case .es256: return "ES256 (-7)"
        case .rs256: return "RS256 (-257)"
        default: return String(rawValue)
        }
    }
}

/// Why bytes are not a COSE public key this relying party accepts.
public enum COSEKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not CBOR this reader accepts.
    case cbor(CBORError)
    /// CBOR, but not a map.
    case notAMap
    /// A required parameter is absent (`kty`, `alg`, `crv`, `x`, `y`, `n`, `e`).
    case missingParameter(String)
    /// A parameter has the wrong CBOR type or length.
    case invalidParameter(String, String)
    /// A key type other than EC2 (2) or RSA (3).
    case unsupportedKeyType(Int64?)
    /// An algorithm other than ES256 for EC2 or RS256 for RSA.
    case unsupportedAlgorithm(Int64?)
    /// An EC2 curve other than P-256 (1).
    case unsupportedCurve(Int64?)
    /// A private key parameter (`d`, or RSA's private parts) where only a public key belongs.
    case privateKeyMaterial
    /// The numbers do not make a valid key (an EC point off the curve, an RSA modulus under 2048 bits, …).
    case invalidKey(String)

    public var description: String {
        switch self {
        case .cbor(let error): return "the COSE key is not valid CBOR: \(error)"
        case .notAMap: return "the COSE key is not a CBOR map"
        case .missingParameter(let name): return "the COSE key lacks its \(name) parameter"
        case .invalidParameter(let name, let why): return "the COSE key's \(name) parameter \(why)"
        case .unsupportedKeyType(let kty):
            return "the COSE key type \(kty.map(String.init) ?? "(not an integer)") is not supported: only EC2 (2) and RSA (3) are"
        case .unsupportedAlgorithm(let alg):
            return "the COSE algorithm \(alg.map(String.init) ?? "(not an integer)") is not supported: only ES256 (-7) with EC2 and RS256 (-257) with RSA are"
        case .unsupportedCurve(let crv):
            return "the COSE curve \(crv.map(String.init) ?? "(not an integer)") is not supported: only P-256 (1) is"
        case .privateKeyMaterial: return "the COSE key carries private key material"
        case .invalidKey(let why): return "the COSE key is not a valid public key: \(why)"
        }
    }
}

/// A credential public key read from its COSE_Key encoding (RFC 9052 §7, RFC 9053 §7.1, RFC 8230 §4): EC2 P-256
/// with ES256, or RSA with RS256. It verifies WebAuthn assertion signatures.
///
///     let key = try COSEPublicKey(cbor: storedCredential.publicKeyCOSE)
///     key.isValidSignature(signature, for: authenticatorData + SHA256.hash(clientDataJSON))
public enum COSEPublicKey: Sendable, Hashable {
    /// kty 2 (EC2), crv 1 (P-256), alg -7 (ES256).
    case es256(P256.PublicKey)
    /// kty 3 (RSA), alg -257 (RS256).
    case rs256(RSAPublicKey)

    /// COSE key common parameters (RFC 9052 §7.1) and key type parameters (RFC 9053 §7.1.1, RFC 8230 §4).
    private enum Label {
        static let kty = CBORKey.int(1)
        static let alg = CBORKey.int(3)
        static let crv = CBORKey.int(-1)  // EC2; RSA's n has the same label
        static let x = CBORKey.int(-2)  // EC2; RSA's e has the same label
        static let y = CBORKey.int(-3)
        static let ecPrivate = CBORKey.int(-4)  // EC2's d
    }

    /// Reads a COSE_Key that spans all of `bytes`.
    public init(cbor bytes: [UInt8]) throws(COSEKeyError) {
        let value: CBORValue
        do throws(CBORError) {
            value = try CBORReader(maxDepth: 4, maxBytes: 2048).read(bytes)
        } catch {
            throw .cbor(error)
        }
        try self.init(value)
    }

    /// Reads a COSE_Key already decoded.
    public init(_ value: CBORValue) throws(COSEKeyError) {
        guard let map = value.map else { throw .notAMap }
        guard let ktyValue = map[Label.kty] else { throw .missingParameter("kty (1)") }
        guard let algValue = map[Label.alg] else { throw .missingParameter("alg (3)") }
        let kty = ktyValue.int64
        let alg = algValue.int64
        switch kty {
        case 2:
            guard alg == COSEAlgorithm.es256.rawValue else { throw .unsupportedAlgorithm(alg) }
            guard let crvValue = map[Label.crv] else { throw .missingParameter("crv (-1)") }
            guard crvValue.int64 == 1 else { throw .unsupportedCurve(crvValue.int64) }
            guard map[Label.ecPrivate] == nil else { throw .privateKeyMaterial }
            let x = try Self.coordinate(map, Label.x, "x (-2)")
            let y = try Self.coordinate(map, Label.y, "y (-3)")
            do {
                self = .es256(try P256.PublicKey(jwkX: Base64URL.encode(x), y: Base64URL.encode(y)))
            } catch {
                throw .invalidKey("the point (x, y) is not on the P-256 curve")
            }
        case 3:
            guard alg == COSEAlgorithm.rs256.rawValue else { throw .unsupportedAlgorithm(alg) }
            // RSA's private parts: d, p, q, dP, dQ, qInv, other primes and their parameters (RFC 8230 §4).
            for label: Int64 in -12 ... -3 where map[.int(label)] != nil { throw .privateKeyMaterial }
            guard let nValue = map[Label.crv] else { throw .missingParameter("n (-1)") }
            guard let eValue = map[Label.x] else { throw .missingParameter("e (-2)") }
            guard let n = nValue.bytes, !n.isEmpty else { throw .invalidParameter("n (-1)", "is not a non-empty byte string") }
            guard let e = eValue.bytes, !e.isEmpty else { throw .invalidParameter("e (-2)", "is not a non-empty byte string") }
            do {
                self = .rs256(try RSAPublicKey(jwkN: Base64URL.encode(n), e: Base64URL.encode(e)))
            } catch {
                throw .invalidKey("\(error)")
            }
        default:
            throw .unsupportedKeyType(kty)
        }
    }

    private static func coordinate(_ map: [CBORKey: CBORValue], _ label: CBORKey, _ name: String) throws(COSEKeyError) -> [UInt8] {
        guard let value = map[label] else { throw .missingParameter(name) }
        guard let bytes = value.bytes else { throw .invalidParameter(name, "is not a byte string") }
        guard bytes.count == 32 else { throw .invalidParameter(name, "is \(bytes.count) bytes; P-256 needs 32") }
        return bytes
    }

    /// The key's algorithm.
    public var algorithm: COSEAlgorithm {
        switch self {
        case .es256: return .es256
        case .rs256: return .rs256
        }
    }

    /// Whether `signature` is this key's signature of `data`, as WebAuthn encodes it: ES256 in ASN.1 DER, RS256 as
    /// the PKCS#1 v1.5 signature bytes.
    public func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        switch self {
        case .es256(let key): return key.isValidSignature(derEncoded: signature, for: data)
        case .rs256(let key): return key.isValidSignature(signature, for: data)
        }
    }
}
