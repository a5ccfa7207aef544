/// Why a key file could not be used as an Apple Sign in key (an unencrypted PKCS#8 EC P-256 private key, the `.p8`
/// Apple lets you download once) or as a P-256 public key.
///
/// Every description says what was found and what to do; none ever contains key material. Descriptions speak of
/// "the key file"; use `description(naming:)` to name the actual input:
///
///     catch let error as KeyImportError { print(error.description(naming: "AuthKey_ABC123DEFG.p8")) }
public enum KeyImportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is empty or holds only whitespace.
    case emptyFile
    /// The file has no `-----BEGIN …-----` line at all.
    case notPEM
    /// The PEM block has no END line, or its content is shorter than it declares.
    case truncated
    /// The PEM body is not valid base64.
    case corruptBase64
    /// The body decodes but is not the kind of structure its label announces.
    case malformedKey
    /// An RSA private key (PKCS#8 or PKCS#1).
    case rsaKey
    /// An EC key on a curve other than P-256; the associated value names the curve ("P-384").
    case wrongCurve(String)
    /// An Ed25519 key.
    case ed25519Key
    /// A private key of another algorithm; the associated value is OpenSSL's name for it.
    case unsupportedAlgorithm(String)
    /// An encrypted PKCS#8 key (`ENCRYPTED PRIVATE KEY`) or a legacy encrypted PEM key.
    case encryptedKey
    /// An X.509 certificate rather than a key.
    case certificate
    /// A public key where a private key is needed.
    case publicKey
    /// A private key where a public key is needed.
    case privateKeyWhereExpectedPublic
    /// A SEC1 `EC PRIVATE KEY`: the right kind of key in the wrong container.
    case sec1ECKey
    /// Some other PEM block; the associated value is its label ("CERTIFICATE REQUEST").
    case unexpectedPEMLabel(String)
    /// A P-256 key whose secret scalar is 0 or not below the curve order, or does not give its public key.
    case invalidPrivateScalar

    private static let expected = "Apple Sign in keys are unencrypted PKCS#8 EC P-256 private keys "
        + "(a .p8 file that starts with -----BEGIN PRIVATE KEY-----)"

    public var description: String { description(naming: "the key file") }

    /// The message with `input` (a file name, say) as its subject.
    public func description(naming input: String) -> String {
        switch self {
        case .emptyFile:
            return "\(input) is empty; \(Self.expected). Download the key again or check the path."
        case .notPEM:
            return "\(input) is not PEM: it has no -----BEGIN …----- line; \(Self.expected)."
        case .truncated:
            return "\(input) is truncated: its PEM block is cut short (missing END line or missing data); "
                + "copy the whole file again, including the -----END PRIVATE KEY----- line."
        case .corruptBase64:
            return "\(input) is corrupt: the text between the BEGIN and END lines is not valid base64; "
                + "copy the file again without editing it."
        case .invalidPrivateScalar:
            return "\(input) is not a usable P-256 key: its secret scalar is 0, is not below the curve order, or does "
                + "not produce the public key stored with it; the file was altered or not made by Apple. Download the key again."
        case .malformedKey:
            return "\(input) is corrupt: its PEM block decodes but is not a well-formed key; \(Self.expected)."
        case .rsaKey:
            return "\(input) is an RSA key; \(Self.expected). Create a Sign in with Apple key in the Apple Developer "
                + "portal (Certificates, Identifiers & Profiles → Keys)."
        case .wrongCurve(let curve):
            return "\(input) is an EC key on curve \(curve), not P-256; \(Self.expected)."
        case .ed25519Key:
            return "\(input) is an Ed25519 key; \(Self.expected)."
        case .unsupportedAlgorithm(let name):
            return "\(input) is a \(name) key; \(Self.expected)."
        case .encryptedKey:
            return "\(input) is an encrypted private key; \(Self.expected). Decrypt it with "
                + "`openssl pkcs8 -topk8 -nocrypt -in encrypted.pem -out AuthKey_XXXXXXXXXX.p8`."
        case .certificate:
            return "\(input) is a certificate, not a private key; \(Self.expected)."
        case .publicKey:
            return "\(input) is a public key; a private key is needed to sign. \(Self.expected)."
        case .privateKeyWhereExpectedPublic:
            return "\(input) is a private key where a public key (-----BEGIN PUBLIC KEY-----) is expected; "
                + "export the public half with `openssl pkey -in key.p8 -pubout`."
        case .sec1ECKey:
            return "\(input) is a SEC1 EC PRIVATE KEY; Gatehouse reads PKCS#8 (-----BEGIN PRIVATE KEY-----), the "
                + "format of Apple's .p8. Convert it with "
                + "`openssl pkcs8 -topk8 -nocrypt -in key.pem -out AuthKey_XXXXXXXXXX.p8`."
        case .unexpectedPEMLabel(let label):
            return "\(input) holds a PEM block labelled \"\(label)\", not a key; \(Self.expected)."
        }
    }

    /// The reader-friendly name of an OpenSSL EC group name.
    static func curveName(forGroup group: String) -> String {
        switch group {
        case "secp384r1": return "P-384"
        case "secp521r1": return "P-521"
        case "secp224r1": return "P-224"
        case "prime256v1": return "P-256"
        default: return group.isEmpty ? "(unnamed)" : group
        }
    }
}
