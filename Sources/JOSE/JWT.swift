/// Why a JWT could not be decoded, signed or verified. Descriptions never include the token or its signature.
public enum JWTError: Error, Equatable, Sendable, CustomStringConvertible {
    /// One of the three parts of a compact JWS.
    public enum Part: String, Sendable {
        /// The first part, the JOSE header.
        case header
        /// The second part, the claims.
        case payload
        /// The third part.
        case signature
    }

    /// The token does not have exactly three dot-separated parts; the value is how many it has.
    case wrongPartCount(Int)
    /// A part is not strict unpadded base64url.
    case invalidBase64URL(Part)
    /// The header or payload is not a JSON object.
    case notJSONObject(Part)
    /// The header has no string `alg`.
    case missingAlgorithm
    /// `alg` is "none": an unsecured token, never accepted.
    case unsecured
    /// `alg` names an algorithm Gatehouse never accepts (HS256 and friends: a public key is not an HMAC secret).
    case algorithmNotAllowed(String)
    /// `alg` does not match the key offered (an RS256 token checked with a P-256 key, say).
    case algorithmMismatch(token: String, key: String)
    /// The header lists `crit` extensions, none of which Gatehouse understands.
    case unsupportedCriticalHeader
    /// The header passed to `sign` sets an `alg` other than the key's.
    case headerAlgorithmConflict(String)
    /// The signature does not verify.
    case invalidSignature

    public var description: String {
        switch self {
        case .wrongPartCount(let count):
            return "the token has \(count) part(s); a compact JWS has exactly 3 (header.payload.signature)"
        case .invalidBase64URL(let part):
            return "the token's \(part.rawValue) is not valid unpadded base64url"
        case .notJSONObject(let part):
            return "the token's \(part.rawValue) is not a JSON object"
        case .missingAlgorithm:
            return "the token's header has no \"alg\""
        case .unsecured:
            return "the token is unsecured (alg \"none\") and is never accepted"
        case .algorithmNotAllowed(let alg):
            return "the token's algorithm \"\(alg)\" is not accepted (only ES256 and RS256)"
        case .algorithmMismatch(let token, let key):
            return "the token says alg \"\(token)\" but the key is for \(key)"
        case .unsupportedCriticalHeader:
            return "the token's header has \"crit\" extensions that are not supported"
        case .headerAlgorithmConflict(let alg):
            return "the header sets alg \"\(alg)\" but the key signs ES256"
        case .invalidSignature:
            return "the token's signature does not verify"
        }
    }
}

/// JSON Web Tokens in compact serialization (RFC 7519, RFC 7515 §7.1), signed ES256 and verified ES256 or RS256.
///
///     let secret = try JWT.sign(
///         header: ["kid": "ABC123DEFG"],
///         claims: ["iss": "TEAM123456", "iat": .integer(now), "exp": .integer(now + 3600),
///                  "aud": "https://appleid.apple.com", "sub": "com.example.web"],
///         key: privateKey)
///     let token = try JWT.verify(secret, key: privateKey.publicKey)
///     token.payload["sub"]?.stringValue
///
/// Verification checks the signature and that the algorithm fits the key; it does not judge claims (`exp`, `aud`),
/// which are the caller's policy.
public enum JWT {
    /// A decoded, not yet verified, compact JWS.
    public struct Compact: Sendable {
        /// The JOSE header members.
        public let header: [String: JSONValue]
        /// The claims.
        public let payload: [String: JSONValue]
        /// The header's JSON bytes as sent.
        public let headerJSON: [UInt8]
        /// The payload's JSON bytes as sent.
        public let payloadJSON: [UInt8]
        /// The bytes that were signed: the ASCII `base64url(header) "." base64url(payload)`.
        public let signingInput: [UInt8]
        /// The signature bytes (empty for an unsecured token).
        public let signature: [UInt8]

        /// The header's `alg`.
        public var algorithm: String { header["alg"]?.stringValue ?? "" }

        /// The header's `kid`, if any.
        public var keyID: String? { header["kid"]?.stringValue }

        /// Decodes `token` strictly: exactly three parts, each strict base64url; header and payload JSON objects;
        /// a string `alg` in the header. `alg` "none" decodes but never verifies.
        public init(parsing token: String) throws {
            let bytes = Array(token.utf8)
            let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
            guard dots.count == 2 else { throw JWTError.wrongPartCount(dots.count + 1) }
            let headerPart = bytes[..<dots[0]]
            let payloadPart = bytes[(dots[0] + 1)..<dots[1]]
            let signaturePart = bytes[(dots[1] + 1)...]

            guard !headerPart.isEmpty, let headerJSON = Base64URL.decode(bytes: headerPart) else {
                throw JWTError.invalidBase64URL(.header)
            }
            guard let payloadJSON = Base64URL.decode(bytes: payloadPart) else {
                throw JWTError.invalidBase64URL(.payload)
            }
            guard let signature = Base64URL.decode(bytes: signaturePart) else {
                throw JWTError.invalidBase64URL(.signature)
            }
            guard let header = try? JSONValue.parseObject(headerJSON) else { throw JWTError.notJSONObject(.header) }
            guard let payload = try? JSONValue.parseObject(payloadJSON) else {
                throw JWTError.notJSONObject(.payload)
            }
            guard header["alg"]?.stringValue != nil else { throw JWTError.missingAlgorithm }

            self.header = header
            self.payload = payload
            self.headerJSON = headerJSON
            self.payloadJSON = payloadJSON
            self.signingInput = Array(bytes[..<dots[1]])
            self.signature = signature
        }

        /// Throws unless the signature verifies under `key` with an algorithm that fits it.
        public func verify(with key: P256.PublicKey) throws {
            try checkAlgorithm(expected: "ES256", keyKind: "ES256 (EC P-256)")
            guard key.isValidSignature(signature, for: signingInput) else { throw JWTError.invalidSignature }
        }

        /// Throws unless the signature verifies under `key` with an algorithm that fits it.
        public func verify(with key: RSAPublicKey) throws {
            try checkAlgorithm(expected: "RS256", keyKind: "RS256 (RSA)")
            guard key.isValidSignature(signature, for: signingInput) else { throw JWTError.invalidSignature }
        }

        /// Throws unless the signature verifies under `key`, whose own `alg` (when it has one) must match too, and
        /// whose `use` (when it has one) must be "sig".
        public func verify(with key: JWK) throws {
            if let use = key.use, use != "sig" {
                throw JWKError.keyUnusable(kid: key.keyID ?? "(no kid)", reason: "its \"use\" is \"\(use)\", not \"sig\"")
            }
            if let keyAlgorithm = key.algorithm, keyAlgorithm != algorithm {
                try checkAlgorithm(expected: keyAlgorithm, keyKind: keyAlgorithm)
            }
            switch key.material {
            case .p256(let publicKey): try verify(with: publicKey)
            case .rsa(let publicKey): try verify(with: publicKey)
            }
        }

        /// Whether the signature verifies under `key` (see `verify(with:)` for the reason when it does not).
        public func isValid(with key: P256.PublicKey) -> Bool { (try? verify(with: key)) != nil }

        /// Whether the signature verifies under `key`.
        public func isValid(with key: RSAPublicKey) -> Bool { (try? verify(with: key)) != nil }

        private func checkAlgorithm(expected: String, keyKind: String) throws {
            if header["crit"] != nil { throw JWTError.unsupportedCriticalHeader }
            switch algorithm {
            case expected: return
            case "none", "None", "NONE": throw JWTError.unsecured
            case "ES256", "RS256": throw JWTError.algorithmMismatch(token: algorithm, key: keyKind)
            default: throw JWTError.algorithmNotAllowed(algorithm)
            }
        }
    }

    /// Decodes a compact JWS without verifying it; the same as `Compact(parsing:)`.
    public static func decode(_ token: String) throws -> Compact {
        try Compact(parsing: token)
    }

    /// Signs `claims` with ES256 and returns the compact token. `alg` is set to "ES256" in the header; add `kid`
    /// (Apple: the Key ID) and anything else there. Integral numbers are written as integers.
    public static func sign(
        header: [String: JSONValue],
        claims: [String: JSONValue],
        key: P256.PrivateKey
    ) throws -> String {
        if let alg = header["alg"], alg != "ES256" {
            throw JWTError.headerAlgorithmConflict(alg.stringValue ?? "(not a string)")
        }
        // The hot path of minting: one buffer, no JSONSerialization, no intermediate strings, and `alg` written
        // first rather than inserted into a copy of the header.
        var json: [UInt8] = []
        json.reserveCapacity(256)
        var token: [UInt8] = []
        token.reserveCapacity(512)
        json.append(contentsOf: #"{"alg":"ES256""#.utf8)
        try JSONValue.writeMembers(header, first: false, skipping: "alg", into: &json)
        json.append(UInt8(ascii: "}"))
        Base64Codec.encode(json, alphabet: Base64Codec.urlAlphabet, pad: false, into: &token)
        token.append(UInt8(ascii: "."))
        json.removeAll(keepingCapacity: true)
        try JSONValue.writeObject(claims, into: &json)
        Base64Codec.encode(json, alphabet: Base64Codec.urlAlphabet, pad: false, into: &token)
        let signature = try key.signature(for: token)
        token.append(UInt8(ascii: "."))
        Base64Codec.encode(signature, alphabet: Base64Codec.urlAlphabet, pad: false, into: &token)
        return String(decoding: token, as: UTF8.self)
    }

    /// Decodes `token` and verifies it as ES256 under `key`; returns the decoded token.
    @discardableResult
    public static func verify(_ token: String, key: P256.PublicKey) throws -> Compact {
        let compact = try Compact(parsing: token)
        try compact.verify(with: key)
        return compact
    }

    /// Decodes `token` and verifies it as RS256 under `key`; returns the decoded token.
    @discardableResult
    public static func verify(_ token: String, key: RSAPublicKey) throws -> Compact {
        let compact = try Compact(parsing: token)
        try compact.verify(with: key)
        return compact
    }

    /// Decodes `token`, picks the key named by its `kid` from `keySet` (the only key when the token names none and
    /// there is just one), and verifies with it; returns the decoded token.
    @discardableResult
    public static func verify(_ token: String, keySet: JWKS) throws -> Compact {
        let compact = try Compact(parsing: token)
        let key: JWK
        if let kid = compact.keyID {
            key = try keySet.key(withID: kid)
        } else if keySet.keys.count == 1 {
            key = keySet.keys[0]
        } else {
            throw JWKError.ambiguousKey(count: keySet.keys.count)
        }
        try compact.verify(with: key)
        return compact
    }
}
