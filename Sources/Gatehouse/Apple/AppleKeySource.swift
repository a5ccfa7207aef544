import Foundation
import HTTPClient
import JOSE
import Locking

/// Apple's public signing keys, which sign identity tokens and server-to-server notifications: a JWKS read from a
/// file (`--jwks FILE`, for a machine that cannot reach Apple), or fetched from `{base}/auth/keys` and kept for the
/// `max-age` of the answer's `Cache-Control` — in this process, and in the store (`gatehouse_apple_jwks`) so that a
/// one-shot `apple notifications ingest` per notification does not fetch them every time. A token naming a `kid`
/// the cached set lacks makes one fresh fetch (Apple rotated its keys) — at most one a minute in a process
/// (`forcedRefreshSeconds`): anyone can send a token naming a made-up `kid`, and each must not cost a request to
/// Apple. Within the minute the keys last fetched are used (the unknown `kid` is refused without a fetch), or, when
/// that refresh failed, the same failure is answered again (Apple retries a notification that is not judged).
public final class AppleKeySource: Sendable {
    /// The longest Gatehouse keeps fetched keys, whatever `max-age` says.
    public static let maxCacheSeconds: Int64 = 86_400

    private enum Origin {
        case file(path: String, keys: JWKS)
        case remote(AppleHTTPClient)
    }
    private let origin: Origin
    private let cache = Locked<(keys: JWKS, expires: Timestamp)?>(nil)
    /// The key set last fetched, whatever its max-age: what a refresh forced within the minute answers.
    private let latest = Locked<JWKS?>(nil)
    /// When the last forced refresh was started, and its failure when it failed.
    private let forced = Locked<(at: Timestamp, failure: Unavailable?)?>(nil)

    /// How many fetches were started (for tests of the refresh limit).
    let fetchAttempts = Locked<Int>(0)

    /// The shortest time between two fetches forced by a `kid` the cached set lacks.
    public static let forcedRefreshSeconds: Int64 = 60

    /// Keys from a JWKS file; throws naming the file when it cannot be read or is not a JWKS.
    public init(file path: String) throws {
        try InputFile.requireRegular(path, what: "the JWKS file")
        guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else {
            throw GatehouseError.notFound("cannot read the JWKS file \(path) (missing, unreadable or over 1 MiB)", fix: "check the path given to --jwks")
        }
        let bytes = [UInt8](data)
        do {
            origin = .file(path: path, keys: try JWKS(json: bytes))
        } catch {
            throw GatehouseError.invalid("\(path) is not a JWKS document: \(error)", fix: "save the body of \(AppleHTTPClient.appleBaseURL)/auth/keys into it")
        }
    }

    /// Keys fetched from `{base}/auth/keys` (`baseURL` nil: `GATEHOUSE_APPLE_BASE_URL`, else Apple's).
    public init(baseURL: String? = nil, timeout: Double = AppleHTTPClient.defaultTimeout) {
        origin = .remote(AppleHTTPClient(baseURL: AppleHTTPClient.baseURL(baseURL), timeout: timeout))
    }

    /// Where the keys come from, for messages.
    public var description: String {
        switch origin {
        case .file(let path, _): return path
        // A misconfigured base URL may carry credentials: shown as every outbound refusal shows it.
        case .remote(let client): return OutboundURL.redacted(client.baseURL + "/auth/keys")
        }
    }

    /// Why the keys could not be had: the notification cannot be judged now (Apple retries it later).
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The key set. `fresh` skips every cache (the token named a `kid` the cached set lacks), at most once in
    /// `forcedRefreshSeconds`; within that, it answers the keys last fetched. `store`, when given, is read for, and
    /// given, a cached copy.
    public func keys(store: Store?, now: Timestamp, fresh: Bool = false) throws -> JWKS {
        switch origin {
        case .file(_, let keys):
            return keys
        case .remote(let client):
            let url = OutboundURL.redacted(client.baseURL + "/auth/keys")
            if fresh {
                // Taken and stamped under one lock: of requests arriving together, one fetches.
                let allowed = forced.withLock { state -> Bool in
                    if let at = state?.at, now >= at, now < at.adding(seconds: Self.forcedRefreshSeconds) { return false }
                    state = (now, nil)
                    return true
                }
                if !allowed {
                    if let failure = forced.value?.failure { throw failure }
                    if let keys = latest.value ?? cache.value?.keys { return keys }
                    throw Unavailable(description: "Apple's keys were fetched less than \(Self.forcedRefreshSeconds) s ago and are being fetched again; try later")
                }
                do { return try fetch(client, url: url, store: store, now: now) } catch let failure as Unavailable {
                    forced.withLock { state in if state?.at == now { state?.failure = failure } }
                    throw failure
                }
            }
            if let cached = cache.value, cached.expires > now { return cached.keys }
            if let store, let row = try? store.db.row("SELECT body, expires_at FROM gatehouse_apple_jwks WHERE url = ?", [url]),
               let expires = Timestamp(iso8601: (try? row.string("expires_at")) ?? ""), expires > now,
               let keys = try? JWKS(json: (try? row.string("body")) ?? "") {
                cache.withLock { $0 = (keys, expires) }
                return keys
            }
            return try fetch(client, url: url, store: store, now: now)
        }
    }

    /// Fetches the key set from `url`, and keeps it for the answer's max-age.
    private func fetch(_ client: AppleHTTPClient, url: String, store: Store?, now: Timestamp) throws -> JWKS {
        let answer: AppleHTTPClient.Answer
        fetchAttempts.withLock { $0 += 1 }
        do {
            answer = try client.get("/auth/keys")
        } catch {
            throw Unavailable(description: "Apple's keys could not be fetched: \(error.describe(url))")
        }
        guard answer.status == 200 else {
            throw Unavailable(description: "Apple's keys could not be fetched: \(url) answered HTTP \(answer.status)")
        }
        let keys: JWKS
        do { keys = try JWKS(json: answer.body) } catch {
            throw Unavailable(description: "the answer of \(url) is not a JWKS document: \(error)")
        }
        let maxAge = min(Self.maxAge(answer.headers["cache-control"]) ?? 0, Self.maxCacheSeconds)
        if maxAge > 0 {
            let expires = now.adding(seconds: maxAge)
            cache.withLock { $0 = (keys, expires) }
            if let store {
                // A cache, not a change: no audit entry; a store that cannot be written just fetches next time.
                _ = try? store.db.write {
                    try store.db.execute("""
                        INSERT INTO gatehouse_apple_jwks (url, body, fetched_at, expires_at) VALUES (?, ?, ?, ?)
                        ON CONFLICT (url) DO UPDATE SET body = excluded.body, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at
                        """, [url, String(decoding: answer.body, as: UTF8.self), now.iso8601, expires.iso8601])
                }
            }
        } else {
            cache.withLock { $0 = nil }
        }
        latest.withLock { $0 = keys }
        return keys
    }

    /// The `max-age` of a `Cache-Control` value in seconds; nil when absent, or when `no-store`/`no-cache` forbids keeping it.
    public static func maxAge(_ header: String?) -> Int64? {
        guard let header else { return nil }
        var age: Int64?
        for directive in header.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            switch parts.first {
            case "no-store", "no-cache": return nil
            case "max-age" where parts.count == 2:
                age = Int64(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))).map { max(0, $0) }
            default: continue
            }
        }
        return age
    }
}
