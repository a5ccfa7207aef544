import Foundation
import JOSE
import Storage

/// What a login or a refresh hands the console's client.
public struct TokenBundle: Sendable, Codable, Equatable {
    /// Sent as `Authorization: Bearer …` on every API request; short-lived.
    public let accessToken: String
    /// Exchanged once for a new bundle when the access token expires.
    public let refreshToken: String
    /// The access token's lifetime in seconds.
    public let expiresIn: Int64
    public let username: String
    public let role: AdminRole
}

/// A request's authenticated admin: who, with which role, under which login (token family).
public struct AdminSession: Sendable, Equatable {
    public let admin: Admin
    /// The login this access token belongs to.
    public let familyID: String
    public let expiresAt: Timestamp
    /// Whether the admin has a confirmed second factor.
    public let hasFactor: Bool
    /// When this login last checked a second factor (its second step, or a step-up); nil when it never did.
    public let factorCheckedAt: Timestamp?
    /// Whether the store requires every admin to have a second factor.
    public let mfaRequired: Bool

    public init(admin: Admin, familyID: String, expiresAt: Timestamp, hasFactor: Bool = false, factorCheckedAt: Timestamp? = nil,
                mfaRequired: Bool = false) {
        self.admin = admin
        self.familyID = familyID
        self.expiresAt = expiresAt
        self.hasFactor = hasFactor
        self.factorCheckedAt = factorCheckedAt
        self.mfaRequired = mfaRequired
    }

    /// The actor for changes made through the console: `console:<username>`.
    public var actor: Actor { admin.consoleActor }

    /// Whether a write that needs a fresh factor check may go ahead at `now`: always for an admin without a factor,
    /// else when the last check is at most `window` old.
    public func hasFreshFactorCheck(window: Seconds, now: Timestamp) -> Bool {
        guard hasFactor else { return true }
        guard let checked = factorCheckedAt else { return false }
        return checked <= now && now.milliseconds - checked.milliseconds <= window.value * 1000
    }
}

/// The first step of a login: signed in, or the second factor still to prove.
public enum LoginOutcome: Sendable, Equatable {
    case signedIn(TokenBundle)
    case secondFactor(SecondFactorChallenge)
}

/// What the password step of a login hands an admin with a second factor: a single-use token for the second step,
/// the methods they can use, and the WebAuthn challenge issued with it.
public struct SecondFactorChallenge: Sendable, Equatable, Encodable {
    public let mfaRequired = true
    /// Sent back with the factor to `completeSignIn`; single use, 5 minutes.
    public let mfaToken: String
    public let methods: [SecondFactorMethod]
    /// A random WebAuthn challenge (base64url), for the request options of a passkey login.
    public let challenge: String
    public let expiresAt: Timestamp
    /// The request options for a passkey, when `methods` offers one.
    public let webauthn: WebAuthnRequestOptions?

    enum CodingKeys: String, CodingKey { case mfaRequired, mfaToken, methods, expiresAt, webauthn }
}

/// What a step-up may use: the methods, and a passkey's request options (a fresh single-use challenge) when offered.
public struct StepUpOptions: Sendable, Equatable, Encodable {
    public let methods: [SecondFactorMethod]
    public let webauthn: WebAuthnRequestOptions?
}

/// The console's login and token lifecycle:
///
/// - `login` checks the password (throttled, every failure audited) and starts a token family: an
///   access token (15 minutes) and a single-use refresh token.
/// - `refresh` consumes the refresh token and issues a new pair in the same family. Presenting a
///   consumed refresh token again revokes the whole family (`token_reuse`): whoever holds either copy
///   has to log in again. One exception keeps a reload from logging an admin out: within `refreshGrace` of its
///   use, while the pair it was exchanged for is still unused (the answer never arrived), it is exchanged once more.
/// - `authenticate` checks an access token: unknown → `invalid_token`, family revoked →
///   `token_revoked`, past its lifetime → `token_expired`.
/// - `logout` revokes the family.
///
/// For an admin with a second factor, `signIn` answers a `SecondFactorChallenge` instead of tokens, and
/// `completeSignIn` exchanges its token and the factor for them; `stepUp` records a fresh factor check on a login.
///
/// Tokens are 256 random bits; the store keeps only their SHA-256. `now` is injected for tests.
public struct TokenService {
    public let store: Store
    public let lifetimes: TokenLifetimes
    public let throttle: LoginThrottle
    public let directory: AdminDirectory

    /// The actor recorded for failed logins (nobody is authenticated yet).
    public static let anonymousActor = Actor("console (login)")

    public init(store: Store, lifetimes: TokenLifetimes = .standard, throttle: LoginThrottle.Rules = .standard,
                hasher: PasswordHasher = .standard) {
        self.store = store
        self.lifetimes = lifetimes
        self.throttle = LoginThrottle(store: store, rules: throttle)
        self.directory = AdminDirectory(store: store, hasher: hasher)
    }

    static let accessPrefix = "gha_"
    static let refreshPrefix = "ghr_"
    static let mfaPrefix = "ghm_"
    /// How long the second step of a login may wait: 5 minutes.
    public static let mfaTokenLifetime: Int64 = 300
    /// Checks WebAuthn assertions at the second step and at step-up (nil: passkeys are not offered).
    public var webauthn: (any WebAuthnAssertionVerifier)?

    /// The second factors of this store's admins.
    public var factors: SecondFactors { SecondFactors(store: store, webauthn: webauthn) }

    // MARK: Login

    /// Exchanges a username and password for a new token family, for an admin without a second factor; one with a
    /// factor is refused `secondFactorRequired` (use `signIn`).
    public func login(username: String, password: AdminPassword, client: String, now: Timestamp) throws -> TokenBundle {
        guard case .signedIn(let bundle) = try signIn(username: username, password: password, client: client, now: now) else {
            throw LoginError.secondFactorRequired
        }
        return bundle
    }

    /// The password step of a login. `client` is the caller's address, for the per-client throttle (see
    /// ``LoginThrottle``); the CLI and tests may pass any fixed name. An admin without a second factor gets a new
    /// token family; one with a factor gets a `SecondFactorChallenge`, and the username's throttle is not cleared:
    /// only the second step clears it, so wrong codes add up across password logins.
    public func signIn(username: String, password: AdminPassword, client: String, now: Timestamp) throws -> LoginOutcome {
        // `sso set --password-login off`: the console signs people in only through the provider (the CLI on the host
        // stays the break-glass path).
        if try SSOConfiguration(store: store).passwordLoginDisabled() { throw SSOError(.passwordLoginDisabled) }
        let admission = try throttle.admit(username: username, client: client, now: now)
        guard case .admitted(let failures, let lockedUntil) = admission else { throw Self.throttled(admission, now: now) }
        // The slow part runs outside any transaction, so it never holds the write lock; the attempt is already counted.
        let (admin, refusal) = try directory.verify(username: username, password: password)
        guard let admin else {
            try recordFailure(username: username, refusal: refusal ?? .wrongPassword, failures: failures, lockedUntil: lockedUntil,
                              actor: Self.anonymousActor, action: "console.login.failed", now: now)
            throw LoginError.invalidCredentials
        }
        // Whether a factor is enrolled decides, not which methods can be used now: a passkey with no verifier plugged in
        // (and no recovery code left) leaves no method, and the login waits for one (or for `admins mfa reset`).
        if try factors.hasFactor(admin) {
            return .secondFactor(try issueChallenge(admin: admin, methods: try factors.methods(of: admin), client: client, now: now))
        }
        return .signedIn(try startFamily(admin: admin, client: client, method: nil, now: now))
    }

    /// The first step of a login by single sign-on, for an admin the provider has just vouched for (`SSOLogin`): the
    /// sign-on is the first factor, so an admin with a second factor of their own gets a `SecondFactorChallenge` as after
    /// a password, and one without gets a new token family.
    public func signIn(ssoAdmin admin: Admin, client: String, now: Timestamp) throws -> LoginOutcome {
        guard !admin.disabled else { throw LoginError.invalidCredentials }
        if try factors.hasFactor(admin) {
            return .secondFactor(try issueChallenge(admin: admin, methods: try factors.methods(of: admin), client: client, now: now))
        }
        return .signedIn(try startFamily(admin: admin, client: client, method: nil, now: now))
    }

    /// Starts a token family for `admin`, whose login is complete (by `method`, nil for a password alone).
    private func startFamily(admin: Admin, client: String, method: SecondFactorMethod?, now: Timestamp) throws -> TokenBundle {
        try store.db.write {
            try throttle.recordSuccess(username: admin.username, client: client, now: now)
            try store.db.execute("UPDATE gatehouse_admins SET last_login_at = ? WHERE id = ?", [now.iso8601, admin.id])
            // Housekeeping: tokens a day past their lifetime can no longer matter, nor challenges.
            try store.db.execute("DELETE FROM gatehouse_tokens WHERE expires_at < ?", [now.adding(seconds: -86_400).iso8601])
            try store.db.execute("DELETE FROM gatehouse_mfa_challenges WHERE expires_at < ?", [now.adding(seconds: -86_400).iso8601])
            let family = try SecureRandom.alphanumeric(22)
            let bundle = try issue(admin: admin, family: family, now: now, factorCheckedAt: method == nil ? nil : now)
            var details: [String: AuditValue] = ["family": .string(family), "role": .string(admin.role.rawValue)]
            if let method { details["factor"] = .string(method.rawValue) }
            if admin.source == .sso { details["source"] = .string(AdminSource.sso.rawValue) }
            try store.audit.append(store.db, actor: admin.consoleActor, action: "console.login", subject: admin.username, details: details, at: now)
            return bundle
        }
    }

    /// Records the second step's challenge (single use, `mfaTokenLifetime`), and takes back the password attempt's
    /// advance count without clearing the username's failures.
    private func issueChallenge(admin: Admin, methods: [SecondFactorMethod], client: String, now: Timestamp) throws -> SecondFactorChallenge {
        let token = Self.mfaPrefix + Self.base64url(try SecureRandom.bytes(32))
        let challenge = Self.base64url(try SecureRandom.bytes(32))
        let expires = now.adding(seconds: Self.mfaTokenLifetime)
        try store.db.write {
            try throttle.recordPartialSuccess(username: admin.username, client: client)
            try store.db.execute("INSERT INTO gatehouse_mfa_challenges (token_hash, purpose, admin_id, challenge, created_at, expires_at) VALUES (?, 'login', ?, ?, ?, ?)",
                                 [SHA256.hex(token), admin.id, challenge, now.iso8601, expires.iso8601])
            try store.audit.append(store.db, actor: admin.consoleActor, action: admin.source == .sso ? "console.login.sso" : "console.login.password", subject: admin.username,
                                   details: ["second_factor": .bool(true)], at: now)
        }
        let options = methods.contains(.webauthn)
            ? WebAuthnRequestOptions(challenge: challenge, rpId: webauthn?.relyingPartyID, credentials: try factors.webAuthnCredentials(of: admin),
                                     lifetime: Self.mfaTokenLifetime) : nil
        return SecondFactorChallenge(mfaToken: token, methods: methods, challenge: challenge, expiresAt: expires, webauthn: options)
    }

    /// The second step of a login: the `mfaToken` from `signIn` and the factor (a TOTP code, a recovery code, or a
    /// WebAuthn assertion as JSON) for a new token family. The token is single use and lasts 5 minutes: unknown,
    /// used or expired is `MFATokenError`. A wrong factor counts toward the username's login throttle as a wrong
    /// password does, and leaves the token usable until it expires.
    public func completeSignIn(mfaToken: String, method: SecondFactorMethod, answer: String, client: String, now: Timestamp) throws -> TokenBundle {
        guard let hash = Self.hash(mfaToken, prefix: Self.mfaPrefix) else { throw MFATokenError.invalid }
        let lookup = """
            SELECT c.challenge, c.expires_at, c.used_at, a.id, a.username, a.role, a.disabled, a.created_at, a.updated_at
            FROM gatehouse_mfa_challenges c JOIN gatehouse_admins a ON a.id = c.admin_id WHERE c.token_hash = ? AND c.purpose = 'login'
            """
        guard let row = try store.db.row(lookup, [hash]) else { throw MFATokenError.invalid }
        let admin = try Admin(row: row)
        // A login begun before its admin was disabled ends as a refused password would.
        guard !admin.disabled else { throw LoginError.invalidCredentials }
        guard row["used_at"].string == nil else { throw MFATokenError.used }
        guard let expires = row["expires_at"].string.flatMap(Timestamp.init(iso8601:)), expires > now else { throw MFATokenError.expired }
        try proveFactor(admin: admin, method: method, answer: answer, challenge: row["challenge"].string, client: client,
                        actor: Self.anonymousActor, action: "console.mfa.failed", now: now)
        // Used up only now, and only once: of two requests with one token, the second finds it used.
        let claimed: Bool = try store.db.write {
            guard let current = try store.db.row("SELECT used_at FROM gatehouse_mfa_challenges WHERE token_hash = ?", [hash]),
                  current["used_at"].string == nil else { return false }
            try store.db.execute("UPDATE gatehouse_mfa_challenges SET used_at = ? WHERE token_hash = ? AND used_at IS NULL", [now.iso8601, hash])
            return true
        }
        guard claimed else { throw MFATokenError.used }
        return try startFamily(admin: admin, client: client, method: method, now: now)
    }

    /// The methods the signed-in admin can step up with; with a passkey among them, a fresh single-use challenge.
    public func stepUpOptions(_ session: AdminSession, now: Timestamp) throws -> StepUpOptions {
        let methods = try factors.methods(of: session.admin)
        guard methods.contains(.webauthn) else { return StepUpOptions(methods: methods, webauthn: nil) }
        let challenge = try MFAChallenges(store: store).issue(.stepUp, for: session.admin, now: now)
        return StepUpOptions(methods: methods, webauthn: WebAuthnRequestOptions(challenge: challenge, rpId: webauthn?.relyingPartyID,
                                                                                credentials: try factors.webAuthnCredentials(of: session.admin),
                                                                                lifetime: MFAChallenges.lifetime))
    }

    /// Step-up: the signed-in admin proves a factor again; their login's last factor check becomes `now`. A passkey's
    /// assertion must sign a challenge `stepUpOptions` issued to them (used up here, whatever the outcome). A wrong
    /// factor is `LoginError.invalidSecondFactor` and counts toward the login throttle.
    public func stepUp(_ session: AdminSession, method: SecondFactorMethod, answer: String, client: String, now: Timestamp) throws {
        var challenge: String?
        if method == .webauthn, let webauthn, let named = try? webauthn.challenge(of: answer),
           try MFAChallenges(store: store).consume(.stepUp, named, for: session.admin, now: now) {
            challenge = named
        }
        try proveFactor(admin: session.admin, method: method, answer: answer, challenge: challenge, client: client,
                        actor: session.actor, action: "console.step_up.failed", now: now)
        try store.db.write {
            try throttle.recordSuccess(username: session.admin.username, client: client, now: now)
            try markFactorChecked(session, now: now)
            try store.audit.append(store.db, actor: session.actor, action: "console.step_up", subject: session.admin.username,
                                   details: ["family": .string(session.familyID), "factor": .string(method.rawValue)], at: now)
        }
    }

    /// Records that the session's login checked a factor at `now` (a step-up, or a factor confirmed in it).
    public func markFactorChecked(_ session: AdminSession, now: Timestamp) throws {
        try store.db.write {
            try store.db.execute("UPDATE gatehouse_tokens SET factor_checked_at = ? WHERE family_id = ?", [now.iso8601, session.familyID])
        }
    }

    /// Checks a factor under the login throttle: admitted and counted in advance like a password, a failure audited.
    private func proveFactor(admin: Admin, method: SecondFactorMethod, answer: String, challenge: String?, client: String,
                             actor: Actor, action: String, now: Timestamp) throws {
        let admission = try throttle.admit(username: admin.username, client: client, now: now)
        guard case .admitted(let failures, let lockedUntil) = admission else { throw Self.throttled(admission, now: now) }
        let methods = try factors.methods(of: admin)
        guard methods.contains(method), try factors.verify(admin, method: method, answer: answer, challenge: challenge, now: now) else {
            var details: [String: AuditValue] = ["refusal": .string(LoginRefusal.wrongFactor.rawValue), "method": .string(method.rawValue),
                                                 "failures": .int(Int64(failures))]
            if let lockedUntil { details["locked_until"] = .string(lockedUntil.iso8601) }
            _ = try store.db.write {
                try store.audit.append(store.db, actor: actor, action: action, subject: admin.username, details: details, at: now)
            }
            throw LoginError.invalidSecondFactor
        }
    }

    /// The throttled error for a refused admission.
    private static func throttled(_ admission: LoginThrottle.Admission, now: Timestamp) -> LoginError {
        guard case .refused(let until) = admission else { return .invalidCredentials }
        return .throttled(until: until, retryAfter: Seconds(max(1, (until.milliseconds - now.milliseconds + 999) / 1000)))
    }

    /// Audits a refused password. The subject is the username only when it names an admin: anything else
    /// typed there (often the password, typed into the wrong field) is recorded as a short digest.
    private func recordFailure(username: String, refusal: LoginRefusal, failures: Int, lockedUntil: Timestamp?, actor: Actor,
                               action: String, now: Timestamp) throws {
        var details: [String: AuditValue] = ["refusal": .string(refusal.rawValue), "failures": .int(Int64(failures))]
        if let lockedUntil { details["locked_until"] = .string(lockedUntil.iso8601) }
        let subject = refusal == .unknownUser ? LoginThrottle.unknownUserLabel(username, store: store) : AdminUsername.printable(username)
        _ = try store.db.write {
            try store.audit.append(store.db, actor: actor, action: action, subject: subject, details: details, at: now)
        }
    }

    // MARK: Refresh

    /// How long a just-consumed refresh token may be presented again while the pair it was exchanged for is unused
    /// (the answer was lost to a reload or a cut connection), before presenting it counts as reuse.
    public static let refreshGrace = Seconds(30)

    /// Consumes a refresh token and issues a new pair in its family.
    public func refresh(_ refreshToken: String, now: Timestamp) throws -> TokenBundle {
        guard let hash = Self.hash(refreshToken, prefix: Self.refreshPrefix) else { throw TokenError(.invalid) }
        enum Outcome { case issued(TokenBundle), refused(TokenFailure) }
        let outcome: Outcome = try store.db.write {
            guard let row = try store.db.row("""
                SELECT t.family_id, t.expires_at, t.consumed_at, t.revoked_at, t.factor_checked_at, a.id, a.username, a.role, a.disabled, a.created_at, a.updated_at, a.source
                FROM gatehouse_tokens t JOIN gatehouse_admins a ON a.id = t.admin_id WHERE t.token_hash = ? AND t.kind = 'refresh'
                """, [hash]) else { return .refused(.invalid) }
            let admin = try Admin(row: row)
            let family = try row.string("family_id")
            if row["revoked_at"].string != nil { return .refused(.revoked) }
            if let consumedAt = row["consumed_at"].string {
                // A page reloaded while its refresh was in flight lost the answer: it presents the same token again.
                // Within a short grace, and only while the token it was exchanged for is still unused, the lost
                // token is retired (consumed: whoever presents it later meets the reuse check) and a new pair issued.
                if let consumed = Timestamp(iso8601: consumedAt), now.milliseconds - consumed.milliseconds <= Self.refreshGrace.value * 1000,
                   !admin.disabled, admin.source != .sso,
                   let successor = try store.db.row("""
                       SELECT token_hash FROM gatehouse_tokens WHERE family_id = ? AND kind = 'refresh' AND issued_at = ?
                       AND consumed_at IS NULL AND revoked_at IS NULL
                       """, [family, consumedAt])?["token_hash"].string {
                    try store.db.execute("UPDATE gatehouse_tokens SET consumed_at = ? WHERE token_hash = ?", [now.iso8601, successor])
                    try store.audit.append(store.db, actor: admin.consoleActor, action: "console.token.reissue", subject: admin.username,
                                           details: ["family": .string(family)], at: now)
                    return .issued(try issue(admin: admin, family: family, now: now,
                                             factorCheckedAt: row["factor_checked_at"].string.flatMap(Timestamp.init(iso8601:))))
                }
                // Two parties hold this family's tokens: end it for both. Committed, then refused.
                try revoke(family: family, now: now)
                try store.audit.append(store.db, actor: admin.consoleActor, action: "console.token.reuse", subject: admin.username,
                                       details: ["family": .string(family)], at: now)
                return .refused(.reuse)
            }
            if admin.disabled {
                try revoke(family: family, now: now)
                return .refused(.revoked)
            }
            if admin.source == .sso {
                // A single sign-on lasts one access token: the next sign-in goes through the provider again, which
                // decides again whether this person is in a group and with which role (Sources/DECISIONS.md).
                try revoke(family: family, now: now)
                return .refused(.expired)
            }
            guard let expires = row["expires_at"].string.flatMap(Timestamp.init(iso8601:)), expires > now else { return .refused(.expired) }
            try store.db.execute("UPDATE gatehouse_tokens SET consumed_at = ? WHERE token_hash = ?", [now.iso8601, hash])
            return .issued(try issue(admin: admin, family: family, now: now,
                                     factorCheckedAt: row["factor_checked_at"].string.flatMap(Timestamp.init(iso8601:))))
        }
        switch outcome {
        case .issued(let bundle): return bundle
        case .refused(let failure): throw TokenError(failure)
        }
    }

    // MARK: Authenticate

    /// The session an access token belongs to, or the reason it is refused.
    public func authenticate(accessToken: String, now: Timestamp) throws -> AdminSession {
        let lookup = try Self.lookup(accessToken: accessToken)
        return try Self.session(from: try store.db.row(lookup.sql, lookup.arguments), now: now)
    }

    /// The statement that finds an access token's session (for `session(from:now:)`), or `invalid` for a string
    /// that is no access token at all. For a caller that sends it along with other reads (`SnapshotPrelude`).
    public static func lookup(accessToken: String) throws -> SQLStatement {
        guard let hash = Self.hash(accessToken, prefix: Self.accessPrefix) else { throw TokenError(.invalid) }
        return SQLStatement("""
            SELECT t.family_id, t.expires_at, t.revoked_at, t.factor_checked_at, a.id, a.username, a.role, a.disabled, a.created_at, a.updated_at, a.source,
                (SELECT count(*) FROM gatehouse_admin_factors f WHERE f.admin_id = a.id AND f.confirmed_at IS NOT NULL) AS factors,
                (SELECT value FROM gatehouse_console_settings WHERE name = 'mfa_required') AS mfa_required
            FROM gatehouse_tokens t JOIN gatehouse_admins a ON a.id = t.admin_id WHERE t.token_hash = ? AND t.kind = 'access'
            """, [hash])
    }

    /// The session `lookup(accessToken:)` found (its first row), or the reason the token is refused.
    public static func session(from row: Row?, now: Timestamp) throws -> AdminSession {
        guard let row else { throw TokenError(.invalid) }
        let admin = try Admin(row: row)
        if row["revoked_at"].string != nil || admin.disabled { throw TokenError(.revoked) }
        guard let expires = row["expires_at"].string.flatMap(Timestamp.init(iso8601:)), expires > now else { throw TokenError(.expired) }
        return AdminSession(admin: admin, familyID: try row.string("family_id"), expiresAt: expires, hasFactor: (row["factors"].int64 ?? 0) > 0,
                            factorCheckedAt: row["factor_checked_at"].string.flatMap(Timestamp.init(iso8601:)),
                            mfaRequired: row["mfa_required"].string == "on")
    }

    // MARK: Logout

    /// Ends a login: every token of its family is revoked.
    public func logout(_ session: AdminSession, now: Timestamp) throws {
        try store.db.write {
            try revoke(family: session.familyID, now: now)
            try store.audit.append(store.db, actor: session.actor, action: "console.logout", subject: session.admin.username,
                                   details: ["family": .string(session.familyID)], at: now)
        }
    }

    /// Checks the signed-in admin's password again, before an action that reveals or exports a secret.
    /// A wrong password counts as a failed login (throttled and audited) but does not end the session.
    ///
    /// An SSO admin has no password here: their proof is a sign-in through the provider at most `freshSignIn` ago (an
    /// SSO login is never refreshed, so its access token was issued at the sign-in); an older one is
    /// `SSOError.reauthenticationNeeded`, whatever password is sent.
    public func reauthenticate(_ session: AdminSession, password: AdminPassword, client: String, now: Timestamp,
                               freshSignIn: Seconds = Seconds(300)) throws {
        if session.admin.source == .sso {
            let signedInAt = session.expiresAt.milliseconds - lifetimes.access.value * 1000
            guard now.milliseconds - signedInAt <= freshSignIn.value * 1000 else { throw SSOError(.reauthenticationNeeded) }
            return
        }
        let username = session.admin.username
        let admission = try throttle.admit(username: username, client: client, now: now)
        guard case .admitted(let failures, let lockedUntil) = admission else { throw Self.throttled(admission, now: now) }
        let (admin, refusal) = try directory.verify(username: username, password: password)
        guard admin?.id == session.admin.id else {
            try recordFailure(username: username, refusal: refusal ?? .wrongPassword, failures: failures, lockedUntil: lockedUntil,
                              actor: session.actor, action: "console.reauth.failed", now: now)
            throw LoginError.invalidCredentials
        }
        try store.db.write { try throttle.recordSuccess(username: username, client: client, now: now) }
    }

    // MARK: Internals

    private func issue(admin: Admin, family: String, now: Timestamp, factorCheckedAt: Timestamp?) throws -> TokenBundle {
        let access = Self.accessPrefix + Self.base64url(try SecureRandom.bytes(32))
        let refresh = Self.refreshPrefix + Self.base64url(try SecureRandom.bytes(32))
        let insert = "INSERT INTO gatehouse_tokens (token_hash, kind, family_id, admin_id, issued_at, expires_at, factor_checked_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
        let checked = factorCheckedAt?.iso8601
        try store.db.execute(insert, [SHA256.hex(access), "access", family, admin.id, now.iso8601, now.adding(seconds: lifetimes.access.value).iso8601, checked])
        try store.db.execute(insert, [SHA256.hex(refresh), "refresh", family, admin.id, now.iso8601, now.adding(seconds: lifetimes.refresh.value).iso8601, checked])
        return TokenBundle(accessToken: access, refreshToken: refresh, expiresIn: lifetimes.access.value, username: admin.username, role: admin.role)
    }

    private func revoke(family: String, now: Timestamp) throws {
        try store.db.execute("UPDATE gatehouse_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL", [now.iso8601, family])
    }

    /// The stored hash of a well-formed token with `prefix`, or nil for anything else.
    static func hash(_ token: String, prefix: String) -> String? {
        guard token.utf8.count == prefix.utf8.count + 43, token.hasPrefix(prefix),
              token.utf8.dropFirst(prefix.utf8.count).allSatisfy({ isBase64URL($0) }) else { return nil }
        return SHA256.hex(token)
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2d || byte == 0x5f
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
