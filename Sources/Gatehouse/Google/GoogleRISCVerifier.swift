import JOSE

/// Why a security event token was refused, as a code (counted per code and source) and words (never the token).
public struct GoogleRISCRefusal: Error, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable, Codable {
        case tooLarge = "too_large"
        case notAToken = "not_a_token"
        case algorithm
        case unknownKey = "unknown_key"
        case signature
        case issuer
        case noAudience = "no_audience"
        case audience
        case jti
        case events
        case eventType = "event_type"
        case subject
        case keysUnavailable = "keys_unavailable"
    }
    public let reason: Reason
    public let description: String

    public init(_ description: String, reason: Reason) {
        self.description = description
        self.reason = reason
    }

    /// The `err` of RFC 8935's error answer for this refusal.
    public var setError: String {
        switch reason {
        case .unknownKey, .signature, .algorithm: return "invalid_key"
        case .issuer: return "invalid_issuer"
        case .audience, .noAudience: return "invalid_audience"
        default: return "invalid_request"
        }
    }
}

/// Checks a security event token exactly as Google's Cross-Account Protection page says, step by step: a JWS with
/// `alg` RS256 (never `none`, HS256 or another), signed by the key its `kid` names in Google's RISC key set, `iss` the
/// issuer the discovery document names, `aud` one of the app's Google client ids (`providers set google`), a `jti`,
/// and one event of a known type with its subject. `exp` is not checked: a security event token describes an event
/// that already happened, and a delivery retried later is still true (RFC 8417 §2.2 leaves `exp` out).
public struct GoogleRISCVerifier: Sendable {
    /// The largest token accepted; Google's are under 2 KB.
    public static let maxTokenBytes = 64 * 1024
    /// The Google client ids a token's `aud` must be one of.
    public let audiences: [String]

    public init(audiences: [String]) { self.audiences = audiences }

    /// The Google client ids configured in `store`.
    public static func audiences(in store: Store) throws -> [String] {
        try ProviderConfiguration(store: store).google().acceptedAudiences
    }

    /// The `kid` of `token`'s header, when it parses.
    public static func keyID(of token: String) -> String? { (try? JWT.Compact(parsing: token))?.keyID }

    /// Steps that need no key: the size, the compact JWS, and step 1, the algorithm. A body that fails them is refused
    /// before Google's keys are asked for.
    public static func parse(_ token: String) throws(GoogleRISCRefusal) -> JWT.Compact {
        guard token.utf8.count <= Self.maxTokenBytes else {
            throw GoogleRISCRefusal("the token is over \(Self.maxTokenBytes / 1024) KB; Google's are about 1 KB", reason: .tooLarge)
        }
        let compact: JWT.Compact
        do { compact = try JWT.Compact(parsing: token) } catch {
            throw GoogleRISCRefusal("the body is not a signed token (a compact JWS): \(error)", reason: .notAToken)
        }
        // 1. The algorithm Google signs with, and no other: `none` and HMAC would let anyone make a valid token.
        guard compact.algorithm == "RS256" else {
            throw GoogleRISCRefusal("the token's alg is \"\(compact.algorithm.prefix(12))\"; Google signs security event tokens RS256", reason: .algorithm)
        }
        return compact
    }

    /// Every step, in Google's order (see the type's comment).
    public func verify(token: String, issuer: String, keys: JWKS) throws(GoogleRISCRefusal) -> GoogleSecurityEvent {
        let compact = try Self.parse(token)
        // 2. The key its kid names, in Google's key set.
        guard let kid = compact.keyID, let key = keys.keys.first(where: { $0.keyID == kid }) else {
            throw GoogleRISCRefusal("the token's kid \"\((compact.keyID ?? "").prefix(40))\" is not one of Google's RISC signing keys", reason: .unknownKey)
        }
        // 3. The signature, by that key.
        do { try compact.verify(with: key) } catch {
            throw GoogleRISCRefusal("the signature does not verify under Google's key \(kid.prefix(40))", reason: .signature)
        }
        let claims = compact.payload
        // 4. The issuer the discovery document names.
        guard claims["iss"]?.stringValue == issuer else {
            throw GoogleRISCRefusal("iss is \(shown(claims["iss"])), not \(issuer)", reason: .issuer)
        }
        // 5. One of the app's Google client ids.
        guard !audiences.isEmpty else {
            throw GoogleRISCRefusal("no Google client id is configured to check aud against; set them with `gatehouse providers set google --client-id web=ID`", reason: .noAudience)
        }
        let auds = claims["aud"]?.stringValue.map { [$0] } ?? claims["aud"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard auds.contains(where: audiences.contains) else {
            throw GoogleRISCRefusal("aud \(shown(claims["aud"])) is none of the app's Google client ids", reason: .audience)
        }
        // 6. exp is deliberately not checked (see the type's comment). 7. A jti, by which duplicates are known.
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 200 else {
            throw GoogleRISCRefusal("the token has no jti (1 to 200 characters)", reason: .jti)
        }
        // 8. One event of a type Google sends, with the fields it says.
        guard let events = claims["events"]?.objectValue, events.count == 1, let (uri, body) = events.first, let event = body.objectValue else {
            throw GoogleRISCRefusal("events is not an object holding exactly one event", reason: .events)
        }
        guard let kind = GoogleSecurityEvent.Kind(uri: uri) else {
            throw GoogleRISCRefusal("the event type \(uri.prefix(120)) is not one Gatehouse acts on", reason: .eventType)
        }
        let issuedAt = claims["iat"]?.int64Value.map { Timestamp(seconds: $0) }.flatMap { $0.isRepresentable ? $0 : nil }
        let subject = event["subject"]?.objectValue
        func text(_ value: JSONValue?, max: Int = 255) -> String? {
            guard let text = value?.stringValue, !text.isEmpty, text.utf8.count <= max else { return nil }
            return text
        }
        switch kind {
        case .verification:
            return GoogleSecurityEvent(kind: kind, jti: jti, issuedAt: issuedAt, sub: nil, token: nil, reason: nil, state: text(event["state"], max: 200))
        case .tokenRevoked:
            guard let subject, let alg = text(subject["token_identifier_alg"], max: 40), let value = text(subject["token"], max: 512) else {
                throw GoogleRISCRefusal("token-revoked has no subject with token_identifier_alg and token", reason: .subject)
            }
            let identifier: GoogleSecurityEvent.TokenIdentifier
            switch alg {
            case "prefix": identifier = .prefix(value)
            case "hash_base64_sha512_sha512": identifier = .doubleSHA512(value)
            default: throw GoogleRISCRefusal("token_identifier_alg \"\(alg)\" is neither prefix nor hash_base64_sha512_sha512", reason: .subject)
            }
            return GoogleSecurityEvent(kind: kind, jti: jti, issuedAt: issuedAt, sub: nil, token: identifier, reason: nil, state: nil)
        default:
            guard let subject, subject["subject_type"]?.stringValue == "iss-sub", let sub = text(subject["sub"]) else {
                throw GoogleRISCRefusal("\(kind.rawValue) has no subject of subject_type iss-sub with a sub", reason: .subject)
            }
            let reason = kind == .accountDisabled ? text(event["reason"], max: 40) : nil
            return GoogleSecurityEvent(kind: kind, jti: jti, issuedAt: issuedAt, sub: sub, token: nil, reason: reason, state: nil)
        }
    }

    private func shown(_ value: JSONValue?) -> String {
        guard let value else { return "absent" }
        if let text = value.stringValue { return "\"\(text.prefix(80))\"" }
        return "not a string"
    }
}
