import Foundation
import HTTPClient
import JOSE
import Storage

/// A console sign-in through the OpenID provider, the authorization code flow of OpenID Connect Core §3.1 with PKCE
/// (RFC 7636) as RFC 9700 asks:
///
/// 1. `start` makes a random state, nonce and PKCE verifier, keeps them (the state hashed) with the SHA-256 of a random
///    browser binding the console sets as a cookie, and answers the provider's authorization URL;
/// 2. `finish` takes the provider's answer: the state must be one `start` made for this browser (single use, 10
///    minutes); the code is exchanged (client_secret_basic, else client_secret_post, with the verifier); the ID token is
///    checked (`IDTokenCheck`); the person's role comes from their groups; their admin is made or updated; and a
///    single-use ticket (60 s) is handed back for the console's page;
/// 3. `complete` exchanges the ticket for the login's first step (`TokenService.signIn(ssoAdmin:)`).
///
/// Every refusal is an `SSOError`, audited as `console.sso.refused` with its reason; nothing is made for a refused person.
public struct SSOLogin {
    public let store: Store
    public var cache: OIDCProviderCache

    public init(store: Store, cache: OIDCProviderCache = .shared) {
        self.store = store
        self.cache = cache
    }

    /// How long a started sign-in may take: 10 minutes.
    public static let stateLifetime: Int64 = 600
    /// How long the console's page has to exchange its ticket: 60 seconds.
    public static let ticketLifetime: Int64 = 60
    static let ticketPrefix = "ghs_"
    /// The audit actor of refusals (nobody is signed in yet).
    public static let anonymousActor = Actor("console (sso)")

    /// Where to send the browser, and the value of the cookie that binds the sign-in to it.
    public struct Started: Sendable {
        public let location: String
        public let browserBinding: String
    }

    /// Starts a sign-in. `fallbackRedirectURI` is the console's own callback at the address it was opened at, used
    /// when `sso set` named none.
    public func start(fallbackRedirectURI: String, now: Timestamp) throws -> Started {
        guard let settings = try SSOConfiguration(store: store).current() else { throw SSOError(.notConfigured) }
        let metadata = try cache.metadata(issuer: settings.issuer, now: now)
        let state = Base64URL.encode(try SecureRandom.bytes(32)), nonce = Base64URL.encode(try SecureRandom.bytes(32))
        let verifier = Base64URL.encode(try SecureRandom.bytes(32)), binding = Base64URL.encode(try SecureRandom.bytes(32))
        let redirectURI = settings.redirectURI ?? fallbackRedirectURI
        try store.db.write {
            // Housekeeping: an expired state or ticket is refused whether or not its row is kept, so none outlives its
            // lifetime (sign-ins begun and left, however many, stay at most 10 minutes' worth).
            try store.db.execute("DELETE FROM gatehouse_sso_logins WHERE expires_at < ?", [now.iso8601])
            try store.db.execute("""
                INSERT INTO gatehouse_sso_logins (token_hash, kind, browser_hash, nonce, code_verifier, redirect_uri, created_at, expires_at)
                VALUES (?, 'state', ?, ?, ?, ?, ?, ?)
                """, [SHA256.hex(state), SHA256.hex(binding), nonce, verifier, redirectURI, now.iso8601, now.adding(seconds: Self.stateLifetime).iso8601])
        }
        var scopes = ["openid", "email", "profile"]
        if metadata.scopesSupported.contains("groups") { scopes.append("groups") }
        let query = OIDCProviderCache.formEncode([
            ("response_type", "code"), ("client_id", settings.clientID), ("redirect_uri", redirectURI), ("scope", scopes.joined(separator: " ")),
            ("state", state), ("nonce", nonce), ("code_challenge", Base64URL.encode(SHA256.hash(Array(verifier.utf8)))),
            ("code_challenge_method", "S256"),
        ])
        let separator = metadata.authorizationEndpoint.contains("?") ? "&" : "?"
        return Started(location: metadata.authorizationEndpoint + separator + query, browserBinding: binding)
    }

    /// The provider's answer at the callback: `code` and `state` (or `error`), and the browser's binding cookie.
    /// Returns the single-use ticket for the console's page and the admin it signs in.
    public func finish(code: String?, state: String?, providerError: String?, browserBinding: String?, now: Timestamp) throws -> (ticket: String, admin: Admin) {
        var subject: String?
        do {
            return try finishChecked(code: code, state: state, providerError: providerError, browserBinding: browserBinding, now: now, subject: &subject)
        } catch let error as SSOError {
            _ = try? store.db.write {
                try store.audit.append(store.db, actor: Self.anonymousActor, action: "console.sso.refused", subject: subject,
                                       details: ["reason": .string(error.code), "message": .string(error.message)], at: now)
            }
            throw error
        }
    }

    private func finishChecked(code: String?, state: String?, providerError: String?, browserBinding: String?, now: Timestamp,
                               subject: inout String?) throws -> (ticket: String, admin: Admin) {
        guard let settings = try SSOConfiguration(store: store).current() else { throw SSOError(.notConfigured) }
        guard let state, !state.isEmpty, state.utf8.count <= 256, let browserBinding, !browserBinding.isEmpty else { throw SSOError(.stateMissing) }
        let stateHash = SHA256.hex(state)
        guard let row = try store.db.row("SELECT browser_hash, nonce, code_verifier, redirect_uri, expires_at, used_at FROM gatehouse_sso_logins WHERE token_hash = ? AND kind = 'state'",
                                         [stateHash]),
              row["browser_hash"].string == SHA256.hex(browserBinding) else { throw SSOError(.stateMismatch) }
        guard row["used_at"].string == nil else { throw SSOError(.stateUsed) }
        guard let expires = row["expires_at"].string.flatMap(Timestamp.init(iso8601:)), expires > now else { throw SSOError(.stateExpired) }
        // Used up now, whatever follows: of two requests with one state, the second finds it used.
        let claimed: Bool = try store.db.write {
            guard let current = try store.db.row("SELECT used_at FROM gatehouse_sso_logins WHERE token_hash = ?", [stateHash]),
                  current["used_at"].string == nil else { return false }
            try store.db.execute("UPDATE gatehouse_sso_logins SET used_at = ? WHERE token_hash = ? AND used_at IS NULL", [now.iso8601, stateHash])
            return true
        }
        guard claimed else { throw SSOError(.stateUsed) }
        if let providerError {
            throw SSOError(.providerError, "the identity provider did not sign you in (\(AdminUsername.printable(String(providerError.prefix(64)))))")
        }
        guard let code, !code.isEmpty, code.utf8.count <= 4096 else { throw SSOError(.codeRefused, "the identity provider's answer holds no code") }
        let nonce = try row.string("nonce"), verifier = try row.string("code_verifier"), redirectURI = try row.string("redirect_uri")

        let idToken = try exchange(code: code, verifier: verifier, redirectURI: redirectURI, settings: settings, now: now)
        let check = IDTokenCheck(issuer: settings.issuer, clientID: settings.clientID, nonce: nonce, now: now)
        let claims = try check.claims(of: idToken) { kid in try cache.key(issuer: settings.issuer, kid: kid, now: now) }

        guard let rawEmail = claims["email"]?.stringValue, !rawEmail.isEmpty else { throw SSOError(.emailMissing) }
        let email = rawEmail.lowercased()
        subject = AdminUsername.printable(email)
        if let domain = settings.allowedDomain {
            let verified = claims["email_verified"]?.boolValue == true || claims["email_verified"]?.stringValue == "true"
            guard verified else { throw SSOError(.emailNotVerified) }
            guard email.hasSuffix("@" + domain), email.split(separator: "@").count == 2 else { throw SSOError(.domainNotAllowed) }
        }
        guard AdminUsername.isValid(email) else {
            throw SSOError(.emailMissing, "your email cannot name a console admin (at most \(AdminUsername.maxLength) characters of a-z, 0-9, '.', '_', '-', '+', '@')")
        }
        let boundSubject = "\(settings.issuer)|\(claims["sub"]?.stringValue ?? "")"
        let groups = Self.groups(claims[settings.groupsClaim])
        guard let role = settings.role(for: groups) else {
            try endSessions(email: email, boundSubject: boundSubject, now: now)
            throw SSOError(.noMatchingGroup, "you (\(AdminUsername.printable(email))) are in none of the groups that give access to this console; "
                + "ask for one of: \([settings.adminGroup, settings.supportGroup, settings.viewerGroup].compactMap { $0 }.joined(separator: ", "))")
        }
        let admin = try admit(email: email, boundSubject: boundSubject, role: role, now: now)
        let ticket = Self.ticketPrefix + Base64URL.encode(try SecureRandom.bytes(32))
        try store.db.write {
            try store.db.execute("INSERT INTO gatehouse_sso_logins (token_hash, kind, admin_id, created_at, expires_at) VALUES (?, 'ticket', ?, ?, ?)",
                                 [SHA256.hex(ticket), admin.id, now.iso8601, now.adding(seconds: Self.ticketLifetime).iso8601])
        }
        return (ticket, admin)
    }

    /// Exchanges the code at the token endpoint and returns the ID token.
    private func exchange(code: String, verifier: String, redirectURI: String, settings: SSOSettings, now: Timestamp) throws -> String {
        let metadata = try cache.metadata(issuer: settings.issuer, now: now)
        let secret = try SSOConfiguration(store: store).clientSecret(for: settings)
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)]
        var headers: [String] = []
        let methods = metadata.tokenEndpointAuthMethods
        if methods.isEmpty || methods.contains("client_secret_basic") {
            let pair = OIDCProviderCache.formEscape(settings.clientID) + ":" + OIDCProviderCache.formEscape(String(decoding: secret.bytes, as: UTF8.self))
            headers.append("Authorization: Basic " + Base64.encode(Array(pair.utf8)))
        } else if methods.contains("client_secret_post") {
            form += [("client_id", settings.clientID), ("client_secret", String(decoding: secret.bytes, as: UTF8.self))]
        } else {
            throw SSOError(.providerUnavailable, "the provider's token endpoint takes neither client_secret_basic nor client_secret_post")
        }
        let answer = try OIDCProviderCache.post(metadata.tokenEndpoint, form: form, headers: headers)
        let body = try? JSONValue.parseObject(answer.body)
        guard answer.status == 200 else {
            let error = body?["error"]?.stringValue.map { " (\(AdminUsername.printable(String($0.prefix(64)))))" } ?? ""
            throw SSOError(.codeRefused, "the identity provider refused the sign-in's code: HTTP \(answer.status)\(error)")
        }
        guard let idToken = body?["id_token"]?.stringValue else { throw SSOError(.idTokenMalformed, "the token endpoint's answer holds no id_token") }
        return idToken
    }

    /// The groups of a claim: a list of strings, or one string.
    static func groups(_ claim: JSONValue?) -> [String] {
        if let one = claim?.stringValue { return [one] }
        return claim?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// Makes or updates the SSO admin `email`, bound to the provider's subject; refuses a name held by a local admin or
    /// by another subject, and a disabled admin.
    private func admit(email: String, boundSubject: String, role: AdminRole, now: Timestamp) throws -> Admin {
        try store.db.write {
            if let row = try store.db.row("SELECT \(Admin.columns), sso_subject FROM gatehouse_admins WHERE username = ?", [email]) {
                let admin = try Admin(row: row)
                guard admin.source == .sso, row["sso_subject"].string == boundSubject else { throw SSOError(.nameTaken) }
                guard !admin.disabled else { throw SSOError(.adminDisabled) }
                if admin.role != role {
                    try store.db.execute("UPDATE gatehouse_admins SET role = ?, updated_at = ? WHERE id = ?", [role.rawValue, now.iso8601, admin.id])
                    try store.audit.append(store.db, actor: Actor("sso:\(email)"), action: "admin.role", subject: email,
                                           details: ["from": .string(admin.role.rawValue), "to": .string(role.rawValue), "source": .string("sso")], at: now)
                }
            } else {
                try store.db.execute("""
                    INSERT INTO gatehouse_admins (username, password_hash, role, disabled, created_at, updated_at, source, sso_subject)
                    VALUES (?, '!sso', ?, 0, ?, ?, 'sso', ?)
                    """, [email, role.rawValue, now.iso8601, now.iso8601, boundSubject])
                try store.audit.append(store.db, actor: Actor("sso:\(email)"), action: "admin.add", subject: email,
                                       details: ["role": .string(role.rawValue), "source": .string("sso")], at: now)
            }
        }
        // Read back once written: D1 cannot answer a read of the rows the same write adds.
        guard let row = try store.db.row("SELECT \(Admin.columns) FROM gatehouse_admins WHERE username = ?", [email]) else {
            throw SSOError(.adminDisabled)
        }
        return try Admin(row: row)
    }

    /// Ends every console session of the SSO admin `email` (the provider no longer puts them in a group).
    private func endSessions(email: String, boundSubject: String, now: Timestamp) throws {
        try store.db.write {
            guard let row = try store.db.row("SELECT id, source, sso_subject FROM gatehouse_admins WHERE username = ?", [email]),
                  row["source"].string == "sso", row["sso_subject"].string == boundSubject, let id = row["id"].int64 else { return }
            try store.db.execute("UPDATE gatehouse_tokens SET revoked_at = ? WHERE admin_id = ? AND revoked_at IS NULL", [now.iso8601, id])
        }
    }

    /// Exchanges a ticket from `finish` for the login's first step: tokens, or the second factor to prove.
    public func complete(ticket: String, tokens: TokenService, client: String, now: Timestamp) throws -> LoginOutcome {
        guard let hash = TokenService.hash(ticket, prefix: Self.ticketPrefix) else { throw SSOError(.ticketInvalid) }
        guard let row = try store.db.row("SELECT admin_id, expires_at, used_at FROM gatehouse_sso_logins WHERE token_hash = ? AND kind = 'ticket'", [hash]),
              let adminID = row["admin_id"].int64 else { throw SSOError(.ticketInvalid) }
        guard row["used_at"].string == nil else { throw SSOError(.ticketUsed) }
        guard let expires = row["expires_at"].string.flatMap(Timestamp.init(iso8601:)), expires > now else { throw SSOError(.ticketExpired) }
        let claimed: Bool = try store.db.write {
            guard let current = try store.db.row("SELECT used_at FROM gatehouse_sso_logins WHERE token_hash = ?", [hash]),
                  current["used_at"].string == nil else { return false }
            try store.db.execute("UPDATE gatehouse_sso_logins SET used_at = ? WHERE token_hash = ? AND used_at IS NULL", [now.iso8601, hash])
            return true
        }
        guard claimed else { throw SSOError(.ticketUsed) }
        guard let adminRow = try store.db.row("SELECT \(Admin.columns) FROM gatehouse_admins WHERE id = ?", [adminID]) else { throw SSOError(.ticketInvalid) }
        let admin = try Admin(row: adminRow)
        guard admin.source == .sso, !admin.disabled else { throw SSOError(.adminDisabled) }
        return try tokens.signIn(ssoAdmin: admin, client: client, now: now)
    }
}
