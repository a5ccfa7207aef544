import CCrypto

/// An RSA private key for RS256 (RSASSA-PKCS1-v1_5 with SHA-256), read from an unencrypted PKCS#8 PEM — the form of
/// the `private_key` of a Google service account's JSON key. Used to sign the JWT that authenticates Gatehouse to an
/// API (Google's RISC stream management); never written anywhere.
public struct RSAPrivateKey: @unchecked Sendable {
    let key: OpenSSLKey
    /// The modulus size in bits.
    public var bits: Int { Int(key.bits) }
    /// The smallest modulus accepted.
    public static let minimumBits = 2048

    /// Reads `-----BEGIN PRIVATE KEY-----` holding an RSA key of at least `minimumBits`; anything else throws a
    /// `KeyImportError` naming what it is instead.
    public init(pemRepresentation: String) throws {
        let document = try PEMDocument.keyFile(pemRepresentation)
        guard let block = document.blocks.first else { throw KeyImportError.malformedKey }
        switch block.label {
        case "PRIVATE KEY": break
        case "ENCRYPTED PRIVATE KEY": throw KeyImportError.encryptedKey
        case "CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE": throw KeyImportError.certificate
        case "PUBLIC KEY", "RSA PUBLIC KEY": throw KeyImportError.publicKey
        default: throw KeyImportError.unexpectedPEMLabel(block.label)
        }
        guard block.isComplete else { throw KeyImportError.truncated }
        guard var der = Base64.decode(block.base64) else { throw KeyImportError.corruptBase64 }
        defer { OpenSSL.cleanse(&der) }
        guard !DERLength.isTruncated(der) else { throw KeyImportError.truncated }
        let parsed: OpenSSLKey = try der.withUnsafeBufferPointer { buffer in
            defer { OpenSSL.clearErrors() }
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count) else { throw KeyImportError.malformedKey }
            defer { PKCS8_PRIV_KEY_INFO_free(info) }
            guard cursor == buffer.baseAddress.map({ $0 + buffer.count }), let key = EVP_PKCS82PKEY(info) else { throw KeyImportError.malformedKey }
            return OpenSSLKey(taking: key)
        }
        guard parsed.baseID == EVP_PKEY_RSA else { throw KeyImportError.malformedKey }
        guard parsed.bits >= Self.minimumBits else { throw KeyImportError.malformedKey }
        key = parsed
    }

    /// The RS256 signature of `data`.
    public func signature(for data: [UInt8]) throws -> [UInt8] {
        defer { OpenSSL.clearErrors() }
        guard let context = EVP_MD_CTX_new() else { throw P256.Failure.signing }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit_ex(context, &keyContext, "SHA256", nil, nil, key.pointer, nil) == 1,
              EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1 else { throw P256.Failure.signing }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, data, data.count) == 1 else { throw P256.Failure.signing }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, data, data.count) == 1 else { throw P256.Failure.signing }
        return Array(signature.prefix(length))
    }
}

extension JWT {
    /// Signs `claims` with RS256 and returns the compact token; `alg` is set to "RS256" in the header (add `kid`).
    public static func signRS256(header: [String: JSONValue], claims: [String: JSONValue], key: RSAPrivateKey) throws -> String {
        if let alg = header["alg"], alg != "RS256" { throw JWTError.headerAlgorithmConflict(alg.stringValue ?? "(not a string)") }
        var json: [UInt8] = Array(#"{"alg":"RS256""#.utf8)
        try JSONValue.writeMembers(header, first: false, skipping: "alg", into: &json)
        json.append(UInt8(ascii: "}"))
        var token: [UInt8] = []
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
}
