import Foundation
import HTTPClient
import JOSE
import Locking
import Storage

/// What discovery says about a provider (OpenID Connect Discovery 1.0 §3), as far as the console uses it.
public struct OIDCMetadata: Sendable, Equatable {
    public let issuer: String
    public let authorizationEndpoint: String
    public let tokenEndpoint: String
    public let jwksURI: String
    public let scopesSupported: [String]
    /// Empty when the document does not say (the default is then `client_secret_basic`).
    public let tokenEndpointAuthMethods: [String]

    /// Reads a discovery document: its `issuer` must be exactly the configured one (Discovery §4.3), and every
    /// endpoint must pass the outbound rule (https, or http to this machine).
    init(json: [UInt8], expectedIssuer: String) throws {
        guard let document = try? JSONValue.parseObject(json) else {
            throw SSOError(.providerUnavailable, "the provider's discovery document is not a JSON object")
        }
        guard document["issuer"]?.stringValue == expectedIssuer else {
            throw SSOError(.providerUnavailable, "the provider's discovery document names another issuer than the configured one")
        }
        func endpoint(_ name: String) throws -> String {
            guard let value = document[name]?.stringValue else {
                throw SSOError(.providerUnavailable, "the provider's discovery document has no \(name)")
            }
            do { _ = try OutboundURL(value, variable: name) } catch {
                throw SSOError(.providerUnavailable, "the provider's \(error.description)")
            }
            return value
        }
        issuer = expectedIssuer
        authorizationEndpoint = try endpoint("authorization_endpoint")
        tokenEndpoint = try endpoint("token_endpoint")
        jwksURI = try endpoint("jwks_uri")
        scopesSupported = document["scopes_supported"]?.arrayValue?.compactMap(\.stringValue) ?? []
        tokenEndpointAuthMethods = document["token_endpoint_auth_methods_supported"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}

/// Each provider's discovery document and key set, fetched once and kept for an hour. A token signed with a key id
/// the kept set lacks (the provider rotated its keys) fetches the set again, at most once a minute per provider, so a
/// stream of forged key ids cannot make the console hammer the provider.
public final class OIDCProviderCache: Sendable {
    /// The console's one cache.
    public static let shared = OIDCProviderCache()

    /// How long a fetched document is used: an hour.
    public static let lifetime: Int64 = 3600
    /// The least time between two fetches of a key set for unknown key ids: a minute.
    public static let keyRefetchInterval: Int64 = 60

    struct Entry: Sendable {
        var metadata: OIDCMetadata
        var fetchedAt: Timestamp
        var keys: JWKS?
        var keysFetchedAt: Timestamp?
    }

    private let entries = Locked<[String: Entry]>([:])
    /// How many key sets were fetched, per issuer (for the tests of the once-a-minute rule).
    private let keyFetches = Locked<[String: Int]>([:])

    public init() {}

    /// The provider's discovery document, fetched when not kept or older than `lifetime`.
    public func metadata(issuer: String, now: Timestamp) throws -> OIDCMetadata {
        if let entry = entries.withLock({ $0[issuer] }), now.milliseconds - entry.fetchedAt.milliseconds < Self.lifetime * 1000,
           entry.fetchedAt <= now {
            return entry.metadata
        }
        let base = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        let body = try Self.fetch(base + "/.well-known/openid-configuration", what: "discovery document")
        let metadata = try OIDCMetadata(json: body, expectedIssuer: issuer)
        entries.withLock { $0[issuer] = Entry(metadata: metadata, fetchedAt: now, keys: nil, keysFetchedAt: nil) }
        return metadata
    }

    /// The key that signed a token with key id `kid` (nil: the set's only key).
    func key(issuer: String, kid: String?, now: Timestamp) throws -> JWK {
        let metadata = try metadata(issuer: issuer, now: now)
        var entry = entries.withLock { $0[issuer] }
        let stale = entry?.keys == nil || entry?.keysFetchedAt.map { now.milliseconds - $0.milliseconds >= Self.lifetime * 1000 } ?? true
        var keys = stale ? try fetchKeys(issuer: issuer, metadata: metadata, now: now) : entry!.keys!
        if let kid, (try? keys.key(withID: kid)) == nil {
            entry = entries.withLock { $0[issuer] }
            let last = entry?.keysFetchedAt ?? Timestamp(milliseconds: 0)
            if !stale, now.milliseconds - last.milliseconds >= Self.keyRefetchInterval * 1000 {
                keys = try fetchKeys(issuer: issuer, metadata: metadata, now: now)
            }
        }
        do {
            if let kid { return try keys.key(withID: kid) }
            guard keys.keys.count == 1 else { throw JWKError.ambiguousKey(count: keys.keys.count) }
            return keys.keys[0]
        } catch {
            throw SSOError(.idTokenSignature, "the ID token's key is not among the identity provider's keys")
        }
    }

    /// How many times the key set of `issuer` was fetched.
    public func keySetFetches(issuer: String) -> Int { keyFetches.withLock { $0[issuer] ?? 0 } }

    /// Forgets what was kept for `issuer` (after `sso set`).
    public func forget(issuer: String) {
        entries.withLock { $0[issuer] = nil }
    }

    private func fetchKeys(issuer: String, metadata: OIDCMetadata, now: Timestamp) throws -> JWKS {
        keyFetches.withLock { $0[issuer, default: 0] += 1 }
        let body = try Self.fetch(metadata.jwksURI, what: "key set")
        let keys: JWKS
        do { keys = try JWKS(json: body) } catch { throw SSOError(.providerUnavailable, "the identity provider's key set is not usable: \(error)") }
        entries.withLock {
            $0[issuer]?.keys = keys
            $0[issuer]?.keysFetchedAt = now
        }
        return keys
    }

    /// `GATEHOUSE_SSO_CA_FILE`: the PEM file of the certificate authorities to trust for the provider instead of the system's.
    static var caFile: String? {
        ProcessInfo.processInfo.environment["GATEHOUSE_SSO_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The largest document read: discovery documents and key sets are a few KB.
    static let maxAnswerBytes = 1 << 20

    /// GETs a document from the provider; anything but a 200 is `providerUnavailable`.
    static func fetch(_ url: String, what: String) throws -> [UInt8] {
        do { _ = try OutboundURL(url, variable: what) } catch { throw SSOError(.providerUnavailable, "the provider's \(error.description)") }
        let answer: HTTPAnswer
        do {
            answer = try HTTPClient.send(HTTPRequest(method: "GET", url: url, headers: ["Accept: application/json"], timeout: 10,
                                                     caFile: caFile, maxAnswerBytes: maxAnswerBytes))
        } catch {
            throw SSOError(.providerUnavailable, "the identity provider's \(what) could not be fetched: \(error.describe(url))")
        }
        guard answer.status == 200 else {
            throw SSOError(.providerUnavailable, "the identity provider answered HTTP \(answer.status) for its \(what)")
        }
        return answer.body
    }

    /// POSTs a form to the provider's token endpoint; returns the status and the body.
    static func post(_ url: String, form: [(String, String)], headers: [String]) throws -> HTTPAnswer {
        do {
            return try HTTPClient.send(HTTPRequest(method: "POST", url: url,
                                                   headers: ["Accept: application/json", "Content-Type: application/x-www-form-urlencoded"] + headers,
                                                   body: Array(formEncode(form).utf8), timeout: 10, caFile: caFile, maxAnswerBytes: maxAnswerBytes))
        } catch {
            throw SSOError(.providerUnavailable, "the identity provider's token endpoint could not be reached: \(error.describe(url))")
        }
    }

    /// `application/x-www-form-urlencoded` text (also the encoding of client_secret_basic's parts, RFC 6749 §2.3.1).
    static func formEncode(_ form: [(String, String)]) -> String {
        form.map { "\(formEscape($0.0))=\(formEscape($0.1))" }.joined(separator: "&")
    }

    static func formEscape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
