import CCrypto

/// ECDSA over NIST P-256 with SHA-256 (JWS `ES256`): the algorithm of Apple's Sign in keys and client secrets.
public enum P256 {}

extension P256 {
    /// A P-256 private key, read from the unencrypted PKCS#8 PEM that Apple hands out as `AuthKey_<KeyID>.p8`.
    ///
    ///     let key = try P256.PrivateKey(pemRepresentation: String(contentsOfFile: path, encoding: .utf8))
    ///     let signature = try key.signature(for: Array(signingInput.utf8))   // 64 bytes, r‖s
    ///
    /// The key is immutable and safe to share between threads; signing reuses one prepared OpenSSL context.
    public struct PrivateKey: Sendable {
        let signer: ECDSASigner

        /// The matching public key.
        public let publicKey: PublicKey

        /// Reads an unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) holding an EC P-256 key.
        ///
        /// CRLF line ends, a UTF-8 byte order mark and surrounding whitespace are tolerated; everything else that is
        /// not such a key throws a `KeyImportError` that names what the file is instead.
        public init(pemRepresentation: String) throws {
            let document = try PEMDocument.keyFile(pemRepresentation)
            // `openssl ecparam -genkey` writes an EC PARAMETERS block before the key: look past it.
            let blocks = document.blocks.filter { $0.label != "EC PARAMETERS" }
            guard let block = blocks.first else { throw KeyImportError.unexpectedPEMLabel("EC PARAMETERS") }
            switch block.label {
            case "PRIVATE KEY":
                break
            case "ENCRYPTED PRIVATE KEY":
                throw KeyImportError.encryptedKey
            case "EC PRIVATE KEY":
                throw block.hasHeaders ? KeyImportError.encryptedKey : KeyImportError.sec1ECKey
            case "RSA PRIVATE KEY":
                throw KeyImportError.rsaKey
            case "CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE":
                throw KeyImportError.certificate
            case "PUBLIC KEY", "RSA PUBLIC KEY":
                throw KeyImportError.publicKey
            default:
                throw KeyImportError.unexpectedPEMLabel(block.label)
            }
            guard block.isComplete else { throw KeyImportError.truncated }
            guard var der = Base64.decode(block.base64) else { throw KeyImportError.corruptBase64 }
            defer { OpenSSL.cleanse(&der) }
            guard !DERLength.isTruncated(der) else { throw KeyImportError.truncated }
            let key = try Self.parsePKCS8(der)
            try P256.requireP256(key)
            try Self.requireValidScalar(key)
            try self.init(key: key)
        }

        /// Wraps a key already known to be P-256.
        init(key: OpenSSLKey) throws {
            guard let der = key.subjectPublicKeyInfoDER(), let publicKey = OpenSSL.publicKey(fromSPKI: der) else {
                throw KeyImportError.malformedKey
            }
            self.signer = ECDSASigner(key: key)
            self.publicKey = try PublicKey(key: publicKey)
        }

        /// A fresh random key, for tests and demos (production keys come from Apple).
        public static func generate() throws -> PrivateKey {
            defer { OpenSSL.clearErrors() }
            guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw P256.Failure.keyGeneration }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            guard EVP_PKEY_keygen_init(context) == 1,
                  EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
                  EVP_PKEY_generate(context, &key) == 1, let key
            else { throw P256.Failure.keyGeneration }
            return try PrivateKey(key: OpenSSLKey(taking: key))
        }

        /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the form Apple issues and the form to
        /// store or re-export. This is secret material: never log it.
        public var pemRepresentation: String {
            guard let info = EVP_PKEY2PKCS8(signer.key.pointer) else {
                OpenSSL.clearErrors()
                preconditionFailure("OpenSSL could not encode a P-256 key it created")
            }
            defer { PKCS8_PRIV_KEY_INFO_free(info) }
            let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
            precondition(length > 0, "OpenSSL could not encode a P-256 key it created")
            var der = [UInt8](repeating: 0, count: Int(length))
            defer { OpenSSL.cleanse(&der) }
            _ = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
                var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                return i2d_PKCS8_PRIV_KEY_INFO(info, &cursor)
            }
            return PEMDocument.encode(der, label: "PRIVATE KEY")
        }

        /// Signs `data` with ES256: SHA-256, ECDSA, and the signature as JWS wants it, the 64 bytes r‖s (each
        /// big-endian, left-padded to 32 bytes) — not the DER that OpenSSL produces, which Apple rejects with
        /// `invalid_client`.
        public func signature(for data: [UInt8]) throws -> [UInt8] {
            try signer.sign(digest: SHA256.hash(data))
        }

        /// Signs the UTF-8 bytes of `text`.
        public func signature(for text: String) throws -> [UInt8] {
            try signature(for: Array(text.utf8))
        }

        /// Refuses a key whose secret scalar d is outside [1, n − 1] or does not give the public key stored beside
        /// it (d·G). OpenSSL loads such a key without complaint, and the embedded public key may be perfectly
        /// valid, so without this check a doctored file would be imported and fingerprinted as the genuine key.
        private static func requireValidScalar(_ key: OpenSSLKey) throws {
            defer { OpenSSL.clearErrors() }
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { throw KeyImportError.malformedKey }
            defer { EVP_PKEY_CTX_free(context) }
            guard EVP_PKEY_private_check(context) == 1, EVP_PKEY_pairwise_check(context) == 1 else {
                throw KeyImportError.invalidPrivateScalar
            }
        }

        /// Parses PKCS#8 `PrivateKeyInfo` DER, rejecting trailing bytes.
        private static func parsePKCS8(_ der: [UInt8]) throws -> OpenSSLKey {
            defer { OpenSSL.clearErrors() }
            return try der.withUnsafeBufferPointer { buffer -> OpenSSLKey in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count) else {
                    throw KeyImportError.malformedKey
                }
                defer { PKCS8_PRIV_KEY_INFO_free(info) }
                guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else { throw KeyImportError.malformedKey }
                guard let key = EVP_PKCS82PKEY(info) else { throw KeyImportError.malformedKey }
                return OpenSSLKey(taking: key)
            }
        }
    }

    /// Failures that are OpenSSL's, not the input's.
    public enum Failure: Error, CustomStringConvertible {
        /// Key generation failed (no entropy, or a broken OpenSSL installation).
        case keyGeneration
        /// Signing failed inside OpenSSL.
        case signing

        public var description: String {
            switch self {
            case .keyGeneration: return "OpenSSL could not generate a P-256 key"
            case .signing: return "OpenSSL could not produce an ECDSA P-256 signature"
            }
        }
    }

    /// Throws the `KeyImportError` that names what `key` is when it is not an EC P-256 key.
    static func requireP256(_ key: OpenSSLKey) throws {
        switch key.baseID {
        case EVP_PKEY_EC:
            let group = key.ecGroupName ?? ""
            guard group == "prime256v1" else {
                throw KeyImportError.wrongCurve(KeyImportError.curveName(forGroup: group))
            }
        case EVP_PKEY_RSA, EVP_PKEY_RSA_PSS:
            throw KeyImportError.rsaKey
        case EVP_PKEY_ED25519:
            throw KeyImportError.ed25519Key
        default:
            let name = EVP_PKEY_get0_type_name(key.pointer).map { String(cString: $0) } ?? "unknown"
            throw KeyImportError.unsupportedAlgorithm(name)
        }
    }

    /// The P-256 group order n, big-endian: valid signature components lie in [1, n - 1].
    static let order: [UInt8] = Hex.decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")!
}

extension P256.PrivateKey: CustomStringConvertible, CustomDebugStringConvertible {
    /// Names the key by its public fingerprint; printing a key never prints the secret.
    public var description: String { "P256.PrivateKey(public key fingerprint \(publicKey.fingerprint))" }

    /// The same as `description`.
    public var debugDescription: String { description }
}
