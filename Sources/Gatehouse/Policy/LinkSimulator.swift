import Foundation
import Storage

/// Says what Better Auth 1.7.1 would answer to a link or sign-in attempt, against the real store and the current (or a
/// hypothetical) policy, in Better Auth's own order of checks, with its outcome, HTTP status and error code, and the source
/// line that decides (see `LinkRules`). Both ways a client reaches Better Auth are followed (`AuthFlow`):
///
/// - linkSocial with an id token (api/routes/account.ts `linkSocialAccount`): id-token support → email present → account
///   already this user's (tokens updated) or another's (409 `SOCIAL_ACCOUNT_ALREADY_LINKED`) → untrusted and unverified, or
///   linking disabled (401 `LINKING_NOT_ALLOWED`) → different emails without `allowDifferentEmails` (401
///   `LINKING_DIFFERENT_EMAILS_NOT_ALLOWED`) → linked.
/// - linkSocial by redirect (the link branch of api/routes/callback.ts `callbackOAuth`): untrusted and unverified, or linking
///   disabled (`?error=unable_to_link_account`) → different emails (`?error=email_does_not_match`) → account another
///   user's (`?error=account_already_linked_to_different_user`) → linked; another order, and the instance-wide
///   `allowDifferentEmails` of the instance that serves the callback.
/// - sign-in, by id token (api/routes/sign-in.ts `signInSocial`) or by redirect: email present (`USER_EMAIL_NOT_FOUND` /
///   `?error=email_not_found`), then oauth2/link-account.ts `handleOAuthUserInfo`: the account's owner, an orphan, the
///   user with the exact email (implicit linking and its refusals), sign-up rules, `requireEmailVerification`.
///
/// Emails are compared as Better Auth compares them (`JavaScriptString`); issuers come from `BetterAuthProviders`.
public struct LinkSimulator {
    public let store: Store

    public init(store: Store) { self.store = store }

    /// Domains of Apple's Hide My Email relay addresses.
    public static let relayDomains = ["privaterelay.appleid.com", "private.icloud.com"]

    /// Whether an address is an Apple private-relay (Hide My Email) address.
    public static func isRelayAddress(_ email: String) -> Bool {
        let lower = JavaScriptString.toLowerCase(email)
        return relayDomains.contains { lower.hasSuffix("@" + $0) }
    }

    /// Simulates `linkSocial` by the signed-in user `userID`.
    public func simulateLink(user userID: BetterAuthUserID, attempt: LinkAttempt,
                             overrides: [PolicyKey: PolicyValue] = [:], now: Timestamp) throws -> LinkDecision {
        try Self.check(attempt)
        return try store.db.read {
            let (policy, version) = try self.policy(overrides: overrides, now: now)
            guard let user = try findUser(id: userID) else {
                throw GatehouseError.notFound("no user \(userID.rawValue.prefix(64)) in \(store.path)",
                                              fix: "pass the Better Auth user id (user.id) of the signed-in user")
            }
            let facts = try self.facts(attempt, user: user)
            var decision = LinkRules.link(facts, policy: policy)
            decision.notes += LinkRules.spellingNotes(attempt, policy)
            decision.policyVersion = version
            decision.hypothetical = overrides.sorted { $0.key < $1.key }.map { "\($0.key.rawValue)=\($0.value.json)" }
            if Self.isRelayAddress(user.email), !JavaScriptString.sameEmail(user.email, attempt.email ?? "") {
                let flipped = policy.setting(.linkSocialAllowDifferentEmails, .bool(!policy.linkSocialAllowDifferentEmails))
                let other = LinkRules.link(facts, policy: flipped)
                decision.hideMyEmail = HideMyEmailNote(current: decision, flipped: other, switchValue: !policy.linkSocialAllowDifferentEmails)
            }
            return decision
        }
    }

    /// Simulates a sign-in (`signIn.social` with an id token, or the redirect callback) by someone not signed in.
    public func simulateSignIn(attempt: LinkAttempt, overrides: [PolicyKey: PolicyValue] = [:], now: Timestamp) throws -> LinkDecision {
        try Self.check(attempt)
        return try store.db.read {
            let (policy, version) = try self.policy(overrides: overrides, now: now)
            let emailUser = try attempt.email.flatMap { $0.isEmpty ? nil : try findUser(email: $0) }
            let facts = try self.facts(attempt, user: emailUser)
            var decision = LinkRules.signIn(facts, policy: policy)
            decision.notes += LinkRules.spellingNotes(attempt, policy)
            decision.policyVersion = version
            decision.hypothetical = overrides.sorted { $0.key < $1.key }.map { "\($0.key.rawValue)=\($0.value.json)" }
            if Self.isRelayAddress(attempt.email ?? "") || decision.outcome == .newUser {
                let flipped = policy.setting(.linkSocialAllowDifferentEmails, .bool(!policy.linkSocialAllowDifferentEmails))
                decision.hideMyEmail = HideMyEmailNote(current: decision, flipped: LinkRules.signIn(facts, policy: flipped),
                                                       switchValue: !policy.linkSocialAllowDifferentEmails)
            }
            if policy.autoLinkAllowDifferentEmails {
                decision.notes.append("autoLink.allowDifferentEmails is true; sign-in never reads allowDifferentEmails (Better Auth 1.7.1 reads it only in linkSocial: account.ts:388 and the link branch of callback.ts:299)")
            }
            return decision
        }
    }

    static func check(_ attempt: LinkAttempt) throws {
        guard PolicyKey.isProviderID(attempt.provider) else {
            throw GatehouseError.invalid("\"\(OperatorText.visible(String(attempt.provider.prefix(60)), keepLineBreaks: false))\" is not a provider id",
                                         fix: PolicyKey.providerIDRule + ": \(field: .provider) google, \(field: .provider) apple")
        }
        if let email = attempt.email, !email.isEmpty {
            guard email.count <= 320, let at = email.firstIndex(of: "@"), at != email.startIndex, email.index(after: at) != email.endIndex,
                  !email.contains(where: { $0.isWhitespace }) else {
                throw GatehouseError.invalid("\"\(email.prefix(60))\" is not an email address",
                                             fix: "pass the email the provider reports, e.g. \(field: .email) ana@gmail.com, or \(field: .noEmail) when it reports none")
            }
        }
        if let id = attempt.accountID {
            guard !id.isEmpty, id.count <= 255 else {
                throw GatehouseError.invalid("the account id must be 1–255 characters", fix: "pass the provider's sub, e.g. \(field: .accountId) 001234.abcdef.0001")
            }
        }
        if let issuer = attempt.issuer {
            guard !issuer.trimmingCharacters(in: .whitespaces).isEmpty, issuer.count <= 255, issuer != "undefined", issuer != "null" else {
                throw GatehouseError.invalid("the issuer must be 1–255 characters (Better Auth refuses an empty, \"undefined\" or \"null\" issuer)",
                                             fix: "e.g. \(field: .issuer) https://login.microsoftonline.com/<tenant>/v2.0")
            }
        }
    }

    private func policy(overrides: [PolicyKey: PolicyValue], now: Timestamp) throws -> (LinkingPolicy, Int) {
        let snapshot = try PolicyState.load(store.db).snapshot(now: now)
        var policy = snapshot.policy
        for (key, value) in overrides {
            try key.check(value)
            policy = policy.setting(key, value)
        }
        return (policy, snapshot.version)
    }

    // MARK: Reading the store through the schema map

    private func userColumns(_ alias: String? = nil) -> String {
        let u = store.schema.user
        let prefix = alias.map { $0 + "." } ?? ""
        return "\(prefix)\(u.col(.id)) AS id, \(prefix)\(u.col(.email)) AS email, \(prefix)\(u.col(.emailVerified)) AS \"emailVerified\""
    }

    private func findUser(id: BetterAuthUserID) throws -> SimulatedUser? {
        let u = store.schema.user
        return try store.db.row("SELECT \(userColumns()) FROM \(u.sql) WHERE \(u.col(.id)) = ?", [id.rawValue]).map(SimulatedUser.init(row:))
    }

    /// `findUserByEmail(userInfo.email.toLowerCase())`, which lowercases again and matches exactly: SQLite's `=` on
    /// text compares bytes, as JavaScript's `===` compares code units.
    private func findUser(email: String) throws -> SimulatedUser? {
        let u = store.schema.user
        let lowered = JavaScriptString.toLowerCase(JavaScriptString.toLowerCase(email))
        return try store.db.row("SELECT \(userColumns()) FROM \(u.sql) WHERE \(u.col(.email)) = ?", [lowered]).map(SimulatedUser.init(row:))
    }

    /// The account lookup Better Auth makes, `(issuer, accountId)` with the issuer it would write (`BetterAuthProviders`),
    /// or `(providerId, accountId)` on a store without `issuer`.
    private func facts(_ attempt: LinkAttempt, user: SimulatedUser?) throws -> LinkFacts {
        guard let accountID = attempt.accountID else {
            return LinkFacts(attempt: attempt, user: user, owner: .none, lookup: "no \(field: .accountId): taken to be an account the store has never seen")
        }
        let a = store.schema.account
        guard store.schema.hasIssuer else {
            let owner = try findAccount(where: "a.\(a.col(.providerId)) = ? AND a.\(a.col(.accountId)) = ?", [attempt.provider, accountID])
            return LinkFacts(attempt: attempt, user: user, owner: owner.first ?? .none,
                             lookup: "account (providerId, accountId) = (\(attempt.provider), \(accountID)) (a store without account.issuer)")
        }
        if let issuer = attempt.issuer ?? BetterAuthProviders.issuer(for: attempt.provider).value {
            let owner = try findAccount(where: "a.\(a.col(.issuer)) = ? AND a.\(a.col(.accountId)) = ?", [issuer, accountID])
            return LinkFacts(attempt: attempt, user: user, owner: owner.first ?? .none,
                             lookup: "account (issuer, accountId) = (\(issuer), \(accountID))" + (attempt.issuer == nil ? "" : " (\(field: .issuer))"))
        }
        // The issuer depends on the app's configuration or on the token: take it from the rows the provider wrote.
        guard case .dependsOn(let what) = BetterAuthProviders.issuer(for: attempt.provider) else { fatalError("unreachable") }
        let rows = try findAccount(where: "a.\(a.col(.providerId)) = ? AND a.\(a.col(.accountId)) = ?", [attempt.provider, accountID], withIssuer: true)
        let issuers = rows.compactMap(\.issuer)
        var facts = LinkFacts(attempt: attempt, user: user, owner: rows.first?.owner ?? .none,
                              lookup: rows.isEmpty
                                ? "no account of provider \(attempt.provider) has accountId \(accountID) under any issuer (its issuer is \(what))"
                                : "account (issuer, accountId) = (\(issuers[0]), \(accountID)): the issuer taken from the stored \(attempt.provider) row (it is \(what))")
        facts.lookupDependsOn = [rows.count > 1
            ? "which issuer the token carries: \(rows.count) stored \(attempt.provider) accounts have accountId \(accountID) (\(issuers.joined(separator: ", "))); pass \(field: .issuer)"
            : "the issuer Better Auth resolves for \(attempt.provider) (\(what)); pass \(field: .issuer) to look up exactly that one"]
        return facts
    }

    private struct FoundAccount {
        let owner: AccountOwnership
        let issuer: String?
    }

    private func findAccount(where condition: String, _ values: [SQLBindable]) throws -> [AccountOwnership] {
        try findAccount(where: condition, values, withIssuer: false).map(\.owner)
    }

    private func findAccount(where condition: String, _ values: [SQLBindable], withIssuer: Bool) throws -> [FoundAccount] {
        let a = store.schema.account, u = store.schema.user
        let issuer = withIssuer && store.schema.hasIssuer ? ", a.\(a.col(.issuer)) AS issuer" : ""
        let sql = """
            SELECT a.\(a.col(.userId)) AS owner, a.\(a.col(.providerId)) AS \"providerId\"\(issuer), \(userColumns("u"))
            FROM \(a.sql) AS a LEFT JOIN \(u.sql) AS u ON u.\(u.col(.id)) = a.\(a.col(.userId))
            WHERE \(condition) LIMIT 8
            """
        return try store.db.rows(sql, values).map { row in
            let owner: AccountOwnership = row["id"].isNull ? .orphaned(userID: row["owner"].string ?? "")
                : .owned(try SimulatedUser(row: row), providerID: row["providerId"].string ?? "")
            return FoundAccount(owner: owner, issuer: withIssuer ? row["issuer"].string : nil)
        }
    }
}

/// A user row as the simulator needs it.
struct SimulatedUser: Sendable {
    let id: String
    let email: String
    let emailVerified: Bool

    init(id: String, email: String, emailVerified: Bool) {
        self.id = id
        self.email = email
        self.emailVerified = emailVerified
    }

    init(row: Row) throws {
        self.init(id: try row.string("id"), email: try row.string("email"), emailVerified: row.bool("emailVerified"))
    }
}

/// Who owns the provider account the attempt presents.
enum AccountOwnership: Sendable {
    case none
    case owned(SimulatedUser, providerID: String)
    /// The account row references a user that does not exist.
    case orphaned(userID: String)
}

