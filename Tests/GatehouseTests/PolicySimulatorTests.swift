@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// The simulator's decision table: every rule of Better Auth 1.7's linkSocial and idToken sign-in,
/// on a real store with rows written as Better Auth writes them.
final class PolicySimulatorTests: XCTestCase {
    var scratch: Scratch!
    var store: Store!
    var simulator: LinkSimulator!
    let now = Timestamp(iso8601: "2026-06-01T12:00:00.000Z")!

    // Ana signed in with Apple behind Hide My Email (U1); Ben with Google (U2); Cleo with a password, email unverified (U3).
    let relayUser = "U1relayAAAAAAAAAAAAAAAAAAAAAAAAA"
    let relayEmail = "k3x9q2w8zz@privaterelay.appleid.com"
    let appleSub = "001234.abcdef0123456789.0001"
    let googleUser = "U2googleBBBBBBBBBBBBBBBBBBBBBBBB"
    let googleSub = "104857600000000000001"
    let unverifiedUser = "U3unverifiedCCCCCCCCCCCCCCCCCCCC"
    let orphanSub = "109999999999999999999"

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester).0
        let created = "2026-01-02T03:04:05.678Z"
        let db = store.db
        for (id, email, verified) in [(relayUser, relayEmail, 1), (googleUser, "ben@gmail.com", 1), (unverifiedUser, "cleo@example.com", 0)] {
            try db.execute(#"INSERT INTO "user" (id, name, email, emailVerified, createdAt, updatedAt) VALUES (?, 'x', ?, ?, ?, ?)"#,
                           [id, email, verified, created, created])
        }
        func account(_ id: String, _ provider: String, _ sub: String, _ user: String) throws {
            try db.execute(#"INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?, ?, ?)"#,
                           [id, Issuer.forProvider(provider), sub, provider, user, created, created])
        }
        try account("A1", "apple", appleSub, relayUser)
        try account("A2", "google", googleSub, googleUser)
        try account("A3", "credential", unverifiedUser, unverifiedUser)
        // An orphan: an account whose user was deleted behind Better Auth's back.
        try db.execute("PRAGMA foreign_keys = OFF")
        try account("A4", "google", orphanSub, "UgoneDDDDDDDDDDDDDDDDDDDDDDDDDDD")
        try db.execute("PRAGMA foreign_keys = ON")
        simulator = LinkSimulator(store: store)
    }

    func link(_ user: String, _ provider: String, _ email: String, verified: Bool = true, account: String? = nil,
              _ overrides: [PolicyKey: PolicyValue] = [:]) throws -> LinkDecision {
        try simulator.simulateLink(user: BetterAuthUserID(user), attempt: LinkAttempt(provider: provider, email: email, emailVerified: verified, accountID: account),
                                   overrides: overrides, now: now)
    }

    func signIn(_ provider: String, _ email: String, verified: Bool = true, account: String? = nil,
                _ overrides: [PolicyKey: PolicyValue] = [:]) throws -> LinkDecision {
        try simulator.simulateSignIn(attempt: LinkAttempt(provider: provider, email: email, emailVerified: verified, accountID: account),
                                     overrides: overrides, now: now)
    }

    func assert(_ decision: LinkDecision, _ rule: String, _ outcome: LinkDecision.Outcome, _ status: Int, _ code: String? = nil,
                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(decision.rule, rule, file: file, line: line)
        XCTAssertEqual(decision.outcome, outcome, file: file, line: line)
        XCTAssertEqual(decision.httpStatus, status, file: file, line: line)
        XCTAssertEqual(decision.errorCode, code, file: file, line: line)
        XCTAssertEqual(decision.checks.filter(\.decisive).map(\.rule), [rule], "exactly the deciding rule is marked", file: file, line: line)
    }

    // MARK: linkSocial

    func testLinkAccountAlreadyThisUsersUpdatesTokens() throws {
        assert(try link(relayUser, "apple", relayEmail, account: appleSub), "linkSocial.accountAlreadyThisUsers", .tokensUpdated, 200)
    }

    func testLinkAccountOfAnotherUserIsAlreadyLinked() throws {
        let decision = try link(relayUser, "google", "ben@gmail.com", account: googleSub, [.linkSocialAllowDifferentEmails: .bool(true)])
        assert(decision, "linkSocial.accountOwnedByAnotherUser", .error, 409, "SOCIAL_ACCOUNT_ALREADY_LINKED")
        XCTAssertEqual(decision.errorMessage, "Social account already linked")
        XCTAssertEqual(decision.hideMyEmail?.switchWouldChange, false)
        assert(try link(relayUser, "google", "x@gmail.com", account: orphanSub), "linkSocial.accountOwnedByAnotherUser", .error, 409, "SOCIAL_ACCOUNT_ALREADY_LINKED")
    }

    func testLinkUntrustedUnverifiedOrDisabledIsNotAllowed() throws {
        assert(try link(googleUser, "facebook", "ben@gmail.com", verified: false), "linkSocial.linkingNotAllowed", .error, 401, "LINKING_NOT_ALLOWED")
        assert(try link(googleUser, "google", "ben@gmail.com", [.enabled: .bool(false)]), "linkSocial.linkingNotAllowed", .error, 401, "LINKING_NOT_ALLOWED")
        // Trusted but unverified, or untrusted but verified, passes this check.
        assert(try link(googleUser, "google", "ben@gmail.com", verified: false), "linkSocial.linked", .linked, 200)
        assert(try link(googleUser, "facebook", "ben@gmail.com", verified: true), "linkSocial.linked", .linked, 200)
        assert(try link(googleUser, "google", "ben@gmail.com", verified: false, [.trustedProviders: .providers(["apple"])]),
               "linkSocial.linkingNotAllowed", .error, 401, "LINKING_NOT_ALLOWED")
    }

    func testHideMyEmailLinkNeedsTheScopedSwitch() throws {
        let refused = try link(relayUser, "google", "Ana@Gmail.com")
        assert(refused, "linkSocial.differentEmails", .error, 401, "LINKING_DIFFERENT_EMAILS_NOT_ALLOWED")
        XCTAssertEqual(refused.errorMessage, "Account not linked - different emails not allowed")
        XCTAssertEqual(refused.hideMyEmail?.switchWouldChange, true)
        XCTAssertEqual(refused.hideMyEmail?.switchFlippedTo, true)
        XCTAssertEqual(refused.hideMyEmail?.outcomeWithSwitchFlipped, "linked (HTTP 200)")
        // The instance-wide (autoLink) value does not reach linkSocial: the runtime scopes it.
        assert(try link(relayUser, "google", "ana@gmail.com", [.autoLinkAllowDifferentEmails: .bool(true)]),
               "linkSocial.differentEmails", .error, 401, "LINKING_DIFFERENT_EMAILS_NOT_ALLOWED")
        // With the switch stored, the same attempt links, and the stored version is reported.
        try PolicyStore(store: store).set(PolicyChange(key: .linkSocialAllowDifferentEmails, value: .bool(true), reason: "D3"), actor: tester, now: now)
        let linked = try link(relayUser, "google", "ana@gmail.com")
        assert(linked, "linkSocial.linked", .linked, 200)
        XCTAssertEqual(linked.policyVersion, 1)
        XCTAssertEqual(linked.hideMyEmail?.switchWouldChange, true)
        XCTAssertEqual(linked.hideMyEmail?.switchFlippedTo, false)
        // A --with hypothetical overrides the stored value.
        let hypothetical = try link(relayUser, "google", "ana@gmail.com", [.linkSocialAllowDifferentEmails: .bool(false)])
        XCTAssertEqual(hypothetical.errorCode, "LINKING_DIFFERENT_EMAILS_NOT_ALLOWED")
        XCTAssertEqual(hypothetical.hypothetical, ["linkSocial.allowDifferentEmails=false"])
    }

    func testLinkWithTheSameEmailInAnotherCaseLinksWithoutTheSwitch() throws {
        let decision = try link(googleUser, "apple", "BEN@gmail.com", account: "000001.new.0001")
        assert(decision, "linkSocial.linked", .linked, 200)
        XCTAssertNil(decision.hideMyEmail, "not a Hide My Email case")
    }

    func testLinkForAnUnknownUserIsAnOperatorError() throws {
        XCTAssertThrowsError(try link("nobody", "google", "a@b.c")) { XCTAssertEqual(($0 as? GatehouseError)?.code.rawValue, "not_found") }
        XCTAssertThrowsError(try link(googleUser, "goo\u{1B}gle", "a@b.c")) { XCTAssertEqual(($0 as? GatehouseError)?.code.rawValue, "invalid") }
        XCTAssertThrowsError(try link(googleUser, "google", "not-an-email")) { XCTAssertEqual(($0 as? GatehouseError)?.code.rawValue, "invalid") }
    }

    // MARK: idToken sign-in

    func testSignInByAccountOwnerIgnoresTheEmail() throws {
        let decision = try signIn("google", "someone-else@gmail.com", account: googleSub)
        assert(decision, "signIn.accountOwner", .signedIn, 200)
        XCTAssertEqual(decision.userID, googleUser)
        assert(try signIn("google", "x@gmail.com", account: orphanSub), "signIn.orphanedAccount", .error, 401, "OAUTH_LINK_ERROR")
    }

    func testSignInWithAnUnknownEmailCreatesAUserAndTheSwitchCannotHelp() throws {
        let decision = try signIn("google", "ana@gmail.com")
        assert(decision, "signIn.newUser", .newUser, 200)
        XCTAssertEqual(decision.hideMyEmail?.switchWouldChange, false)
        XCTAssertTrue(decision.hideMyEmail?.advice.contains("splits their identity") == true)
    }

    func testSignInWithAMatchingEmailLinksImplicitly() throws {
        let decision = try signIn("apple", "Ben@Gmail.com", account: "000002.apple.0002")
        assert(decision, "signIn.implicitLink", .linkedAndSignedIn, 200)
        XCTAssertEqual(decision.userID, googleUser)
        assert(try signIn("facebook", "ben@gmail.com", verified: true), "signIn.implicitLink", .linkedAndSignedIn, 200)
    }

    func testSignInAccountNotLinkedForEachReason() throws {
        let cases: [(LinkDecision, String)] = [
            (try signIn("facebook", "ben@gmail.com", verified: false), "signIn.notLinked.untrustedUnverified"),
            (try signIn("google", "cleo@example.com"), "signIn.notLinked.localEmailUnverified"),
            (try signIn("google", "ben@gmail.com", [.enabled: .bool(false)]), "signIn.notLinked.linkingDisabled"),
            (try signIn("google", "ben@gmail.com", [.disableImplicitLinking: .bool(true)]), "signIn.notLinked.implicitLinkingDisabled"),
        ]
        for (decision, rule) in cases {
            assert(decision, rule, .error, 401, "OAUTH_LINK_ERROR")
            XCTAssertEqual(decision.errorMessage, "account not linked")
        }
        // The local-verification guard can be switched off (with a warning in the policy's risks).
        assert(try signIn("google", "cleo@example.com", [.requireLocalEmailVerified: .bool(false)]), "signIn.implicitLink", .linkedAndSignedIn, 200)
    }

    /// accountLinking.updateUserInfoOnLink decides whether an email the provider has just verified passes
    /// requireEmailVerification on an implicit link (link-account.ts:250 hands the session check the updated row).
    func testUpdateUserInfoOnLinkLetsAJustVerifiedEmailSignIn() throws {
        var settings = ProviderSettings()
        settings.set(.requireEmailVerification)
        func attempt(_ update: Bool) -> LinkAttempt {
            LinkAttempt(provider: "google", email: "cleo@example.com", emailVerified: true, settings: settings, updateUserInfoOnLink: update)
        }
        let off: [PolicyKey: PolicyValue] = [.requireLocalEmailVerified: .bool(false)]
        let without = try simulator.simulateSignIn(attempt: attempt(false), overrides: off, now: now)
        assert(without, "signIn.emailNotVerified", .error, 403, "EMAIL_NOT_VERIFIED")
        XCTAssertTrue(without.explanation.contains("with accountLinking.updateUserInfoOnLink, this one would"), without.explanation)
        XCTAssertTrue(without.checks.contains { $0.rule == "signIn.updateUserInfoOnLink" && $0.answer.hasPrefix("no") })
        let with = try simulator.simulateSignIn(attempt: attempt(true), overrides: off, now: now)
        assert(with, "signIn.implicitLink", .linkedAndSignedIn, 200)
        XCTAssertEqual(with.userID, unverifiedUser)
        XCTAssertTrue(with.checks.contains { $0.rule == "signIn.updateUserInfoOnLink" && $0.source.contains("link-account.ts:250") })
        // Not a link: the account's owner is checked as read (applyUpdateUserInfoOnLink runs only on a link).
        var owner = attempt(true)
        owner.email = "ben@gmail.com"
        owner.accountID = googleSub
        _ = try store.db.execute(#"UPDATE "user" SET emailVerified = 0 WHERE id = ?"#, [googleUser])
        assert(try simulator.simulateSignIn(attempt: owner, now: now), "signIn.emailNotVerified", .error, 403, "EMAIL_NOT_VERIFIED")
    }

    /// Provider ids are any non-empty string, matched exactly, as Better Auth matches them: a generic provider may
    /// be spelt with capitals, and `Google` is neither `google` nor trusted by a list that holds `google`.
    func testProviderIDsAreMatchedExactlyWhateverTheirCase() throws {
        var settings = ProviderSettings()
        settings.genericIDTokens = true
        let okta = try simulator.simulateSignIn(attempt: LinkAttempt(provider: "Okta", email: "new@okta.test", emailVerified: true, settings: settings), now: now)
        assert(okta, "signIn.newUser", .newUser, 200)
        let trusted: [PolicyKey: PolicyValue] = [.trustedProviders: try PolicyKey.trustedProviders.parse("google,AcmeSSO"), .requireLocalEmailVerified: .bool(false)]
        let acme = LinkAttempt(provider: "AcmeSSO", email: "cleo@example.com", emailVerified: false, flow: .redirect)
        assert(try simulator.simulateSignIn(attempt: acme, overrides: trusted, now: now), "signIn.implicitLink", .linkedAndSignedIn, 302)
        let lowered: [PolicyKey: PolicyValue] = [.trustedProviders: .providers(["google", "acmesso"]), .requireLocalEmailVerified: .bool(false)]
        let refused = try simulator.simulateSignIn(attempt: acme, overrides: lowered, now: now)
        assert(refused, "signIn.notLinked.untrustedUnverified", .error, 302, "account_not_linked")
        XCTAssertTrue(refused.notes.contains { $0.contains("lists acmesso, which Better Auth matches exactly") }, "\(refused.notes)")
        let google = try simulator.simulateLink(user: BetterAuthUserID(googleUser),
                                                attempt: LinkAttempt(provider: "Google", email: "ben@gmail.com", emailVerified: false, settings: settings), now: now)
        assert(google, "linkSocial.linkingNotAllowed", .error, 401, "LINKING_NOT_ALLOWED")
        XCTAssertTrue(google.notes.contains { $0.contains("Better Auth's built-in provider is google") }, "\(google.notes)")
        XCTAssertThrowsError(try signIn("goo\u{7}gle", "ben@gmail.com"))
    }

    func testSignInNeverConsultsAllowDifferentEmails() throws {
        let relay = try signIn("apple", "zz9@privaterelay.appleid.com", account: "000003.apple.0003",
                               [.autoLinkAllowDifferentEmails: .bool(true), .linkSocialAllowDifferentEmails: .bool(true)])
        assert(relay, "signIn.newUser", .newUser, 200)
        XCTAssertEqual(relay.hideMyEmail?.switchWouldChange, false)
        XCTAssertEqual(relay.notes.count, 1)
        XCTAssertEqual(relay.hypothetical, ["autoLink.allowDifferentEmails=true", "linkSocial.allowDifferentEmails=true"])
    }

    // MARK: Other Better Auth shapes

    func testAStoreWithoutIssuerLooksAccountsUpByProvider() throws {
        let path = scratch.path("ba15.sqlite")
        try Fixtures.database("better-auth-1.5.sql", at: path)
        let old = try Store.initialize(path: path, actor: tester).0
        XCTAssertFalse(old.schema.hasIssuer)
        let simulator = LinkSimulator(store: old)
        let owner = try simulator.simulateSignIn(attempt: LinkAttempt(provider: "google", email: "x@y.z", emailVerified: true, accountID: "104857600000000000001"), now: now)
        XCTAssertEqual(owner.rule, "signIn.accountOwner")
        XCTAssertEqual(owner.userID, "u1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
        XCTAssertTrue(owner.accountLookup.contains("providerId"), owner.accountLookup)
        let taken = try simulator.simulateLink(user: BetterAuthUserID("u2BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"),
                                               attempt: LinkAttempt(provider: "google", email: "ana@example.com", emailVerified: true, accountID: "104857600000000000001"), now: now)
        XCTAssertEqual(taken.errorCode, "SOCIAL_ACCOUNT_ALREADY_LINKED")
        let hideMyEmail = try simulator.simulateLink(user: BetterAuthUserID("u2BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"),
                                                     attempt: LinkAttempt(provider: "google", email: "ana@example.com", emailVerified: true), now: now)
        XCTAssertEqual(hideMyEmail.errorCode, "LINKING_DIFFERENT_EMAILS_NOT_ALLOWED")
        XCTAssertEqual(hideMyEmail.hideMyEmail?.switchWouldChange, true)
    }

    func testSplitIdentitiesFromTheDemoSeederAreHideMyEmailCases() throws {
        let path = scratch.path("demo.sqlite")
        let demo = try Store.initialize(path: path, actor: tester).0
        _ = try DemoSeeder(seed: 3, anchor: now).seed(demo, users: 200)
        let relay = try demo.db.row(#"SELECT id, email FROM "user" WHERE email LIKE '%@privaterelay.appleid.com' LIMIT 1"#)!
        let google = try demo.db.row(#"SELECT u.email, a.accountId FROM "user" u JOIN account a ON a.userId = u.id WHERE a.providerId = 'google' LIMIT 1"#)!
        let decision = try LinkSimulator(store: demo).simulateLink(user: BetterAuthUserID(try relay.string("id")),
                                                                   attempt: LinkAttempt(provider: "google", email: try google.string("email"), emailVerified: true,
                                                                                        accountID: try google.string("accountId")), now: now)
        // The Google account already has its own user: linking cannot undo a split, only a merge can.
        XCTAssertEqual(decision.errorCode, "SOCIAL_ACCOUNT_ALREADY_LINKED")
        XCTAssertEqual(decision.hideMyEmail?.switchWouldChange, false)
    }
}
