import Foundation

/// The simulator's answer: Better Auth's outcome, HTTP status and error code, the rule and the line of Better Auth's
/// source that decide it, every check in Better Auth's order, and what outside the store could change it.
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
        /// An input outside the store and the policy decides; `dependsOn` names it.
        case undetermined
    }

    /// One check, in Better Auth's order.
    public struct Check: Sendable, Codable {
        /// The rule's name (`linkSocial.differentEmails`, `callback.link.emailDoesNotMatch`, …).
        public let rule: String
        /// What Better Auth asks.
        public let question: String
        /// What the store, the policy and the attempt answer.
        public let answer: String
        /// Whether this check decided the outcome.
        public let decisive: Bool
        /// The Better Auth 1.7.1 source that makes the check (file:line function).
        public var source: String = ""
    }

    /// The call simulated.
    public let flow: Flow
    /// `id-token` or `redirect`.
    public var via: AuthFlow = .idToken
    /// What the call ends in.
    public let outcome: Outcome
    /// The HTTP status Better Auth answers (302 for every answer of the redirect callback; 0 when undetermined).
    public let httpStatus: Int
    /// Better Auth's error code: the API error's `code` (`LINKING_DIFFERENT_EMAILS_NOT_ALLOWED`), or for the redirect
    /// flow the `?error=` value (`email_does_not_match`); nil on success.
    public let errorCode: String?
    /// Better Auth's error message (API errors only).
    public let errorMessage: String?
    /// Where the redirect callback sends the browser: `errorURL?error=…`, `callbackURL` or `newUserCallbackURL`.
    public var redirectTo: String?
    /// The rule that decided.
    public let rule: String
    /// The Better Auth 1.7.1 source that decides (file:line function).
    public var source: String = ""
    /// Why, in words.
    public let explanation: String
    /// The user acted on (signed in as, linked to).
    public let userID: String?
    /// Every check made, in Better Auth's order; the last one decided.
    public let checks: [Check]
    /// How the account was looked up (`(issuer, accountId)` and where the issuer came from).
    public let accountLookup: String
    /// The policy version the simulation read.
    public var policyVersion = 0
    /// `--with` overrides applied on top of the stored policy.
    public var hypothetical: [String] = []
    /// For a Hide My Email case: whether flipping `linkSocial.allowDifferentEmails` would change the answer.
    public var hideMyEmail: HideMyEmailNote?
    /// Remarks on how Better Auth's code behaves here (a flag it does not read, a runtime it depends on).
    public var notes: [String] = []
    /// What outside the store and the policy could change this answer (the app's code and options), taken as stated.
    public var dependsOn: [String] = []

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

    /// "error LINKING_DIFFERENT_EMAILS_NOT_ALLOWED "…" (HTTP 401)", "linked (HTTP 200)",
    /// "redirect ?error=email_does_not_match (HTTP 302)", "linked (HTTP 302 to callbackURL)".
    public var headline: String {
        if outcome == .undetermined { return "undetermined: depends on \(dependsOn.first ?? "an input outside the store")" }
        if via == .redirect {
            if let errorCode { return "redirect ?error=\(errorCode) (HTTP 302)" }
            return "\(outcome.rawValue) (HTTP 302 to \(redirectTo ?? "callbackURL"))"
        }
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
    /// What to do about it.
    public let advice: String

    init(current: LinkDecision, flipped: LinkDecision, switchValue: Bool) {
        switchFlippedTo = switchValue
        switchWouldChange = current.headline != flipped.headline
        outcomeWithSwitchFlipped = flipped.headline
        let via = current.via == .redirect ? " by redirect (the switch reaches the callback only through a runtime that follows policy export's appliesTo)" : ""
        switch (current.flow, switchWouldChange) {
        case (.link, true) where switchValue:
            advice = "setting linkSocial.allowDifferentEmails to true would let this Hide My Email user connect the account\(via) (e.g. for a support window: policy set linkSocial.allowDifferentEmails true \(field: .for) 2h \(field: .reason) ...)"
        case (.link, true):
            advice = "with linkSocial.allowDifferentEmails false this Hide My Email user could not connect the account\(via)"
        case (.link, false):
            advice = "the switch does not matter here: rule \(current.rule) decides before the email comparison"
        case (.signIn, _) where current.outcome != .newUser:
            advice = "sign-in never consults allowDifferentEmails: it finds the user by the account, then by the exact email"
        case (.signIn, _):
            advice = "sign-in matches users by exact email (toLowerCase, then ===), so a Hide My Email relay address never meets the person's real email and no allowDifferentEmails value changes that; if this person already has a user under the other address, this sign-in splits their identity — they should sign in with that user and connect the account with linkSocial (with linkSocial.allowDifferentEmails true), or support merges the two users"
        }
    }
}
