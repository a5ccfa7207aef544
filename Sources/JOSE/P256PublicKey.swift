import CCrypto

extension P256 {
    /// A P-256 public key: verifies ES256 signatures, identifies a key by fingerprint, and travels as SPKI or JWK.
    ///
    ///     let key = try P256.PublicKey(jwkX: "f83OJ3D2…", y: "x_FEzRu9…")
    ///     key.isValidSignature(signature, for: Array(signingInput.utf8))
    public struct PublicKey: Sendable, Hashable {
        let key: OpenSSLKey

        /// The DER `SubjectPublicKeyInfo`, the one canonical form (what `fingerprint` hashes).
        public let derRepresentation: [UInt8]

        /// Wraps an OpenSSL key, throwing a `KeyImportError` unless it is EC P-256.
        init(key: OpenSSLKey) throws {
            try P256.requireP256(key)
            // A compressed point would be re-exported compressed; keep one canonical (uncompressed) form.
            _ = EVP_PKEY_set_utf8_string_param(key.pointer, "point-format", "uncompressed")
            guard let der = key.subjectPublicKeyInfoDER(), der.count == 91 else { throw KeyImportError.malformedKey }
            self.key = key
            self.derRepresentation = der
        }

        /// Reads a DER `SubjectPublicKeyInfo`; throws a `KeyImportError` for anything but an EC P-256 public key.
        public init(derRepresentation der: [UInt8]) throws {
            guard let key = OpenSSL.publicKey(fromSPKI: der) else {
                throw DERLength.isTruncated(der) ? KeyImportError.truncated : KeyImportError.malformedKey
            }
            try self.init(key: key)
        }

        /// Reads a `-----BEGIN PUBLIC KEY-----` PEM (CRLF, a byte order mark and surrounding whitespace tolerated).
        public init(pemRepresentation: String) throws {
            let document = try PEMDocument.keyFile(pemRepresentation)
            let block = document.blocks[0]
            switch block.label {
            case "PUBLIC KEY":
                break
            case "PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY":
                throw KeyImportError.privateKeyWhereExpectedPublic
            case "CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE":
                throw KeyImportError.certificate
            case "RSA PUBLIC KEY":
                throw KeyImportError.rsaKey
            default:
                throw KeyImportError.unexpectedPEMLabel(block.label)
            }
            guard block.isComplete else { throw KeyImportError.truncated }
            guard let der = Base64.decode(block.base64) else { throw KeyImportError.corruptBase64 }
            try self.init(derRepresentation: der)
        }

        /// Builds the key from a JWK's base64url `x` and `y` coordinates (32 bytes each); throws a `JWKError` when
        /// they are not canonical base64url of the right length or the point is not on the curve.
        public init(jwkX x: String, y: String) throws {
            guard let xBytes = Base64URL.decode(x) else { throw JWKError.invalidMember("x", "it is not base64url") }
            guard let yBytes = Base64URL.decode(y) else { throw JWKError.invalidMember("y", "it is not base64url") }
            guard xBytes.count == 32 else {
                throw JWKError.invalidMember("x", "it is \(xBytes.count) bytes; P-256 needs 32")
            }
            guard yBytes.count == 32 else {
                throw JWKError.invalidMember("y", "it is \(yBytes.count) bytes; P-256 needs 32")
            }
            let point: [UInt8] = [0x04] + xBytes + yBytes
            let key = point.withUnsafeBytes { bytes in
                OpenSSL.keyFromData(algorithm: "EC", selection: gatehouse_evp_pkey_public_key_selection()) { builder in
                    OSSL_PARAM_BLD_push_utf8_string(builder, OpenSSL.cString("group"), OpenSSL.cString("P-256"), 0) == 1
                        && OSSL_PARAM_BLD_push_octet_string(
                            builder, OpenSSL.cString("pub"), bytes.baseAddress, bytes.count) == 1
                }
            }
            guard let key else { throw JWKError.invalidMember("x", "the point (x, y) is not on the P-256 curve") }
            try self.init(key: key)
        }

        /// The key as `-----BEGIN PUBLIC KEY-----` PEM.
        public var pemRepresentation: String {
            PEMDocument.encode(derRepresentation, label: "PUBLIC KEY")
        }

        /// The lowercase hex SHA-256 of `derRepresentation`: a stable name for the key in logs and the console.
        public var fingerprint: String {
            SHA256.hex(derRepresentation)
        }

        /// The uncompressed point 0x04‖x‖y (65 bytes).
        public var x963Representation: [UInt8] {
            // A P-256 SubjectPublicKeyInfo always ends with the 65-byte uncompressed point.
            Array(derRepresentation.suffix(65))
        }

        /// The public JWK members: `kty` "EC", `crv` "P-256", `x`, `y`. Add `kid`, `use`, `alg` as needed.
        public var jwk: [String: JSONValue] {
            let point = x963Representation
            return [
                "kty": "EC",
                "crv": "P-256",
                "x": .string(Base64URL.encode(Array(point[1..<33]))),
                "y": .string(Base64URL.encode(Array(point[33..<65]))),
            ]
        }

        /// Whether `signature` is a valid ES256 signature of `data`: exactly 64 bytes r‖s with r and s in [1, n - 1].
        /// A DER-encoded signature, a truncated one or one over other data is simply invalid.
        public func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
            guard let der = ECDSASignature.der(fromRaw: signature) else { return false }
            let digest = SHA256.hash(data)
            defer { OpenSSL.clearErrors() }
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return false }
            defer { EVP_PKEY_CTX_free(context) }
            guard EVP_PKEY_verify_init(context) == 1 else { return false }
            return EVP_PKEY_verify(context, der, der.count, digest, digest.count) == 1
        }

        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
            lhs.derRepresentation == rhs.derRepresentation
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(derRepresentation)
        }
    }
}
