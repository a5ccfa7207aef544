import Foundation

/// Everything the rules read from the store.
struct LinkFacts: Sendable {
    let attempt: LinkAttempt
    /// For a link, the signed-in user; for a sign-in, the user with the attempt's email (if any).
    let user: SimulatedUser?
    let owner: AccountOwnership
    let lookup: String
    /// Inputs outside the store that the account lookup rests on (an issuer taken from a stored row, say).
    var lookupDependsOn: [String] = []
}

/// Where Better Auth 1.7.1 (tag v1.7.1, commit 2344536) makes each decision, as `file:line function`.
enum BetterAuthSource {
    static let root = "packages/better-auth/src/"
    static func account(_ line: Int) -> String { root + "api/routes/account.ts:\(line) linkSocialAccount" }
    static func callback(_ line: Int) -> String { root + "api/routes/callback.ts:\(line) callbackOAuth" }
    static func signIn(_ line: Int) -> String { root + "api/routes/sign-in.ts:\(line) signInSocial" }
    static func handle(_ line: Int) -> String { root + "oauth2/link-account.ts:\(line) handleOAuthUserInfo" }
    static let supportsIdTokenSignIn = "packages/core/src/oauth2/verify-id-token.ts:40 supportsIdTokenSignIn"
}

/// Better Auth 1.7.1's checks, as pure functions of the facts and a policy. Each rule cites the source line that makes it.
enum LinkRules {
    /// The checks made so far, and the answer once one decides.
    struct Trace {
        let flow: LinkDecision.Flow
        let facts: LinkFacts
        var checks: [LinkDecision.Check] = []
        var dependsOn: [String] = []
        var notes: [String] = []

        init(flow: LinkDecision.Flow, facts: LinkFacts) {
            self.flow = flow
            self.facts = facts
            dependsOn = facts.lookupDependsOn
        }

        mutating func pass(_ rule: String, _ question: String, _ answer: String, _ source: String) {
            checks.append(.init(rule: rule, question: question, answer: answer, decisive: false, source: source))
        }

        /// The answer: the deciding check is recorded last, marked decisive.
        mutating func decide(_ rule: String, _ question: String, _ answer: String, _ source: String, outcome: LinkDecision.Outcome,
                             status: Int, code: String? = nil, message: String? = nil, redirectTo: String? = nil,
                             user: String?, then later: [LinkDecision.Check] = [], _ why: String) -> LinkDecision {
            checks.append(.init(rule: rule, question: question, answer: answer, decisive: true, source: source))
            checks += later
            var decision = LinkDecision(flow: flow, outcome: outcome, httpStatus: facts.attempt.flow == .redirect ? 302 : status,
                                        errorCode: code, errorMessage: facts.attempt.flow == .redirect ? nil : message, rule: rule,
                                        explanation: why, userID: user, checks: checks, accountLookup: facts.lookup)
            decision.via = facts.attempt.flow
            decision.source = source
            decision.redirectTo = facts.attempt.flow == .redirect ? (code.map { "errorURL?error=\($0)" } ?? redirectTo ?? "callbackURL") : nil
            decision.dependsOn = dependsOn
            decision.notes = notes
            return decision
        }
    }

    // MARK: Provider capabilities

    /// Whether the provider accepts an id token from the client (`supportsIdTokenSignIn`); nil when the app's
    /// configuration decides and was not given.
    static func idTokenSupport(_ attempt: LinkAttempt) -> (supported: Bool?, why: String) {
        let settings = attempt.settings
        if attempt.isGeneric {
            guard let declared = settings.genericIDTokens else {
                return (nil, "whether the generic OAuth provider \(attempt.provider)'s discovery document gives an issuer and a jwks_uri (\(field: .genericIdTokens) yes|no)")
            }
            return declared ? (true, "generic OAuth provider with an id-token config from discovery")
                            : (false, "generic OAuth provider without an id-token config (its options object carries no verifyIdToken)")
        }
        let provider = BetterAuthProviders.provider(attempt.provider)!
        if settings.disableIdTokenSignIn { return (false, "the provider's disableIdTokenSignIn option is set") }
        if provider.verifiesIDTokens { return (true, "\(provider.id) declares an idToken config (\(provider.source))") }
        if settings.customVerifyIdToken { return (true, "\(provider.id) declares no idToken config, but the app passes verifyIdToken") }
        return (false, "\(provider.id) declares no idToken config (\(provider.source)) and the app passes no verifyIdToken")
    }

    /// The id-token checks both endpoints make first: support, then (taken as given) the token's validity.
    static func idTokenGate(_ trace: inout Trace, rulePrefix: String, source: String) -> LinkDecision? {
        let attempt = trace.facts.attempt
        let (supported, why) = idTokenSupport(attempt)
        let question = "does \(attempt.provider) accept an id token from the client?"
        guard let supported else {
            trace.dependsOn.insert(why, at: 0)
            return trace.decide(rulePrefix + ".idTokenSupport", question, "depends on the app's configuration", BetterAuthSource.supportsIdTokenSignIn,
                                outcome: .undetermined, status: 0, user: nil,
                                "a generic OAuth provider accepts id tokens only when its discovery document gave an issuer and a jwks_uri; without them Better Auth answers 404 ID_TOKEN_NOT_SUPPORTED")
        }
        if !supported {
            return trace.decide(rulePrefix + ".idTokenNotSupported", question, "no: \(why)", source, outcome: .error, status: 404,
                                code: "ID_TOKEN_NOT_SUPPORTED", message: "id_token not supported", user: nil,
                                "\(why): an id-token request is refused before the token is read; the web redirect flow still works")
        }
        trace.pass(rulePrefix + ".idTokenSupport", question, "yes: \(why)", BetterAuthSource.supportsIdTokenSignIn)
        trace.dependsOn.append(attempt.settings.customVerifyIdToken && !attempt.isGeneric
            ? "the app's verifyIdToken accepts the token (otherwise 401 INVALID_TOKEN)"
            : "the token passes verifyProviderIdToken: signature, issuer, audience, expiry, nonce (otherwise 401 INVALID_TOKEN)")
        return nil
    }

    static func emailMissing(_ attempt: LinkAttempt) -> Bool { (attempt.email ?? "").isEmpty }

    /// Where an email can come from when the token has none (apple.ts `getUserInfo` reads only the token's claim; the
    /// request's `idToken.user.email` is not used).
    static let emailSynthesis = "the provider's getUserInfo or mapProfileToUser options (app code), which can supply an email; without them Better Auth reads only the token's email claim (for Apple, not the request's idToken.user.email)"

    static func trusted(_ attempt: LinkAttempt, _ policy: LinkingPolicy) -> Bool {
        policy.trustedProviders.contains(attempt.provider)
    }

    /// Better Auth matches provider ids exactly, in `trustedProviders` and against its built-in providers: a spelling
    /// that differs only in case is another provider. Says so when the attempt or the list looks like such a slip.
    static func spellingNotes(_ attempt: LinkAttempt, _ policy: LinkingPolicy) -> [String] {
        var notes: [String] = []
        let lowered = attempt.provider.lowercased()
        if !trusted(attempt, policy), let near = policy.trustedProviders.first(where: { $0.lowercased() == lowered }) {
            notes.append("accountLinking.trustedProviders lists \(near), which Better Auth matches exactly (===): the provider \(attempt.provider) is not trusted")
        }
        if BetterAuthProviders.provider(attempt.provider) == nil, let builtIn = BetterAuthProviders.provider(lowered) {
            notes.append("Better Auth's built-in provider is \(builtIn.id); provider ids are matched exactly, so \(attempt.provider) is a generic OAuth provider of its own (if the app configures one)")
        }
        return notes
    }

    /// When the provider reports the email unverified, trust decides: say that the answer rests on the exported list.
    static func noteTrust(_ trace: inout Trace, _ attempt: LinkAttempt) {
        guard !attempt.emailVerified else { return }
        trace.dependsOn.append("accountLinking.trustedProviders as the policy exports it (a list); an app that passes trustedProviders as a function decides per request")
    }

    // MARK: linkSocial

    static func link(_ facts: LinkFacts, policy: LinkingPolicy) -> LinkDecision {
        facts.attempt.flow == .idToken ? linkByIDToken(facts, policy: policy) : linkByRedirect(facts, policy: policy)
    }

    /// `POST /link-social` with `idToken` (api/routes/account.ts `linkSocialAccount`).
    static func linkByIDToken(_ facts: LinkFacts, policy: LinkingPolicy) -> LinkDecision {
        var trace = Trace(flow: .link, facts: facts)
        let attempt = facts.attempt, user = facts.user!
        if let refused = idTokenGate(&trace, rulePrefix: "linkSocial", source: BetterAuthSource.account(273)) { return refused }
        if emailMissing(attempt) {
            trace.dependsOn.append(Self.emailSynthesis)
            return trace.decide("linkSocial.emailMissing", "does the token carry an email?", "no", BetterAuthSource.account(311), outcome: .error, status: 401,
                                code: "USER_EMAIL_NOT_FOUND", message: "User email not found", user: user.id,
                                "the provider reports no email (Apple sends it only on the first authorization): refused before any lookup")
        }
        trace.pass("linkSocial.emailMissing", "does the token carry an email?", "yes", BetterAuthSource.account(311))

        switch facts.owner {
        case .owned(let owner, _) where owner.id == user.id:
            return trace.decide("linkSocial.accountAlreadyThisUsers", "is the account already this user's?", "yes", BetterAuthSource.account(335),
                                outcome: .tokensUpdated, status: 200, user: user.id,
                                "the account is already linked to this user: Better Auth updates its tokens and answers ok")
        case .owned(let owner, _):
            return trace.decide("linkSocial.accountOwnedByAnotherUser", "is the account another user's?", "yes, user \(owner.id)", BetterAuthSource.account(365),
                                outcome: .error, status: 409, code: "SOCIAL_ACCOUNT_ALREADY_LINKED", message: "Social account already linked", user: user.id,
                                "the account belongs to user \(owner.id); linkSocial never moves an account between users (a support merge does)")
        case .orphaned(let owner):
            return trace.decide("linkSocial.accountOwnedByAnotherUser", "is the account another user's?", "it references a missing user \(owner)", BetterAuthSource.account(365),
                                outcome: .error, status: 409, code: "SOCIAL_ACCOUNT_ALREADY_LINKED", message: "Social account already linked", user: user.id,
                                "an account row with this key exists for the missing user \(owner) (an orphan): repair or delete it first")
        case .none:
            trace.pass("linkSocial.accountAlreadyLinked", "is the account already linked to anyone?", "no", BetterAuthSource.account(333))
        }

        noteTrust(&trace, attempt)
        let untrustedUnverified = !trusted(attempt, policy) && !attempt.emailVerified
        let question = "provider untrusted and email unverified, or accountLinking.enabled false?"
        if untrustedUnverified || !policy.enabled {
            return trace.decide("linkSocial.linkingNotAllowed", question,
                                untrustedUnverified ? "provider \(attempt.provider) is not trusted and the email is unverified" : "accountLinking.enabled is false",
                                BetterAuthSource.account(375), outcome: .error, status: 401, code: "LINKING_NOT_ALLOWED",
                                message: "Account not linked - linking not allowed", user: user.id,
                                untrustedUnverified ? "\(attempt.provider) is not in accountLinking.trustedProviders and it reports the email unverified"
                                    : "accountLinking.enabled is false")
        }
        trace.pass("linkSocial.linkingNotAllowed", question, "no", BetterAuthSource.account(375))

        let email = attempt.email ?? ""
        let (theirs, ours) = (JavaScriptString.toLowerCase(email), JavaScriptString.toLowerCase(user.email))
        let differs = !JavaScriptString.strictEquals(theirs, ours)
        let emailQuestion = "email differs from the user's (toLowerCase, then ===) and linkSocial.allowDifferentEmails false?"
        if differs && !policy.linkSocialAllowDifferentEmails {
            return trace.decide("linkSocial.differentEmails", emailQuestion, "\(theirs) ≠ \(ours); linkSocial.allowDifferentEmails is false",
                                BetterAuthSource.account(385), outcome: .error, status: 401, code: "LINKING_DIFFERENT_EMAILS_NOT_ALLOWED",
                                message: "Account not linked - different emails not allowed", user: user.id,
                                "the provider's email \(theirs) is not the user's \(ours) and linkSocial.allowDifferentEmails is false"
                                    + normalisationRemark(theirs, ours))
        }
        trace.pass("linkSocial.differentEmails", emailQuestion,
                   differs ? "\(theirs) ≠ \(ours), but linkSocial.allowDifferentEmails is true" : "no, the emails match", BetterAuthSource.account(385))
        return trace.decide("linkSocial.linked", "create the account on this user", "yes", BetterAuthSource.account(397), outcome: .linked, status: 200,
                            user: user.id, differs ? "linked: the emails differ but linkSocial.allowDifferentEmails is true; the user keeps the email \(ours)"
                                                   : "linked: the emails match")
    }

    /// `POST /link-social` without an id token, then the provider's redirect to `/callback/:providerId`: the link branch of
    /// `callbackOAuth` (api/routes/callback.ts). It compares with the email the user had when the link started (kept in
    /// the OAuth state) and reads the instance-wide `allowDifferentEmails` of the instance that serves the callback.
    static func linkByRedirect(_ facts: LinkFacts, policy: LinkingPolicy) -> LinkDecision {
        var trace = Trace(flow: .link, facts: facts)
        let attempt = facts.attempt, user = facts.user!
        trace.dependsOn.append("the app's user-info validation hook (assertValidUserInfo, callback.ts:263) accepts the profile; a rejection redirects with its own ?error= code")
        trace.pass("callback.link.validateUserInfo", "does the app's validation hook accept the profile?", "taken as yes (app code)", BetterAuthSource.callback(263))

        noteTrust(&trace, attempt)
        let untrustedUnverified = !trusted(attempt, policy) && !attempt.emailVerified
        let question = "provider untrusted and email unverified, or accountLinking.enabled false?"
        if untrustedUnverified || !policy.enabled {
            return trace.decide("callback.link.unableToLink", question,
                                untrustedUnverified ? "provider \(attempt.provider) is not trusted and the email is unverified" : "accountLinking.enabled is false",
                                BetterAuthSource.callback(287), outcome: .error, status: 302, code: "unable_to_link_account", user: user.id,
                                untrustedUnverified ? "\(attempt.provider) is not in accountLinking.trustedProviders and it reports the email unverified"
                                    : "accountLinking.enabled is false")
        }
        trace.pass("callback.link.unableToLink", question, "no", BetterAuthSource.callback(287))

        let ours = JavaScriptString.toLowerCase(user.email)
        let theirs = attempt.email.map(JavaScriptString.toLowerCase)
        let differs = theirs.map { !JavaScriptString.strictEquals($0, ours) } ?? true
        let allow = policy.linkSocialAllowDifferentEmails
        let shown = theirs ?? "(no email: undefined)"
        let emailQuestion = "email differs from the user's at the start of the link (toLowerCase, then ===) and allowDifferentEmails at the callback not true?"
        if differs && policy.autoLinkAllowDifferentEmails != allow {
            trace.notes.append("the callback reads the instance-wide allowDifferentEmails: linkSocial.allowDifferentEmails (\(allow)) only where the runtime builds the instance for /callback/* with it, as policy export's linkSocial.appliesTo says; a runtime that applies it to POST /link-social alone gives this callback autoLink.allowDifferentEmails (\(policy.autoLinkAllowDifferentEmails)) and answers \(policy.autoLinkAllowDifferentEmails ? "as if the switch were on" : "?error=email_does_not_match")")
        }
        if differs && !allow {
            return trace.decide("callback.link.emailDoesNotMatch", emailQuestion, "\(shown) ≠ \(ours); allowDifferentEmails at the callback is false",
                                BetterAuthSource.callback(297), outcome: .error, status: 302, code: "email_does_not_match", user: user.id,
                                (theirs == nil ? "the provider reports no email, which never equals the user's" : "the provider's email \(shown) is not the user's \(ours)")
                                    + " and the callback's allowDifferentEmails (linkSocial.allowDifferentEmails, per policy export's appliesTo) is false"
                                    + (theirs.map { normalisationRemark($0, ours) } ?? ""))
        }
        trace.pass("callback.link.emailDoesNotMatch", emailQuestion, differs ? "\(shown) ≠ \(ours), but allowDifferentEmails at the callback is true" : "no, the emails match",
                   BetterAuthSource.callback(297))

        switch facts.owner {
        case .owned(let owner, _) where owner.id == user.id:
            return trace.decide("callback.link.tokensUpdated", "is the account already linked?", "yes, to this user", BetterAuthSource.callback(307),
                                outcome: .tokensUpdated, status: 302, user: user.id, "the account is already this user's: its tokens and scopes are updated")
        case .owned(let owner, _):
            return trace.decide("callback.link.alreadyLinkedToDifferentUser", "is the account already linked?", "yes, to user \(owner.id)", BetterAuthSource.callback(308),
                                outcome: .error, status: 302, code: "account_already_linked_to_different_user", user: user.id,
                                "the account belongs to user \(owner.id); linking never moves an account between users (a support merge does)")
        case .orphaned(let owner):
            return trace.decide("callback.link.alreadyLinkedToDifferentUser", "is the account already linked?", "to the missing user \(owner)", BetterAuthSource.callback(308),
                                outcome: .error, status: 302, code: "account_already_linked_to_different_user", user: user.id,
                                "an account row with this key exists for the missing user \(owner) (an orphan): repair or delete it first")
        case .none:
            trace.pass("callback.link.alreadyLinked", "is the account already linked?", "no", BetterAuthSource.callback(305))
        }
        return trace.decide("callback.link.linked", "create the account on this user", "yes", BetterAuthSource.callback(330), outcome: .linked, status: 302,
                            user: user.id, differs ? "linked: the emails differ but allowDifferentEmails at the callback is true; the user keeps the email \(ours)"
                                                   : "linked: the emails match")
    }

    static func normalisationRemark(_ a: String, _ b: String) -> String {
        JavaScriptString.differOnlyByNormalisation(a, b)
            ? " (they look the same but differ in Unicode normalisation: Better Auth compares code units and never normalises)" : ""
    }

    // MARK: Sign-in

    /// `signIn.social` with an id token (api/routes/sign-in.ts `signInSocial`), or the sign-in branch of the redirect
    /// callback (api/routes/callback.ts `callbackOAuth`); both then run `handleOAuthUserInfo` (oauth2/link-account.ts).
    static func signIn(_ facts: LinkFacts, policy: LinkingPolicy) -> LinkDecision {
        var trace = Trace(flow: .signIn, facts: facts)
        let attempt = facts.attempt
        let redirect = attempt.flow == .redirect
        if !redirect, let refused = idTokenGate(&trace, rulePrefix: "signIn", source: BetterAuthSource.signIn(276)) { return refused }
        if redirect {
            trace.dependsOn.append("the callback's state, code exchange and issuer check pass (otherwise ?error=state_not_found, invalid_code, issuer_mismatch, …)")
        }
        let emailSource = redirect ? BetterAuthSource.callback(356) : BetterAuthSource.signIn(312)
        if emailMissing(attempt) {
            trace.dependsOn.append(Self.emailSynthesis)
            return trace.decide("signIn.emailMissing", "does the provider report an email?", "no", emailSource, outcome: .error, status: 401,
                                code: redirect ? "email_not_found" : "USER_EMAIL_NOT_FOUND", message: "User email not found", user: nil,
                                "the provider reports no email (Apple sends it only on the first authorization, so a returning Apple user's token often has none): refused before any lookup, even for an account the store has")
        }
        trace.pass("signIn.emailMissing", "does the provider report an email?", "yes", emailSource)
        let email = attempt.email ?? ""
        let lowered = JavaScriptString.toLowerCase(email)

        /// The error string `handleOAuthUserInfo` returns, as each flow answers it.
        func fail(_ rule: String, _ question: String, _ answer: String, _ source: String, error: String, user: String?,
                  then later: [LinkDecision.Check] = [], _ why: String) -> LinkDecision {
            if error == "email_not_verified" {
                return trace.decide(rule, question, answer, source, outcome: .error, status: 403, code: redirect ? error : "EMAIL_NOT_VERIFIED",
                                    message: "Email not verified", user: user, then: later, why)
            }
            return trace.decide(rule, question, answer, source, outcome: .error, status: 401,
                                code: redirect ? error.split(separator: " ").joined(separator: "_") : "OAUTH_LINK_ERROR", message: error, user: user,
                                then: later, why)
        }

        trace.dependsOn.append("the app's user-info validation hook (assertValidUserInfo) accepts the profile")
        var userID: String
        var verifiedInMemory: Bool
        var outcome: LinkDecision.Outcome
        var why: String
        var registered = false
        var promoted = false
        switch facts.owner {
        case .orphaned(let owner):
            return fail("signIn.orphanedAccount", "does a user own the account?", "it references a missing user \(owner)", BetterAuthSource.handle(67),
                        error: "unable to link account", user: nil,
                        "the account row references the missing user \(owner): Better Auth refuses until it is repaired")
        case .owned(let owner, _):
            trace.pass("signIn.accountLookup", "does a user own the account?", "yes, user \(owner.id)", BetterAuthSource.handle(78))
            userID = owner.id
            outcome = .signedIn
            why = "the account is user \(owner.id)'s: signs in as that user (tokens refreshed); the email is not used to find the user"
            verifiedInMemory = owner.emailVerified
            if attempt.emailVerified && !owner.emailVerified && JavaScriptString.strictEquals(lowered, owner.email) {
                promoted = true
                why += "; the user's email is marked verified in the store, as the provider verified it (the session check below still sees the row as read)"
            }
            if redirect && attempt.settings.overrideUserInfoOnSignIn {
                verifiedInMemory = JavaScriptString.strictEquals(lowered, owner.email) ? owner.emailVerified || attempt.emailVerified : attempt.emailVerified
                why += "; overrideUserInfoOnSignIn rewrites the user's email to \(lowered)"
            }
        case .none:
            trace.pass("signIn.accountLookup", "does a user own the account?", "no", BetterAuthSource.handle(53))
            if let user = facts.user {
                trace.pass("signIn.emailMatch", "is there a user with the email \(lowered) (exact code units)?", "yes, user \(user.id)", BetterAuthSource.handle(120))
                noteTrust(&trace, attempt)
                let refusals: [(String, Bool, String)] = [
                    ("signIn.notLinked.untrustedUnverified", !trusted(attempt, policy) && !attempt.emailVerified,
                     "\(attempt.provider) is not in accountLinking.trustedProviders and it reports the email unverified"),
                    ("signIn.notLinked.localEmailUnverified", policy.requireLocalEmailVerified && !user.emailVerified,
                     "user \(user.id)'s own email is unverified and accountLinking.requireLocalEmailVerified is true"),
                    ("signIn.notLinked.linkingDisabled", !policy.enabled, "accountLinking.enabled is false"),
                    ("signIn.notLinked.implicitLinkingDisabled", policy.disableImplicitLinking, "accountLinking.disableImplicitLinking is true"),
                ]
                let reasons = refusals.filter(\.1)
                func question(_ rule: String) -> String { rule.replacingOccurrences(of: "signIn.notLinked.", with: "refuse: ") + "?" }
                if let first = reasons.first, let at = refusals.firstIndex(where: { $0.0 == first.0 }) {
                    // One condition in Better Auth: the checks are listed in its order, the first that holds decides.
                    for (rule, _, _) in refusals[..<at] { trace.pass(rule, question(rule), "no", BetterAuthSource.handle(160)) }
                    let later = refusals[(at + 1)...].map { LinkDecision.Check(rule: $0.0, question: question($0.0), answer: $0.1 ? "also: \($0.2)" : "no",
                                                                               decisive: false, source: BetterAuthSource.handle(160)) }
                    return fail(first.0, question(first.0), first.2, BetterAuthSource.handle(160), error: "account not linked", user: user.id, then: later,
                                "a user with this email exists but the account is not linked: " + reasons.map(\.2).joined(separator: "; "))
                }
                for (rule, _, _) in refusals {
                    trace.pass(rule, rule.replacingOccurrences(of: "signIn.notLinked.", with: "refuse: ") + "?", "no", BetterAuthSource.handle(160))
                }
                userID = user.id
                outcome = .linkedAndSignedIn
                why = "links the account to user \(user.id) (same email) and signs in as that user"
                verifiedInMemory = user.emailVerified
                if attempt.emailVerified && !user.emailVerified {
                    promoted = true
                    why += "; the user's email is marked verified in the store, as the provider verified it"
                    // applyUpdateUserInfoOnLink returns the row as updated (the email now verified) when the app sets
                    // updateUserInfoOnLink; otherwise the session check sees the row read before the link.
                    let question = "does accountLinking.updateUserInfoOnLink give the session check the user row as updated?"
                    if attempt.updateUserInfoOnLink {
                        verifiedInMemory = true
                        trace.pass("signIn.updateUserInfoOnLink", question, "yes: the row as updated, its email verified", BetterAuthSource.handle(250))
                        trace.dependsOn.append("the profile update accountLinking.updateUserInfoOnLink makes succeeds (a failed one is logged and the row read before the link, unverified, is checked)")
                    } else if attempt.settings.requireEmailVerification {
                        trace.pass("signIn.updateUserInfoOnLink", question, "no: the app does not set it (\(field: .updateUserInfoOnLink)); the row read before the link is checked", BetterAuthSource.handle(250))
                    }
                }
                if redirect && attempt.settings.overrideUserInfoOnSignIn {
                    verifiedInMemory = user.emailVerified || attempt.emailVerified
                }
            } else {
                trace.pass("signIn.emailMatch", "is there a user with the email \(lowered) (exact code units)?", "no", BetterAuthSource.handle(120))
                let (disabled, answer, source) = signUpDisabled(attempt, &trace)
                if disabled {
                    return fail("signIn.signUpDisabled", "is sign-up disabled for \(attempt.provider)?", answer, source, error: "signup disabled", user: nil,
                                "no user has the email \(lowered) and sign-up is disabled: \(answer)")
                }
                trace.pass("signIn.signUpDisabled", "is sign-up disabled for \(attempt.provider)?", answer, source)
                userID = ""
                outcome = .newUser
                registered = true
                verifiedInMemory = attempt.emailVerified
                why = "no user has the email \(lowered): Better Auth creates a new user with this account"
            }
        }

        let gate = "does the provider require a verified email (requireEmailVerification) and is the user's unverified?"
        if attempt.settings.requireEmailVerification && !verifiedInMemory {
            return fail("signIn.emailNotVerified", gate, "yes: requireEmailVerification is set and the user's email is unverified", BetterAuthSource.handle(491),
                        error: "email_not_verified", user: registered ? nil : userID,
                        (registered ? "the user and account are created" : outcome == .linkedAndSignedIn ? "the account is linked" : "the user is found")
                            + ", but no session: the email is unverified and the provider's requireEmailVerification is set (a verification email goes out when emailVerification.sendVerificationEmail is configured)"
                            + (promoted ? "; Better Auth has just marked the email verified in the store (the provider verified it) but checks the user row it read before, so this attempt is refused and the next one signs in"
                                + (outcome == .linkedAndSignedIn ? " (with accountLinking.updateUserInfoOnLink, this one would)" : "") : ""))
        }
        trace.pass("signIn.emailNotVerified", gate, attempt.settings.requireEmailVerification ? "no, the email is verified" : "no, requireEmailVerification is not set",
                   BetterAuthSource.handle(491))
        let rule = outcome == .signedIn ? "signIn.accountOwner" : outcome == .newUser ? "signIn.newUser" : "signIn.implicitLink"
        let source = outcome == .newUser ? BetterAuthSource.handle(416) : outcome == .signedIn ? BetterAuthSource.handle(253) : BetterAuthSource.handle(187)
        return trace.decide(rule, "create a session", "yes", source, outcome: outcome, status: 200,
                            redirectTo: registered ? "newUserCallbackURL (else callbackURL)" : "callbackURL", user: registered ? nil : userID, why)
    }

    /// Whether sign-up is disabled, as each flow computes it: the id-token flow reads `provider.disableSignUp`, which only
    /// generic OAuth providers set (built-in providers keep it in `provider.options`); the callback reads `provider.options`.
    static func signUpDisabled(_ attempt: LinkAttempt, _ trace: inout Trace) -> (Bool, String, String) {
        let settings = attempt.settings
        let implicit = settings.disableImplicitSignUp && !attempt.requestSignUp
        let implicitText = settings.disableImplicitSignUp ? (attempt.requestSignUp ? "disableImplicitSignUp, but requestSignUp is true" : "disableImplicitSignUp without requestSignUp") : nil
        if attempt.flow == .redirect {
            let source = BetterAuthSource.callback(378)
            if implicit { return (true, "yes: \(implicitText!)", source) }
            if settings.disableSignUp { return (true, "yes: disableSignUp (read from provider.options)", source) }
            return (false, implicitText.map { "no: \($0)" } ?? "no", source)
        }
        let source = BetterAuthSource.signIn(344)
        if implicit { return (true, "yes: \(implicitText!)", source) }
        if settings.disableSignUp {
            if attempt.isGeneric { return (true, "yes: disableSignUp (the generic OAuth plugin sets it on the provider object)", source) }
            trace.notes.append("disableSignUp is set, but id-token sign-in reads provider.disableSignUp, which Better Auth never sets on built-in providers (create-context.ts:240 copies only disableImplicitSignUp): a built-in provider signs this user up anyway; the redirect callback (provider.options.disableSignUp) would refuse")
            return (false, "no: disableSignUp is set but not read for a built-in provider in the id-token flow", source)
        }
        return (false, implicitText.map { "no: \($0)" } ?? "no", source)
    }
}
