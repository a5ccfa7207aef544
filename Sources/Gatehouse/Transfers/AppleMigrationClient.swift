import Foundation
import HTTPClient
import JOSE
import Locking

/// Apple's user migration endpoints for one team (TN3159), safe to call from several threads at once:
/// `POST {base}/auth/token` (`grant_type=client_credentials`, `scope=user.migration`, the team's client secret) gives
/// an access token for an hour, which is reused for every `POST {base}/auth/usermigrationinfo` and fetched again once
/// when Apple answers `invalid_grant` (it expired, or is not this team's). The client secret is minted from the team's
/// key, is sent with each call as Apple asks, and is never printed, logged, stored or put in an error, nor is the
/// access token.
final class AppleMigrationClient: @unchecked Sendable {
    /// What one migration call came to.
    enum Answer {
        /// 200: the answer's fields.
        case fields([String: JSONValue])
        /// Apple refused this one account (`invalid_request`: the person revoked the app, or the sub is not the
        /// team's): recorded, and the run goes on.
        case refused(String)
        /// 429: wait this many seconds, then ask again.
        case retryAfter(Double)
        /// No usable answer now (5xx, a timeout, a cut connection): asked again a few times, then recorded.
        case unavailable(String)
    }

    /// A client secret's lifetime here: minted again with each new access token.
    static let secretLifetime = Seconds(2 * 3600)
    /// An access token is fetched again after this long (Apple's last an hour).
    static let tokenReuse: Int64 = 55 * 60

    let http: AppleHTTPClient
    let clientID: String
    let team: TeamID
    let keyID: KeyID
    private let minter: ClientSecretMinter
    private let fetching = NSLock()
    private let state = Locked<TokenState>(TokenState())
    /// How many times an access token Apple refused was fetched again.
    var renewals: Int { state.withLock { $0.renewals } }

    private struct TokenState {
        var secret = ""
        var token: String?
        var fetchedAt: Int64 = 0
        var generation = 0
        var renewals = 0
    }

    init(baseURL: String?, timeout: Double = AppleHTTPClient.defaultTimeout, clientID: String, key: AppleKey, privateKey: P256.PrivateKey) {
        http = AppleHTTPClient(baseURL: AppleHTTPClient.baseURL(baseURL), timeout: timeout)
        self.clientID = clientID
        team = key.teamID
        keyID = key.keyID
        minter = ClientSecretMinter(keyID: key.keyID, teamID: key.teamID, privateKey: privateKey)
    }

    /// The failure that stops a whole run: the team's secret or token is refused, so every other call would be too.
    func fatal(_ message: String, fix: String) -> GatehouseError {
        GatehouseError("Apple refused team \(team)'s request: \(message)", fix: fix)
    }

    /// The current token and client secret, fetching a token when there is none, it is old, or `stale` is the
    /// generation a caller saw refused (only the first caller to report it fetches; the others take the new one).
    private func credentials(renewing stale: Int? = nil) throws -> (token: String, secret: String, generation: Int) {
        let now = Timestamp.now().seconds
        if let current = state.withLock({ s -> (String, String, Int)? in
            guard let token = s.token, now - s.fetchedAt < Self.tokenReuse, stale.map({ $0 != s.generation }) ?? true else { return nil }
            return (token, s.secret, s.generation)
        }) { return current }
        fetching.lock()
        defer { fetching.unlock() }
        // Another thread may have fetched one while this one waited.
        if let current = state.withLock({ s -> (String, String, Int)? in
            guard let token = s.token, now - s.fetchedAt < Self.tokenReuse, stale.map({ $0 != s.generation }) ?? true else { return nil }
            return (token, s.secret, s.generation)
        }) { return current }
        let secret = try minter.mint(clientID: clientID, lifetime: Self.secretLifetime, now: .now())
        let token = try fetchToken(secret: secret)
        return state.withLock { s in
            if s.token != nil && stale != nil { s.renewals += 1 }
            s.secret = secret
            s.token = token
            s.fetchedAt = Timestamp.now().seconds
            s.generation += 1
            return (token, secret, s.generation)
        }
    }

    /// `POST /auth/token`: a few tries through 429s and 5xx, else the failure stops the run.
    private func fetchToken(secret: String) throws -> String {
        let url = OutboundURL.redacted(http.baseURL + "/auth/token")
        var lastProblem = ""
        for attempt in 0..<6 {
            if attempt > 0 { usleep(UInt32(min(0.25 * pow(2, Double(attempt)), 4) * 1_000_000)) }
            let answer: HTTPAnswer
            do {
                answer = try http.post("/auth/token", form: [("grant_type", "client_credentials"), ("scope", "user.migration"),
                                                             ("client_id", clientID), ("client_secret", secret)])
            } catch {
                lastProblem = error.describe(url)
                continue
            }
            if answer.status == 200, let token = (try? JSONValue.parseObject(answer.body))?["access_token"]?.stringValue, !token.isEmpty {
                return token
            }
            if answer.status == 429 {
                usleep(UInt32(min(Self.retryAfter(answer), 30) * 1_000_000))
                lastProblem = "Apple answered 429 to the token request"
                continue
            }
            if answer.status >= 500 { lastProblem = "Apple answered HTTP \(answer.status) to the token request"; continue }
            let code = Self.errorCode(answer)
            if code == "invalid_client" {
                throw fatal("invalid_client for the client secret of key \(keyID) and client id \(clientID)",
                            fix: "check that key \(keyID) belongs to team \(team) and is enabled for Sign in with Apple there, and that \(clientID) is the app's id in that team (`gatehouse apple key selftest \(keyID)`)")
            }
            throw fatal("the token request was answered HTTP \(answer.status)\(code.map { " \($0)" } ?? "")",
                        fix: "check GATEHOUSE_APPLE_BASE_URL and that the transfer is within its 60 days")
        }
        throw GatehouseError("Apple's token endpoint gave no token after 6 tries (\(lastProblem)); nothing was lost: run the command again",
                             fix: "check the network to \(OutboundURL.redacted(http.baseURL))", code: .unavailable)
    }

    /// One `POST /auth/usermigrationinfo` with `form` (besides `client_id` and `client_secret`). Throws only for what
    /// stops the run.
    func migrationInfo(_ form: [(String, String)]) throws -> Answer {
        var (token, secret, generation) = try credentials()
        var renewed = false
        while true {
            let answer: HTTPAnswer
            do {
                answer = try http.post("/auth/usermigrationinfo", form: form + [("client_id", clientID), ("client_secret", secret)],
                                       headers: ["Authorization: Bearer \(token)"])
            } catch {
                return .unavailable(error.describe(OutboundURL.redacted(http.baseURL + "/auth/usermigrationinfo")))
            }
            if answer.status == 200 {
                guard let fields = try? JSONValue.parseObject(answer.body) else { return .unavailable("Apple's answer is not a JSON object") }
                return .fields(fields)
            }
            if answer.status == 429 { return .retryAfter(Self.retryAfter(answer)) }
            if answer.status >= 500 { return .unavailable("Apple answered HTTP \(answer.status)") }
            let code = Self.errorCode(answer) ?? (answer.status == 401 ? "invalid_grant" : nil)
            switch code {
            case "invalid_grant" where !renewed:
                (token, secret, generation) = try credentials(renewing: generation)
                renewed = true
                continue
            case "invalid_grant":
                throw fatal("invalid_grant to an access token fetched just now: the token is not this team's, or the app is not (or no longer) in a transfer involving team \(team)",
                            fix: "check the transfer's teams (`gatehouse apple transfer status`) and that it is within its 60 days")
            case "invalid_client":
                throw fatal("invalid_client for the client secret of key \(keyID) and client id \(clientID)",
                            fix: "check that key \(keyID) belongs to team \(team) and that \(clientID) is the app's id (`gatehouse apple key selftest \(keyID)`)")
            default:
                return .refused(code ?? "http_\(answer.status)")
            }
        }
    }

    /// Apple's `error`, when the answer is JSON with one: a short identifier, nothing else kept.
    static func errorCode(_ answer: HTTPAnswer) -> String? {
        guard let code = (try? JSONValue.parseObject(answer.body))?["error"]?.stringValue, !code.isEmpty, code.count <= 40,
              code.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") }) else { return nil }
        return code
    }

    /// `Retry-After` in seconds, at most 120: a number of seconds, or an HTTP date (RFC 9110 allows both; a date is
    /// counted from this machine's clock); nothing or anything else reads as 1 s.
    static func retryAfter(_ answer: HTTPAnswer, now: Date = Date()) -> Double {
        guard let text = answer.headers["retry-after"]?.trimmingCharacters(in: .whitespaces) else { return 1 }
        if let seconds = Double(text), seconds.isFinite, seconds >= 0 { return min(seconds, 120) }
        if let date = httpDate(text) { return min(max(date.timeIntervalSince(now), 0), 120) }
        return 1
    }

    /// An HTTP date, `Sun, 06 Dec 2026 15:04:05 GMT` (IMF-fixdate), or nil.
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }
}
