import Foundation
import Storage

/// What a provider hands Better Auth in an idToken sign-in or link: the provider, the email it
/// reports, whether it says the email is verified, and (optionally) the provider's account id (`sub`).
public struct LinkAttempt: Sendable, Codable {
    public var provider: String
    public var email: String
    public var emailVerified: Bool
    /// The provider's subject. Without it the account is taken to be one the store has never seen.
    public var accountID: String?

    public init(provider: String, email: String, emailVerified: Bool, accountID: String? = nil) {
        self.provider = provider
        self.email = email
        self.emailVerified = emailVerified
        self.accountID = accountID
    }
}

/// Says what Better Auth 1.7 would answer to a link or sign-in attempt, against the real store and the
/// current (or a hypothetical) policy, in Better Auth's own order of checks and with its error codes.
///
/// Explicit linking (`POST /link-social` with an idToken, the user signed in) checks, in order:
/// the account `(issuer, accountId)` is already this user's → tokens updated; it is another user's →
/// `SOCIAL_ACCOUNT_ALREADY_LINKED` (409); the provider is untrusted and the email unverified, or linking
/// is disabled → `LINKING_NOT_ALLOWED` (401); the email differs (case-insensitively) from the user's and
/// `linkSocial.allowDifferentEmails` is false → `LINKING_DIFFERENT_EMAILS_NOT_ALLOWED` (401); else linked.
///
/// Implicit sign-in (`POST /sign-in/social` with an idToken) looks the account up by `(issuer, accountId)`
/// (→ signs in as its owner), then the user by the email (none → a new user). A user with that email but
/// without this account is linked only if the provider is trusted or the email verified, the user's own
/// email is verified (while `requireLocalEmailVerified`), and linking and implicit linking are enabled;
/// otherwise `OAUTH_LINK_ERROR` "account not linked" (401). Implicit sign-in never compares two different
/// emails, so no `allowDifferentEmails` value changes it.
public struct LinkSimulator {
    public let store: Store

    public init(store: Store) { self.store = store }

    /// Domains of Apple's Hide My Email relay addresses.
    public static let relayDomains = ["privaterelay.appleid.com", "private.icloud.com"]

    /// Whether an address is an Apple private-relay (Hide My Email) address.
    public static func isRelayAddress(_ email: String) -> Bool {
        let lower = email.lowercased()
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
            let owner = try findAccount(attempt)
            let facts = LinkFacts(attempt: attempt, user: user, owner: owner, lookup: lookupDescription(attempt))
            var decision = LinkRules.link(facts, policy: policy)
            decision.policyVersion = version
            decision.hypothetical = overrides.sorted { $0.key < $1.key }.map { "\($0.key.rawValue)=\($0.value.json)" }
            if Self.isRelayAddress(user.email) && user.email.lowercased() != attempt.email.lowercased() {
                let flipped = policy.setting(.linkSocialAllowDifferentEmails, .bool(!policy.linkSocialAllowDifferentEmails))
                let other = LinkRules.link(facts, policy: flipped)
                decision.hideMyEmail = HideMyEmailNote(current: decision, flipped: other, switchValue: !policy.linkSocialAllowDifferentEmails)
            }
            return decision
        }
    }

    /// Simulates an idToken sign-in (`signIn.social`) by someone not signed in.
    public func simulateSignIn(attempt: LinkAttempt, overrides: [PolicyKey: PolicyValue] = [:], now: Timestamp) throws -> LinkDecision {
        try Self.check(attempt)
        return try store.db.read {
            let (policy, version) = try self.policy(overrides: overrides, now: now)
            let owner = try findAccount(attempt)
            let emailUser = try findUser(email: attempt.email)
            let facts = LinkFacts(attempt: attempt, user: emailUser, owner: owner, lookup: lookupDescription(attempt))
            var decision = LinkRules.signIn(facts, policy: policy)
            decision.policyVersion = version
            decision.hypothetical = overrides.sorted { $0.key < $1.key }.map { "\($0.key.rawValue)=\($0.value.json)" }
            if Self.isRelayAddress(attempt.email) || decision.outcome == .newUser {
                let flipped = policy.setting(.linkSocialAllowDifferentEmails, .bool(!policy.linkSocialAllowDifferentEmails))
                decision.hideMyEmail = HideMyEmailNote(current: decision, flipped: LinkRules.signIn(facts, policy: flipped),
                                                       switchValue: !policy.linkSocialAllowDifferentEmails)
            }
            if policy.autoLinkAllowDifferentEmails {
                decision.notes.append("autoLink.allowDifferentEmails is true; implicit sign-in never consults it (it finds users by the email itself), but every link the runtime does not scope to linkSocial does")
            }
            return decision
        }
    }

    static func check(_ attempt: LinkAttempt) throws {
        guard PolicyKey.isProviderID(attempt.provider) else {
            throw GatehouseError.invalid("\"\(attempt.provider.prefix(60))\" is not a provider id", fix: "e.g. --provider google or --provider apple")
        }
        let email = attempt.email
        guard email.count <= 320, let at = email.firstIndex(of: "@"), at != email.startIndex, email.index(after: at) != email.endIndex,
              !email.contains(where: { $0.isWhitespace }) else {
            throw GatehouseError.invalid("\"\(email.prefix(60))\" is not an email address", fix: "pass the email the provider reports, e.g. --email ana@gmail.com")
        }
        if let id = attempt.accountID {
            guard !id.isEmpty, id.count <= 255 else {
                throw GatehouseError.invalid("the account id must be 1–255 characters", fix: "pass the provider's sub, e.g. --account-id 001234.abcdef.0001")
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
        return "\(prefix)\(u.col(.id)) AS id, \(prefix)\(u.col(.email)) AS email, \(prefix)\(u.col(.emailVerified)) AS emailVerified"
    }

    private func findUser(id: BetterAuthUserID) throws -> SimulatedUser? {
        let u = store.schema.user
        return try store.db.row("SELECT \(userColumns()) FROM \(u.sql) WHERE \(u.col(.id)) = ?", [id.rawValue]).map(SimulatedUser.init(row:))
    }

    /// Better Auth lowercases the provider's email and looks it up as is.
    private func findUser(email: String) throws -> SimulatedUser? {
        let u = store.schema.user
        return try store.db.row("SELECT \(userColumns()) FROM \(u.sql) WHERE \(u.col(.email)) = ?", [email.lowercased()]).map(SimulatedUser.init(row:))
    }

    /// The account's owner by `(issuer, accountId)`, or `(providerId, accountId)` on a store without `issuer`.
    private func findAccount(_ attempt: LinkAttempt) throws -> AccountOwnership {
        guard let accountID = attempt.accountID else { return .none }
        let a = store.schema.account, u = store.schema.user
        let keyColumn = store.schema.hasIssuer ? a.col(.issuer) : a.col(.providerId)
        let keyValue = store.schema.hasIssuer ? Issuer.forProvider(attempt.provider) : attempt.provider
        let sql = """
            SELECT a.\(a.col(.userId)) AS owner, a.\(a.col(.providerId)) AS providerId, \(userColumns("u"))
            FROM \(a.sql) AS a LEFT JOIN \(u.sql) AS u ON u.\(u.col(.id)) = a.\(a.col(.userId))
            WHERE a.\(keyColumn) = ? AND a.\(a.col(.accountId)) = ? LIMIT 1
            """
        guard let row = try store.db.row(sql, [keyValue, accountID]) else { return .none }
        if row["id"].isNull { return .orphaned(userID: row["owner"].string ?? "") }
        return .owned(try SimulatedUser(row: row), providerID: row["providerId"].string ?? "")
    }

    private func lookupDescription(_ attempt: LinkAttempt) -> String {
        guard let accountID = attempt.accountID else { return "no --account-id: taken to be an account the store has never seen" }
        return store.schema.hasIssuer
            ? "account (issuer, accountId) = (\(Issuer.forProvider(attempt.provider)), \(accountID))"
            : "account (providerId, accountId) = (\(attempt.provider), \(accountID)) (a store without account.issuer)"
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

/// Everything the rules read from the store.
struct LinkFacts: Sendable {
    let attempt: LinkAttempt
    /// For a link, the signed-in user; for a sign-in, the user with the attempt's email (if any).
    let user: SimulatedUser?
    let owner: AccountOwnership
    let lookup: String
}

/// Better Auth 1.7's checks, as pure functions of the facts and a policy.
enum LinkRules {
    static func link(_ facts: LinkFacts, policy: LinkingPolicy) -> LinkDecision {
        let attempt = facts.attempt
        let user = facts.user!
        var checks: [LinkDecision.Check] = []
        func decide(_ rule: String, _ outcome: LinkDecision.Outcome, _ status: Int, code: String? = nil, message: String? = nil, _ why: String) -> LinkDecision {
            LinkDecision(flow: .link, outcome: outcome, httpStatus: status, errorCode: code, errorMessage: message, rule: rule,
                         explanation: why, userID: user.id, checks: checks, accountLookup: facts.lookup)
        }

        switch facts.owner {
        case .owned(let owner, _) where owner.id == user.id:
            checks.append(.init(rule: "linkSocial.accountAlreadyThisUsers", question: "is the account already this user's?", answer: "yes", decisive: true))
            return decide("linkSocial.accountAlreadyThisUsers", .tokensUpdated, 200, "the account is already linked to this user: Better Auth updates its tokens and answers ok")
        case .owned(let owner, _):
            checks.append(.init(rule: "linkSocial.accountOwnedByAnotherUser", question: "is the account another user's?", answer: "yes, user \(owner.id)", decisive: true))
            return decide("linkSocial.accountOwnedByAnotherUser", .error, 409, code: "SOCIAL_ACCOUNT_ALREADY_LINKED", message: "Social account already linked",
                          "the account belongs to user \(owner.id); linkSocial never moves an account between users (a support merge does)")
        case .orphaned(let owner):
            checks.append(.init(rule: "linkSocial.accountOwnedByAnotherUser", question: "is the account another user's?", answer: "it references a missing user \(owner)", decisive: true))
            return decide("linkSocial.accountOwnedByAnotherUser", .error, 409, code: "SOCIAL_ACCOUNT_ALREADY_LINKED", message: "Social account already linked",
                          "an account row with this key exists for the missing user \(owner) (an orphan): repair or delete it first")
        case .none:
            checks.append(.init(rule: "linkSocial.accountAlreadyLinked", question: "is the account already linked to anyone?", answer: "no", decisive: false))
        }

        let trusted = policy.trustedProviders.contains(attempt.provider)
        let untrustedUnverified = !trusted && !attempt.emailVerified
        checks.append(.init(rule: "linkSocial.linkingNotAllowed", question: "provider untrusted and email unverified, or accountLinking.enabled false?",
                            answer: untrustedUnverified ? "provider \(attempt.provider) is not trusted and the email is unverified"
                                : !policy.enabled ? "accountLinking.enabled is false" : "no", decisive: untrustedUnverified || !policy.enabled))
        if untrustedUnverified || !policy.enabled {
            return decide("linkSocial.linkingNotAllowed", .error, 401, code: "LINKING_NOT_ALLOWED", message: "Account not linked - linking not allowed",
                          untrustedUnverified ? "\(attempt.provider) is not in accountLinking.trustedProviders and it reports the email unverified"
                              : "accountLinking.enabled is false")
        }

        let differs = attempt.email.lowercased() != user.email.lowercased()
        let blocked = differs && !policy.linkSocialAllowDifferentEmails
        checks.append(.init(rule: "linkSocial.differentEmails", question: "email differs from the user's and linkSocial.allowDifferentEmails false?",
                            answer: differs ? "\(attempt.email.lowercased()) ≠ \(user.email.lowercased()); linkSocial.allowDifferentEmails is \(policy.linkSocialAllowDifferentEmails)" : "no, the emails match",
                            decisive: blocked))
        if blocked {
            return decide("linkSocial.differentEmails", .error, 401, code: "LINKING_DIFFERENT_EMAILS_NOT_ALLOWED", message: "Account not linked - different emails not allowed",
                          "the provider's email \(attempt.email.lowercased()) is not the user's \(user.email.lowercased()) and linkSocial.allowDifferentEmails is false")
        }
        checks.append(.init(rule: "linkSocial.linked", question: "create the account on this user", answer: "yes", decisive: true))
        return decide("linkSocial.linked", .linked, 200, differs
                      ? "linked: the emails differ but linkSocial.allowDifferentEmails is true; the user keeps the email \(user.email.lowercased())"
                      : "linked: the emails match")
    }

    static func signIn(_ facts: LinkFacts, policy: LinkingPolicy) -> LinkDecision {
        let attempt = facts.attempt
        var checks: [LinkDecision.Check] = []
        func decide(_ rule: String, _ outcome: LinkDecision.Outcome, _ status: Int, user: String?, code: String? = nil, message: String? = nil, _ why: String) -> LinkDecision {
            LinkDecision(flow: .signIn, outcome: outcome, httpStatus: status, errorCode: code, errorMessage: message, rule: rule,
                         explanation: why, userID: user, checks: checks, accountLookup: facts.lookup)
        }

        switch facts.owner {
        case .owned(let owner, _):
            checks.append(.init(rule: "signIn.accountOwner", question: "does a user own the account?", answer: "yes, user \(owner.id)", decisive: true))
            return decide("signIn.accountOwner", .signedIn, 200, user: owner.id, "the account is user \(owner.id)'s: signs in as that user (tokens refreshed); the email is not consulted")
        case .orphaned(let owner):
            checks.append(.init(rule: "signIn.orphanedAccount", question: "does a user own the account?", answer: "it references a missing user \(owner)", decisive: true))
            return decide("signIn.orphanedAccount", .error, 401, user: nil, code: "OAUTH_LINK_ERROR", message: "unable to link account",
                          "the account row references the missing user \(owner): Better Auth refuses until it is repaired")
        case .none:
            checks.append(.init(rule: "signIn.accountOwner", question: "does a user own the account?", answer: "no", decisive: false))
        }

        guard let user = facts.user else {
            checks.append(.init(rule: "signIn.newUser", question: "is there a user with the email \(attempt.email.lowercased())?", answer: "no", decisive: true))
            return decide("signIn.newUser", .newUser, 200, user: nil, "no user has the email \(attempt.email.lowercased()): Better Auth creates a new user with this account")
        }
        checks.append(.init(rule: "signIn.emailMatch", question: "is there a user with the email \(attempt.email.lowercased())?", answer: "yes, user \(user.id)", decisive: false))

        let trusted = policy.trustedProviders.contains(attempt.provider)
        let refusals: [(String, Bool, String)] = [
            ("signIn.notLinked.untrustedUnverified", !trusted && !attempt.emailVerified,
             "\(attempt.provider) is not in accountLinking.trustedProviders and it reports the email unverified"),
            ("signIn.notLinked.localEmailUnverified", policy.requireLocalEmailVerified && !user.emailVerified,
             "user \(user.id)'s own email is unverified and accountLinking.requireLocalEmailVerified is true"),
            ("signIn.notLinked.linkingDisabled", !policy.enabled, "accountLinking.enabled is false"),
            ("signIn.notLinked.implicitLinkingDisabled", policy.disableImplicitLinking, "accountLinking.disableImplicitLinking is true"),
        ]
        let reasons = refusals.filter(\.1)
        for (rule, hit, why) in refusals {
            checks.append(.init(rule: rule, question: rule.replacingOccurrences(of: "signIn.notLinked.", with: "refuse: ") + "?", answer: hit ? why : "no", decisive: hit))
        }
        if let first = reasons.first {
            return decide(first.0, .error, 401, user: user.id, code: "OAUTH_LINK_ERROR", message: "account not linked",
                          "a user with this email exists but the account is not linked: " + reasons.map(\.2).joined(separator: "; "))
        }
        checks.append(.init(rule: "signIn.implicitLink", question: "link the account to user \(user.id) and sign in", answer: "yes", decisive: true))
        var why = "links the account to user \(user.id) (same email) and signs in as that user"
        if attempt.emailVerified && !user.emailVerified { why += "; the user's email is marked verified, as the provider verified it" }
        return decide("signIn.implicitLink", .linkedAndSignedIn, 200, user: user.id, why)
    }
}

/// The simulator's answer.
public struct LinkDecision: Sendable, Codable {
    /// Which Better Auth call was simulated.
    public enum Flow: String, Sendable, Codable {
        case link = "linkSocial"
        case signIn = "signIn.social"
    }

    /// What the call ends in.
    public enum Outcome: String, Sendable, Codable {
        case tokensUpdated = "tokens updated"
        case linked
        case signedIn = "signed in"
        case linkedAndSignedIn = "linked and signed in"
        case newUser = "new user"
        case error
    }

    /// One check, in Better Auth's order.
    public struct Check: Sendable, Codable {
        public let rule: String
        public let question: String
        public let answer: String
        /// Whether this check decided the outcome.
        public let decisive: Bool
    }

    public let flow: Flow
    public let outcome: Outcome
    public let httpStatus: Int
    /// Better Auth's error code (`LINKING_DIFFERENT_EMAILS_NOT_ALLOWED`, ...), nil on success.
    public let errorCode: String?
    /// Better Auth's error message.
    public let errorMessage: String?
    /// The rule that decided.
    public let rule: String
    public let explanation: String
    /// The user acted on (signed in as, linked to).
    public let userID: String?
    public let checks: [Check]
    public let accountLookup: String
    /// The policy version the simulation read.
    public var policyVersion = 0
    /// `--with` overrides applied on top of the stored policy.
    public var hypothetical: [String] = []
    /// For a Hide My Email case: whether flipping `linkSocial.allowDifferentEmails` would change the answer.
    public var hideMyEmail: HideMyEmailNote?
    public var notes: [String] = []

    init(flow: Flow, outcome: Outcome, httpStatus: Int, errorCode: String?, errorMessage: String?, rule: String,
         explanation: String, userID: String?, checks: [Check], accountLookup: String) {
        self.flow = flow
        self.outcome = outcome
        self.httpStatus = httpStatus
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.rule = rule
        self.explanation = explanation
        self.userID = userID
        self.checks = checks
        self.accountLookup = accountLookup
    }

    /// "error LINKING_DIFFERENT_EMAILS_NOT_ALLOWED (HTTP 401)", "linked (HTTP 200)".
    public var headline: String {
        if let errorCode {
            return "error \(errorCode)\(errorMessage.map { " \"\($0)\"" } ?? "") (HTTP \(httpStatus))"
        }
        return "\(outcome.rawValue) (HTTP \(httpStatus))"
    }
}

/// Whether the linkSocial switch matters for a Hide My Email case.
public struct HideMyEmailNote: Sendable, Codable {
    /// The value the switch was flipped to for the comparison.
    public let switchFlippedTo: Bool
    public let switchWouldChange: Bool
    /// The answer with the switch flipped.
    public let outcomeWithSwitchFlipped: String
    public let advice: String

    init(current: LinkDecision, flipped: LinkDecision, switchValue: Bool) {
        switchFlippedTo = switchValue
        switchWouldChange = current.headline != flipped.headline
        outcomeWithSwitchFlipped = flipped.headline
        switch (current.flow, switchWouldChange) {
        case (.link, true) where switchValue:
            advice = "setting linkSocial.allowDifferentEmails to true would let this Hide My Email user connect the account (e.g. for a support window: policy set linkSocial.allowDifferentEmails true --for 2h --reason ...)"
        case (.link, true):
            advice = "with linkSocial.allowDifferentEmails false this Hide My Email user could not connect the account"
        case (.link, false):
            advice = "the switch does not matter here: rule \(current.rule) decides before the email comparison"
        case (.signIn, _) where current.outcome != .newUser:
            advice = "implicit sign-in never consults allowDifferentEmails: it finds the user by the account, then by the exact email"
        case (.signIn, _):
            advice = "implicit sign-in matches users by exact email, so a Hide My Email relay address never meets the person's real email and no allowDifferentEmails value changes that; if this person already has a user under the other address, this sign-in splits their identity — they should sign in with that user and connect the account with linkSocial (with linkSocial.allowDifferentEmails true), or support merges the two users"
        }
    }
}
