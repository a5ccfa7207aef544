import Foundation
import JOSE

/// One of Apple's server-to-server notifications for Sign in with Apple, verified.
///
/// Apple POSTs `{"payload": "<JWT>"}` to the endpoint registered for the app. The JWT is RS256 under Apple's keys
/// (`/auth/keys`) with `iss` `https://appleid.apple.com`, `aud` the app's client id, `iat`, `exp`, `jti`, and
/// `events`: a *string* holding JSON with `type`, `sub` (the Apple user id, Better Auth's `account.accountId`),
/// `event_time` (milliseconds) and, for the email events, `email` and `is_private_email` ("true" or a boolean).
public struct AppleNotification: Sendable, Codable, Equatable {
    /// The event types Apple sends.
    public enum EventType: String, Sendable, Codable, CaseIterable {
        /// The person stopped the private relay forwarding to their address: mail sent to the relay address is dropped.
        case emailDisabled = "email-disabled"
        /// Forwarding is on again.
        case emailEnabled = "email-enabled"
        /// The person stopped using Sign in with Apple with the app (Settings, or a revoke call).
        case consentRevoked = "consent-revoked"
        /// The person deleted their Apple account. Apple's page spells it `account-delete` and `account-deleted`;
        /// both are read as this one.
        case accountDelete = "account-delete"

        /// Reads Apple's spelling.
        public init?(apple text: String) {
            if text == "account-deleted" { self = .accountDelete } else { self.init(rawValue: text) }
        }
    }

    public let jti: String
    public let audience: String
    public let type: EventType
    /// The Apple user id.
    public let sub: String
    public let eventTime: Timestamp?
    public let email: String?
    public let isPrivateEmail: Bool?
}

/// Why a notification was refused. The text names what is wrong and never holds the token.
public struct AppleNotificationRefusal: Error, Sendable, CustomStringConvertible, Equatable {
    /// What is wrong, as one of a fixed set: refusals are counted per reason and source
    /// (`gatehouse_apple_refusals`), so however many forged requests come, the counters stay few.
    public enum Reason: String, Sendable, Codable, CaseIterable {
        /// Not Apple's body shape (not recorded at all).
        case malformed
        /// The payload is not a compact JWS.
        case notAToken = "not_a_token"
        /// The token names a `kid` Apple's key set lacks (after the one refresh a minute allows).
        case unknownKey = "unknown_key"
        /// The signature does not verify under Apple's keys.
        case signature
        case algorithm
        case issuer
        /// No Apple client id is configured to check `aud` against.
        case noAudience = "no_audience"
        case audience
        /// `iat` missing or in the future.
        case issuedAt = "iat"
        /// `exp` missing or passed.
        case expired = "exp"
        case jti
        /// `events` missing, not a string, or not JSON.
        case events
        case eventType = "type"
        case sub
        case eventTime = "event_time"
        /// Apple's keys could not be had (the notification was not judged; Apple retries).
        case keysUnavailable = "keys_unavailable"
    }

    public let description: String
    public let reason: Reason
    /// True when the body was not even Apple's shape (`{"payload": "…"}`): such a request is not recorded.
    public var malformedBody: Bool { reason == .malformed }

    init(_ description: String, reason: Reason) {
        self.description = description
        self.reason = reason
    }
}

/// Checks a notification: the body's shape, the JWT's RS256 signature under Apple's keys, `iss`, `aud` among the
/// configured Apple client ids, `iat` not in the future and `exp` not passed (each with `leeway` seconds of clock
/// skew), and `events` as the JSON string Apple sends.
///
///     let verifier = AppleNotificationVerifier(audiences: ["com.example.web", "com.example.app"])
///     let notification = try verifier.verify(body: body, keys: jwks, now: .now())
public struct AppleNotificationVerifier: Sendable {
    /// Apple's issuer.
    public static let issuer = "https://appleid.apple.com"
    /// Seconds of clock skew allowed on `iat` and `exp`.
    public static let leeway: Int64 = 60

    /// The accepted `aud` values: the Services ID, the bundle id and Better Auth's `audience` list.
    public let audiences: [String]

    public init(audiences: [String]) { self.audiences = audiences }

    /// The configured Apple client ids in `store`.
    public static func audiences(in store: Store) throws -> [String] {
        let settings = try ProviderConfiguration(store: store).apple()
        var seen = Set<String>()
        return ([settings.servicesID, settings.bundleID].compactMap { $0 } + settings.audience).filter { seen.insert($0).inserted }
    }

    /// The token in Apple's body `{"payload": "<JWT>"}`.
    public static func payload(of body: [UInt8]) throws(AppleNotificationRefusal) -> String {
        guard let object = try? JSONValue.parseObject(body) else {
            throw AppleNotificationRefusal("the body is not a JSON object (Apple sends {\"payload\": \"<JWT>\"})", reason: .malformed)
        }
        guard let payload = object["payload"]?.stringValue, !payload.isEmpty else {
            throw AppleNotificationRefusal("the body has no string \"payload\" (Apple sends {\"payload\": \"<JWT>\"})", reason: .malformed)
        }
        return payload
    }

    /// Decodes the token far enough to pick its key: the `kid` it names.
    public static func keyID(of token: String) -> String? {
        (try? JWT.Compact(parsing: token))?.keyID
    }

    /// Verifies `token` under `keys` at `now`.
    public func verify(token: String, keys: JWKS, now: Timestamp) throws(AppleNotificationRefusal) -> AppleNotification {
        let compact: JWT.Compact
        do { compact = try JWT.verify(token, keySet: keys) } catch {
            let unknownKey: Bool
            if case .keyNotFound? = error as? JWKError { unknownKey = true } else { unknownKey = false }
            throw AppleNotificationRefusal("the payload is not a token signed by Apple's keys: \(error)", reason: unknownKey ? .unknownKey : .signature)
        }
        guard compact.algorithm == "RS256" else {
            throw AppleNotificationRefusal("the token is signed \(compact.algorithm.prefix(10)); Apple signs notifications RS256", reason: .algorithm)
        }
        let claims = compact.payload
        guard claims["iss"]?.stringValue == Self.issuer else {
            throw AppleNotificationRefusal("iss is \(Self.shown(claims["iss"])), not \(Self.issuer)", reason: .issuer)
        }
        guard !audiences.isEmpty else {
            throw AppleNotificationRefusal("no Apple client id is configured to check aud against; set them with `gatehouse providers set apple --services-id ID --bundle-id ID`", reason: .noAudience)
        }
        let auds: [String] = claims["aud"]?.stringValue.map { [$0] } ?? claims["aud"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard let audience = auds.first(where: audiences.contains) else {
            throw AppleNotificationRefusal("aud \(Self.shown(claims["aud"])) is none of the configured Apple client ids (\(audiences.joined(separator: ", ")))", reason: .audience)
        }
        guard let iat = claims["iat"]?.int64Value else { throw AppleNotificationRefusal("the token has no numeric iat", reason: .issuedAt) }
        guard let exp = claims["exp"]?.int64Value else { throw AppleNotificationRefusal("the token has no numeric exp", reason: .expired) }
        let nowSeconds = now.seconds
        guard iat <= nowSeconds + Self.leeway else {
            throw AppleNotificationRefusal("iat \(Timestamp(seconds: iat).iso8601) is in the future (now \(now.iso8601)); check this machine's clock", reason: .issuedAt)
        }
        guard exp > nowSeconds - Self.leeway else {
            throw AppleNotificationRefusal("the token expired at \(Timestamp(seconds: exp).iso8601) (now \(now.iso8601))", reason: .expired)
        }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 200 else {
            throw AppleNotificationRefusal("the token has no jti (1 to 200 characters)", reason: .jti)
        }
        guard let eventsValue = claims["events"] else { throw AppleNotificationRefusal("the token has no events claim", reason: .events) }
        guard let eventsText = eventsValue.stringValue else {
            throw AppleNotificationRefusal("events is a JSON \(eventsValue.objectValue != nil ? "object" : "value"), not the string holding JSON that Apple sends", reason: .events)
        }
        guard let events = try? JSONValue.parseObject(Array(eventsText.utf8)) else {
            throw AppleNotificationRefusal("events is a string but not a JSON object", reason: .events)
        }
        guard let typeText = events["type"]?.stringValue else { throw AppleNotificationRefusal("events has no string type", reason: .eventType) }
        guard let type = AppleNotification.EventType(apple: typeText) else {
            throw AppleNotificationRefusal("events.type \"\(typeText.prefix(40))\" is not one of email-disabled, email-enabled, consent-revoked, account-delete", reason: .eventType)
        }
        guard let sub = events["sub"]?.stringValue, !sub.isEmpty, sub.utf8.count <= 255 else {
            throw AppleNotificationRefusal("events has no sub (the Apple user id)", reason: .sub)
        }
        var eventTime: Timestamp?
        if let value = events["event_time"] {
            guard let ms = value.int64Value else { throw AppleNotificationRefusal("events.event_time is not a number of milliseconds", reason: .eventTime) }
            eventTime = Timestamp(milliseconds: ms)
            if eventTime?.isRepresentable != true { eventTime = nil }
        }
        var email: String?
        var isPrivate: Bool?
        if type == .emailDisabled || type == .emailEnabled {
            email = events["email"]?.stringValue.map { String($0.prefix(320)) }
            switch events["is_private_email"] {
            case .some(.bool(let flag)): isPrivate = flag
            case .some(.string(let text)): isPrivate = text == "true" ? true : (text == "false" ? false : nil)
            default: isPrivate = nil
            }
        }
        return AppleNotification(jti: jti, audience: audience, type: type, sub: sub, eventTime: eventTime, email: email, isPrivateEmail: isPrivate)
    }

    /// A claim as a refusal shows it: short, quoted.
    static func shown(_ value: JSONValue?) -> String {
        guard let value else { return "(absent)" }
        if let text = value.stringValue { return "\"\(text.prefix(80))\"" }
        if let list = value.arrayValue { return "[" + list.prefix(5).map { shown($0) }.joined(separator: ", ") + "]" }
        return "(not a string)"
    }
}
