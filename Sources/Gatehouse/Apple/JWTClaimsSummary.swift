import JOSE

/// The parts of a decoded JWT that a diagnosis talks about; never the signature or the whole token.
public struct JWTClaimsSummary: Sendable, Codable, Equatable {
    public let algorithm: String
    public let keyID: String?
    public let issuer: String?
    public let subject: String?
    /// `aud` as a list (a single string becomes one element).
    public let audience: [String]?
    public let issuedAt: Int64?
    public let expiresAt: Int64?
    /// The signature's length in bytes (64 for a correct ES256 signature).
    public let signatureLength: Int

    init(_ compact: JWT.Compact) {
        algorithm = compact.algorithm
        keyID = compact.keyID
        issuer = compact.payload["iss"]?.stringValue
        subject = compact.payload["sub"]?.stringValue
        switch compact.payload["aud"] {
        case .string(let value): audience = [value]
        case .array(let values): audience = values.compactMap(\.stringValue)
        default: audience = nil
        }
        issuedAt = Self.numericDate(compact.payload["iat"])
        expiresAt = Self.numericDate(compact.payload["exp"])
        signatureLength = compact.signature.count
    }

    /// A claim as whole seconds since 1970, when it is an integer within years 0000–9999 (nil for strings,
    /// fractions, ±1e16 and the like: a claim that no date can hold is reported, never computed with).
    static func numericDate(_ claim: JSONValue?) -> Int64? {
        guard let seconds = claim?.int64Value, Timestamp(seconds: seconds).isRepresentable else { return nil }
        return seconds
    }
}

/// Decoding a token handed to a diagnosis: size limits and words for every way it can be malformed.
enum TokenInput {
    /// Longer than any real client secret or ID token (they are under 2 KiB).
    static let maxLength = 16 * 1024

    /// The decoded token, or the finding that says why it cannot be decoded. The token is never echoed.
    enum Decoded {
        case success(JWT.Compact)
        case failure(AppleFinding)
    }

    static func decode(_ text: String, what: String, reported: String) -> Decoded {
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if token.isEmpty { return .failure(AppleFinding(.error, "empty", "no token was given", reported: reported, fix: "pass the \(what) as an argument, or - to read it from stdin")) }
        if token.utf8.count > maxLength {
            return .failure(AppleFinding(.error, "too_large", "the input is \(token.utf8.count) bytes; a \(what) is well under \(maxLength / 1024) KiB, so this is not one",
                                         reported: reported, fix: "pass only the \(what) (header.payload.signature)"))
        }
        if token.unicodeScalars.contains(where: { !$0.isASCII || $0.value < 0x21 }) {
            return .failure(AppleFinding(.error, "not_text", "the input holds bytes that are not base64url text (binary data, spaces or line breaks inside)",
                                         reported: reported, fix: "pass the \(what) exactly as issued (header.payload.signature)"))
        }
        do { return .success(try JWT.Compact(parsing: token)) } catch let error as JWTError {
            return .failure(AppleFinding(.error, "malformed", "not a JWT: \(error)", reported: reported, fix: "pass the \(what) exactly as issued (header.payload.signature)"))
        } catch {
            return .failure(AppleFinding(.error, "malformed", "not a JWT: \(error)", reported: reported))
        }
    }
}
