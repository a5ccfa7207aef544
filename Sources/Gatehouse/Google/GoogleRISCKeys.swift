import Foundation
import HTTPClient
import JOSE
import Locking

/// Where Google's security event tokens are checked against: the issuer and the signing keys that Google's RISC
/// discovery document names (`{base}/.well-known/risc-configuration`: `issuer`, `jwks_uri`), with `base`
/// `GATEHOUSE_GOOGLE_ACCOUNTS_BASE_URL` or `https://accounts.google.com`. Both are kept in this process for
/// `cacheSeconds`; a token naming a `kid` the keys lack fetches them again, at most once a minute (anyone can send a
/// token with a made-up `kid`, and each must not cost a request to Google). A fetch that failed is not tried again
/// for a minute either: while Google cannot be reached, tokens are answered "try later" without a request each.
public final class GoogleRISCKeys: Sendable {
    public static let accountsBaseURL = "https://accounts.google.com"
    public static let baseURLVariable = "GATEHOUSE_GOOGLE_ACCOUNTS_BASE_URL"
    public static let cacheSeconds: Int64 = 3600
    public static let forcedRefreshSeconds: Int64 = 60

    /// The discovery document's answer and the keys, as last fetched.
    public struct Configuration: Sendable {
        public let issuer: String
        public let keys: JWKS
        let fetchedAt: Timestamp
    }

    /// Why the keys could not be had: the token cannot be judged now (Google retries a delivery answered 5xx).
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public let baseURL: String
    let timeout: Double
    private let cached = Locked<Configuration?>(nil)
    private let lastForced = Locked<Timestamp?>(nil)
    /// The last fetch that failed, and when: answered again, without a fetch, for `forcedRefreshSeconds`.
    private let lastFailure = Locked<(at: Timestamp, failure: Unavailable)?>(nil)
    /// How many fetches were tried (the discovery document, then the keys, count as one).
    let fetchAttempts = Locked<Int>(0)

    /// `baseURL` nil: the variable, else Google's.
    public init(baseURL: String? = nil, timeout: Double = 10) {
        let chosen = baseURL ?? ProcessInfo.processInfo.environment[Self.baseURLVariable].flatMap { $0.isEmpty ? nil : $0 } ?? Self.accountsBaseURL
        self.baseURL = chosen.hasSuffix("/") ? String(chosen.dropLast()) : chosen
        self.timeout = timeout
    }

    /// The configuration, from the cache while it is fresh; `unknownKeyID` forces one fetch a minute.
    public func configuration(now: Timestamp, unknownKeyID: Bool = false) throws -> Configuration {
        if let current = cached.value {
            let fresh = now < current.fetchedAt.adding(seconds: Self.cacheSeconds)
            if fresh && !unknownKeyID { return current }
            if unknownKeyID {
                let allowed = lastForced.withLock { at -> Bool in
                    if let at, now < at.adding(seconds: Self.forcedRefreshSeconds) { return false }
                    at = now
                    return true
                }
                if !allowed { return current }
            }
        }
        if let last = lastFailure.value, now >= last.at, now < last.at.adding(seconds: Self.forcedRefreshSeconds) { throw last.failure }
        fetchAttempts.withLock { $0 += 1 }
        let configuration: Configuration
        do { configuration = try fetch(now: now) } catch let failure as Unavailable {
            lastFailure.withLock { $0 = (now, failure) }
            throw failure
        }
        cached.withLock { $0 = configuration }
        lastFailure.withLock { $0 = nil }
        return configuration
    }

    private func get(_ url: String) throws -> [UInt8] {
        do { _ = try OutboundURL(url, variable: Self.baseURLVariable) } catch { throw Unavailable(description: "\(error)") }
        let answer: HTTPAnswer
        do {
            answer = try HTTPClient.send(HTTPRequest(method: "GET", url: url, headers: ["Accept: application/json"], timeout: timeout, maxAnswerBytes: 1 << 20))
        } catch {
            throw Unavailable(description: "Google's RISC keys could not be fetched: \(error.describe(OutboundURL.redacted(url)))")
        }
        guard answer.status == 200 else { throw Unavailable(description: "\(OutboundURL.redacted(url)) answered HTTP \(answer.status)") }
        return answer.body
    }

    private func fetch(now: Timestamp) throws -> Configuration {
        let discoveryURL = baseURL + "/.well-known/risc-configuration"
        guard let discovery = try? JSONValue.parseObject(try get(discoveryURL)),
              let issuer = discovery["issuer"]?.stringValue, !issuer.isEmpty, let jwksURI = discovery["jwks_uri"]?.stringValue else {
            throw Unavailable(description: "\(OutboundURL.redacted(discoveryURL)) is not a RISC configuration (issuer, jwks_uri)")
        }
        let keys: JWKS
        do { keys = try JWKS(json: try get(jwksURI)) } catch let error as Unavailable { throw error } catch {
            throw Unavailable(description: "\(OutboundURL.redacted(jwksURI)) is not a JWKS document: \(error)")
        }
        return Configuration(issuer: issuer, keys: keys, fetchedAt: now)
    }
}
