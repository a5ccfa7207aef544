import Foundation
import HTTPClient
import JOSE
import Storage

/// What revoking one Apple account's token came to.
public struct AppleRevocationOutcome: Sendable, Codable, Equatable {
    /// The kinds of result, each one line for people in `message`.
    public enum Outcome: String, Sendable, Codable {
        /// Apple answered 200: the token and the person's authorization of the app are revoked.
        case revoked
        /// Dry run: this is what would be sent.
        case wouldRevoke = "would_revoke"
        /// Better Auth holds no refresh or access token for this account (a native id-token sign-in): see `message`
        /// for what TN3194 asks instead.
        case noToken = "no_token"
        /// No client id or no active key to mint a client secret with.
        case notConfigured = "not_configured"
        /// Apple answered 400 `invalid_client`: the client secret or client id was not accepted.
        case invalidClient = "invalid_client"
        /// Apple answered 400 `invalid_grant`: the token is not one Apple issued to this client, or is expired or already revoked.
        case invalidGrant = "invalid_grant"
        /// Apple answered 400 `invalid_request`: a parameter is missing or malformed.
        case invalidRequest = "invalid_request"
        /// Apple answered another 4xx (another `error`, or none).
        case rejected
        /// Apple answered 5xx: try again later.
        case serverError = "server_error"
        /// No answer within the timeout.
        case timedOut = "timed_out"
        /// No connection (refused, DNS, TLS), or it broke before the answer.
        case unreachable
    }

    /// Better Auth's `account.id`.
    public let accountID: String
    public let outcome: Outcome
    /// One line: what was done, or what went wrong and what to do.
    public let message: String
    /// The client id the secret was minted for (nil when none could be chosen).
    public let clientID: String?
    /// `refresh_token` or `access_token` (nil when no token is held).
    public let tokenTypeHint: String?

    /// Whether this account is done with: revoked, would be (dry run), or nothing to send.
    public var succeeded: Bool { outcome == .revoked || outcome == .wouldRevoke || outcome == .noToken }
}

/// Revokes the Apple tokens Better Auth holds for a user (App Store Review Guideline 5.1.1(v), TN3194): for each
/// `account` row of provider `apple`, its refresh token (else its access token) is sent to `POST {base}/auth/revoke`,
/// form-encoded with `client_id`, a `client_secret` freshly minted from the active key for that client id, `token`
/// and `token_type_hint`. The token is read only to be sent: never printed, logged, audited or put in an error.
///
///     let outcomes = try AppleTokenRevoker(store: store, baseURL: nil, now: .now()).revoke(userID: "u1…", dryRun: false)
///
/// The client id of an account is the `aud` of the id token Better Auth stored with it, when that is a configured
/// Apple client id (a token can be revoked only by the client it was issued to); otherwise the Services ID for a
/// refresh token (the redirect flow), else the bundle id. Each attempt is audited (`apple.token.revoke`).
public struct AppleTokenRevoker {
    public let store: Store
    /// The base URL: the one given, else `GATEHOUSE_APPLE_BASE_URL`, else `https://appleid.apple.com`.
    public let baseURL: String
    public let now: Timestamp
    /// Who audit entries name.
    public var actor = Actor("gatehouse")
    /// Seconds one call to Apple may take.
    public var timeout = AppleHTTPClient.defaultTimeout

    /// The lifetime of each minted client secret: it is used at once.
    public static let secretLifetime = Seconds(300)

    public init(store: Store, baseURL: String?, now: Timestamp) {
        self.store = store
        self.baseURL = AppleHTTPClient.baseURL(baseURL)
        self.now = now
    }

    /// What TN3194 asks when no refresh or access token is held.
    public static let noTokenAdvice = "Better Auth holds no refresh or access token for this account (a native iOS id-token sign-in keeps none), so it cannot be revoked from here. TN3194 asks instead: delete the person's account data, direct them to revoke the app's access themselves (Settings > Apple ID > Sign in with Apple, or account.apple.com), and handle the consent-revoked notification that follows; or, while they are in the app, have it send a fresh authorization code, exchange it at /auth/token and revoke the token that returns"

    /// Revokes every Apple token of `userID` (a Better Auth user id); `dryRun` sends nothing and changes nothing.
    /// Throws only when the user does not exist or the store fails; each account's result is in the outcomes.
    public func revoke(userID: String, dryRun: Bool) throws -> [AppleRevocationOutcome] {
        let user = store.schema.user, account = store.schema.account
        guard try store.db.row("SELECT \(user.col(.id)) FROM \(user.sql) WHERE \(user.col(.id)) = ?", [userID]) != nil else {
            throw GatehouseError.notFound("no user with id \(userID.prefix(80))", fix: "find the user's id with `gatehouse users search`")
        }
        let rows = try store.db.rows("""
            SELECT \(account.col(.id)) AS id, \(account.col(.refreshToken)) AS refresh_token, \(account.col(.accessToken)) AS access_token,
                   \(account.col(.idToken)) AS id_token
            FROM \(account.sql) WHERE \(account.col(.userId)) = ? AND \(account.col(.providerId)) = 'apple' ORDER BY \(account.col(.id))
            """, [userID])
        guard !rows.isEmpty else { return [] }
        let settings = try ProviderConfiguration(store: store).apple()
        let configured = try AppleNotificationVerifier.audiences(in: store)
        var outcomes: [AppleRevocationOutcome] = []
        for row in rows {
            let accountID = row.optionalString("id") ?? ""
            let refresh = row.optionalString("refresh_token").flatMap { $0.isEmpty ? nil : $0 }
            let access = row.optionalString("access_token").flatMap { $0.isEmpty ? nil : $0 }
            guard let (token, hint) = refresh.map({ ($0, "refresh_token") }) ?? access.map({ ($0, "access_token") }) else {
                outcomes.append(AppleRevocationOutcome(accountID: accountID, outcome: .noToken, message: Self.noTokenAdvice, clientID: nil, tokenTypeHint: nil))
                continue
            }
            let issuedTo = row.optionalString("id_token").flatMap { try? JWT.Compact(parsing: $0) }.flatMap { compact -> String? in
                let aud = compact.payload["aud"]?.stringValue ?? compact.payload["aud"]?.arrayValue?.first?.stringValue
                return aud.flatMap { configured.contains($0) ? $0 : nil }
            }
            guard let clientID = issuedTo ?? (hint == "refresh_token" ? settings.servicesID ?? settings.bundleID : settings.bundleID ?? settings.servicesID) else {
                outcomes.append(AppleRevocationOutcome(accountID: accountID, outcome: .notConfigured,
                    message: "no Apple client id is configured to revoke with; set it with `gatehouse providers set apple --services-id ID --bundle-id ID`",
                    clientID: nil, tokenTypeHint: hint))
                continue
            }
            if dryRun {
                outcomes.append(AppleRevocationOutcome(accountID: accountID, outcome: .wouldRevoke,
                    message: "would revoke its \(hint.replacingOccurrences(of: "_", with: " ")) at \(OutboundURL.redacted(baseURL))/auth/revoke as client \(clientID)",
                    clientID: clientID, tokenTypeHint: hint))
                continue
            }
            let outcome = try send(token: token, hint: hint, clientID: clientID, accountID: accountID)
            try store.audit.append(store.db, actor: actor, action: "apple.token.revoke", subject: userID, details: [
                "account_id": .string(accountID), "client_id": .string(clientID), "token_type_hint": .string(hint),
                "outcome": .string(outcome.outcome.rawValue), "base_url": .string(baseURL),
            ], at: now)
            outcomes.append(outcome)
        }
        return outcomes
    }

    private func send(token: String, hint: String, clientID: String, accountID: String) throws -> AppleRevocationOutcome {
        func outcome(_ kind: AppleRevocationOutcome.Outcome, _ message: String) -> AppleRevocationOutcome {
            AppleRevocationOutcome(accountID: accountID, outcome: kind, message: message, clientID: clientID, tokenTypeHint: hint)
        }
        let secret: String
        let keyID: String
        do {
            let (key, privateKey) = try AppleKeyRing(store: store).activeSigningKey()
            secret = try ClientSecretMinter(keyID: key.keyID, teamID: key.teamID, privateKey: privateKey)
                .mint(clientID: clientID, lifetime: Self.secretLifetime, now: now)
            keyID = key.keyID.rawValue
        } catch let error as GatehouseError {
            return outcome(.notConfigured, "cannot mint a client secret: \(error.description)")
        }
        let url = OutboundURL.redacted(baseURL + "/auth/revoke")
        let client = AppleHTTPClient(baseURL: baseURL, timeout: timeout)
        let answer: AppleHTTPClient.Answer
        do {
            answer = try client.post("/auth/revoke", form: [("client_id", clientID), ("client_secret", secret), ("token", token), ("token_type_hint", hint)])
        } catch {
            switch error {
            case .timedOut: return outcome(.timedOut, "\(error.describe(url)); the token may or may not be revoked: run the command again (revoking twice is harmless)")
            case .unreachable: return outcome(.unreachable, "\(error.describe(url)); nothing was revoked: check the network or GATEHOUSE_APPLE_BASE_URL and run it again")
            case .connectionLost, .answerTooLarge: return outcome(.unreachable, "\(error.describe(url)); the token may or may not be revoked: run the command again")
            }
        }
        if answer.status == 200 {
            return outcome(.revoked, "revoked its \(hint.replacingOccurrences(of: "_", with: " ")) (client \(clientID))")
        }
        if answer.status >= 500 {
            return outcome(.serverError, "Apple answered HTTP \(answer.status); nothing is known to be revoked: run the command again later")
        }
        let error = (try? JSONValue.parseObject(answer.body))?["error"]?.stringValue
        switch error {
        case "invalid_client":
            return outcome(.invalidClient, "Apple answered invalid_client: \(invalidClientCause(secret: secret, clientID: clientID, keyID: keyID))")
        case "invalid_grant":
            return outcome(.invalidGrant, "Apple answered invalid_grant: the token is expired, already revoked, or was issued to another client id than \(clientID); nothing more can be revoked with it")
        case "invalid_request":
            return outcome(.invalidRequest, "Apple answered invalid_request: the request was missing or had a malformed parameter (client \(clientID), \(hint)); check GATEHOUSE_APPLE_BASE_URL points at Apple")
        default:
            return outcome(.rejected, "Apple answered HTTP \(answer.status)\(error.map { " \"\($0.prefix(40))\"" } ?? "") to the revocation; nothing is known to be revoked")
        }
    }

    /// The likely cause of `invalid_client`, as `apple secret inspect` names it: a fault of the secret when the
    /// inspector finds one, else what a freshly minted, well-formed secret can still be refused for.
    private func invalidClientCause(secret: String, clientID: String, keyID: String) -> String {
        if let inspection = try? ClientSecretInspector(store: store).inspect(secret, now: now),
           let first = inspection.findings.first(where: { $0.severity == .error }) {
            return first.message + (first.fix.map { "; fix: \($0)" } ?? "")
        }
        return "the secret is well formed (as `gatehouse apple secret inspect` checks), so Apple does not accept key \(keyID) or client id \(clientID): the key may be revoked in Apple's portal or not enabled for Sign in with Apple under this Team ID, or the token was issued to the other client id (Services ID vs bundle id)"
    }
}
