/// Why a JWK or a JWKS document could not be used. Descriptions name the member and the key id involved.
public enum JWKError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The document is not JSON, or not a JSON object.
    case notJSONObject
    /// The JWKS document has no `keys` array.
    case missingKeys
    /// A required member is absent or not a string.
    case missingMember(String)
    /// A member is present but unusable; the second value says why.
    case invalidMember(String, String)
    /// The `kty` is not one Gatehouse verifies with (`RSA`, `EC`).
    case unsupportedKeyType(String)
    /// An EC key on a curve other than P-256.
    case unsupportedCurve(String)
    /// An RSA modulus below the minimum.
    case keyTooSmall(bits: Int, minimum: Int)
    /// No usable key has this `kid`; `available` lists the ids that are there.
    case keyNotFound(kid: String, available: [String])
    /// A key has this `kid` but was skipped; `reason` says why.
    case keyUnusable(kid: String, reason: String)
    /// The token names no `kid` and the set has more than one key to choose from.
    case ambiguousKey(count: Int)

    public var description: String {
        switch self {
        case .notJSONObject:
            return "the JWK document is not a JSON object"
        case .missingKeys:
            return "the JWKS document has no \"keys\" array (expected {\"keys\": [ … ]})"
        case .missingMember(let name):
            return "the JWK has no string member \"\(name)\""
        case .invalidMember(let name, let reason):
            return "the JWK member \"\(name)\" is invalid: \(reason)"
        case .unsupportedKeyType(let kty):
            return "the JWK key type \"\(kty)\" is not supported (only RSA and EC P-256)"
        case .unsupportedCurve(let crv):
            return "the JWK curve \"\(crv)\" is not supported (only P-256)"
        case .keyTooSmall(let bits, let minimum):
            return "the RSA key is \(bits) bits; at least \(minimum) are required"
        case .keyNotFound(let kid, let available):
            let list = available.isEmpty ? "none" : available.map { "\"\($0)\"" }.joined(separator: ", ")
            return "no key with kid \"\(kid)\" in the JWKS (kids present: \(list)); the key may have been rotated: "
                + "fetch the key set again"
        case .keyUnusable(let kid, let reason):
            return "the key with kid \"\(kid)\" in the JWKS cannot be used: \(reason)"
        case .ambiguousKey(let count):
            return "the token has no kid and the JWKS holds \(count) keys; cannot choose one"
        }
    }
}

/// One public JSON Web Key (RFC 7517) that Gatehouse can verify with.
public struct JWK: Sendable, Hashable {
    /// The key itself.
    public enum Material: Sendable, Hashable {
        /// `kty` "RSA": for RS256.
        case rsa(RSAPublicKey)
        /// `kty` "EC", `crv` "P-256": for ES256.
        case p256(P256.PublicKey)
    }

    /// The `kid` member, if any.
    public var keyID: String?
    /// The `alg` member, if any ("RS256", "ES256").
    public var algorithm: String?
    /// The `use` member, if any ("sig").
    public var use: String?
    /// The key.
    public var material: Material

    /// Reads a JWK object. Throws `JWKError.unsupportedKeyType` for a `kty` other than RSA and EC.
    public init(_ members: [String: JSONValue]) throws {
        guard let kty = members["kty"]?.stringValue else { throw JWKError.missingMember("kty") }
        func required(_ name: String) throws -> String {
            guard let value = members[name]?.stringValue else { throw JWKError.missingMember(name) }
            return value
        }
        switch kty {
        case "RSA":
            material = .rsa(try RSAPublicKey(jwkN: required("n"), e: required("e")))
        case "EC":
            let crv = try required("crv")
            guard crv == "P-256" else { throw JWKError.unsupportedCurve(crv) }
            material = .p256(try P256.PublicKey(jwkX: required("x"), y: required("y")))
        default:
            throw JWKError.unsupportedKeyType(kty)
        }
        keyID = members["kid"]?.stringValue
        algorithm = members["alg"]?.stringValue
        use = members["use"]?.stringValue
    }

    /// A JWK for a P-256 public key.
    public init(_ key: P256.PublicKey, keyID: String? = nil) {
        self.material = .p256(key)
        self.keyID = keyID
        self.algorithm = "ES256"
        self.use = "sig"
    }
}

/// A JSON Web Key Set (`{"keys": [ … ]}`), such as `https://appleid.apple.com/auth/keys`.
///
///     let set = try JWKS(json: Array(body.utf8))
///     let key = try set.key(withID: compact.keyID ?? "")
///
/// Keys of unknown `kty` (or unsupported curves, or RSA keys that are too small) are skipped, and remembered so that
/// a lookup of their `kid` says why they cannot be used.
public struct JWKS: Sendable {
    /// The usable keys, in document order.
    public let keys: [JWK]

    /// The keys that were skipped: their `kid` (or "(no kid)") and why.
    public let skipped: [(keyID: String, reason: String)]

    /// Parses a JWKS document.
    public init(json: [UInt8]) throws {
        guard let document = try? JSONValue.parseObject(json) else { throw JWKError.notJSONObject }
        guard let entries = document["keys"]?.arrayValue else { throw JWKError.missingKeys }
        var keys: [JWK] = []
        var skipped: [(keyID: String, reason: String)] = []
        for entry in entries {
            guard let members = entry.objectValue else { throw JWKError.notJSONObject }
            let kid = members["kid"]?.stringValue
            do {
                keys.append(try JWK(members))
            } catch let error as JWKError {
                switch error {
                case .unsupportedKeyType, .unsupportedCurve, .keyTooSmall:
                    skipped.append((kid ?? "(no kid)", error.description))
                default:
                    throw kid.map { JWKError.keyUnusable(kid: $0, reason: error.description) } ?? error
                }
            }
        }
        self.keys = keys
        self.skipped = skipped
    }

    /// Parses a JWKS document from text.
    public init(json: String) throws {
        try self.init(json: Array(json.utf8))
    }

    /// A set of the given keys.
    public init(keys: [JWK]) {
        self.keys = keys
        self.skipped = []
    }

    /// The key with this `kid`; throws `JWKError.keyNotFound` (listing the kids present) or `.keyUnusable`.
    public func key(withID kid: String) throws -> JWK {
        if let key = keys.first(where: { $0.keyID == kid }) { return key }
        if let skip = skipped.first(where: { $0.keyID == kid }) {
            throw JWKError.keyUnusable(kid: kid, reason: skip.reason)
        }
        throw JWKError.keyNotFound(kid: kid, available: keys.compactMap(\.keyID))
    }

    /// The `keys` array as JSON (public members only).
    public func jsonObject() -> [String: JSONValue] {
        ["keys": .array(keys.map { .object($0.jsonObject()) })]
    }
}

extension JWK {
    /// The JWK as JSON members.
    public func jsonObject() -> [String: JSONValue] {
        var members: [String: JSONValue]
        switch material {
        case .p256(let key):
            members = key.jwk
        case .rsa(let key):
            members = key.jwk
        }
        if let keyID { members["kid"] = .string(keyID) }
        if let algorithm { members["alg"] = .string(algorithm) }
        if let use { members["use"] = .string(use) }
        return members
    }
}
