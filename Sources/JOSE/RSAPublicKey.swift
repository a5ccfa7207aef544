import CCrypto

/// An RSA public key for verifying RS256 (RSASSA-PKCS1-v1_5 with SHA-256): Apple's and Google's identity tokens.
///
///     let key = try RSAPublicKey(jwkN: jwk["n"]!, e: jwk["e"]!)
///     key.isValidSignature(signature, for: Array(signingInput.utf8))
///
/// Keys under 2048 bits are refused at construction.
public struct RSAPublicKey: Sendable, Hashable {
    /// The smallest modulus accepted.
    public static let minimumBits = 2048

    let key: OpenSSLKey

    /// The DER `SubjectPublicKeyInfo`.
    public let derRepresentation: [UInt8]

    /// The modulus size in bits.
    public var bits: Int { Int(key.bits) }

    /// Builds the key from a JWK's base64url modulus `n` and exponent `e`; throws a `JWKError` when either is not
    /// canonical base64url, the exponent is not a small odd number, or the modulus is under 2048 bits.
    public init(jwkN n: String, e: String) throws {
        guard let modulus = Base64URL.decode(n), !modulus.isEmpty else {
            throw JWKError.invalidMember("n", "it is not base64url")
        }
        guard let exponent = Base64URL.decode(e), !exponent.isEmpty else {
            throw JWKError.invalidMember("e", "it is not base64url")
        }
        let significant = modulus.drop(while: { $0 == 0 })
        let modulusBits = significant.isEmpty ? 0 : significant.count * 8 - significant.first!.leadingZeroBitCount
        guard modulusBits >= Self.minimumBits else {
            throw JWKError.keyTooSmall(bits: modulusBits, minimum: Self.minimumBits)
        }
        // Real exponents are 65537 (or 3); a huge or even one is a broken key.
        guard exponent.count <= 8, let last = exponent.last, last & 1 == 1 else {
            throw JWKError.invalidMember("e", "it is not a valid RSA public exponent")
        }
        let key = Self.makeKey(modulus: modulus, exponent: exponent)
        guard let key else { throw JWKError.invalidMember("n", "OpenSSL does not accept it as an RSA modulus") }
        try self.init(key: key)
    }

    /// Reads a DER `SubjectPublicKeyInfo` holding an RSA key of at least 2048 bits.
    public init(derRepresentation der: [UInt8]) throws {
        guard let key = OpenSSL.publicKey(fromSPKI: der) else { throw KeyImportError.malformedKey }
        try self.init(key: key)
    }

    init(key: OpenSSLKey) throws {
        guard key.baseID == EVP_PKEY_RSA else {
            let name = EVP_PKEY_get0_type_name(key.pointer).map { String(cString: $0) } ?? "unknown"
            throw KeyImportError.unsupportedAlgorithm(name)
        }
        guard Int(key.bits) >= Self.minimumBits else {
            throw JWKError.keyTooSmall(bits: Int(key.bits), minimum: Self.minimumBits)
        }
        guard let der = key.subjectPublicKeyInfoDER() else { throw KeyImportError.malformedKey }
        self.key = key
        self.derRepresentation = der
    }

    /// The lowercase hex SHA-256 of `derRepresentation`.
    public var fingerprint: String { SHA256.hex(derRepresentation) }

    /// The key as `-----BEGIN PUBLIC KEY-----` PEM.
    public var pemRepresentation: String { PEMDocument.encode(derRepresentation, label: "PUBLIC KEY") }

    /// The public JWK members: `kty` "RSA", `n`, `e`.
    public var jwk: [String: JSONValue] {
        ["kty": "RSA", "n": .string(Base64URL.encode(number("n"))), "e": .string(Base64URL.encode(number("e")))]
    }

    /// A big-endian key parameter ("n" or "e"), without leading zeros.
    private func number(_ name: String) -> [UInt8] {
        var value: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key.pointer, name, &value) == 1, let value else {
            OpenSSL.clearErrors()
            return []
        }
        defer { BN_free(value) }
        var out = [UInt8](repeating: 0, count: Int((BN_num_bits(value) + 7) / 8))
        _ = out.withUnsafeMutableBufferPointer { BN_bn2bin(value, $0.baseAddress) }
        return out
    }

    /// Whether `signature` is a valid RS256 signature of `data` under this key.
    public func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        // PKCS#1 v1.5 signatures are exactly the modulus length.
        guard signature.count == (bits + 7) / 8 else { return false }
        defer { OpenSSL.clearErrors() }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit_ex(context, &keyContext, "SHA256", nil, nil, key.pointer, nil) == 1,
              EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1
        else { return false }
        return EVP_DigestVerify(context, signature, signature.count, data, data.count) == 1
    }

    private static func makeKey(modulus: [UInt8], exponent: [UInt8]) -> OpenSSLKey? {
        let n = modulus.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let e = exponent.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer {
            BN_free(n)
            BN_free(e)
        }
        guard let n, let e else { return nil }
        return OpenSSL.keyFromData(algorithm: "RSA", selection: gatehouse_evp_pkey_public_key_selection()) { builder in
            OSSL_PARAM_BLD_push_BN(builder, OpenSSL.cString("n"), n) == 1
                && OSSL_PARAM_BLD_push_BN(builder, OpenSSL.cString("e"), e) == 1
        }
    }

    public static func == (lhs: RSAPublicKey, rhs: RSAPublicKey) -> Bool {
        lhs.derRepresentation == rhs.derRepresentation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(derRepresentation)
    }
}
