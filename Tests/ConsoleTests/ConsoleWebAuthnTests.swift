@testable import Console
import Foundation
@testable import Gatehouse
import HTTPTestSupport
import JOSE
import Storage
import TestEngines
import WebAuthn
@testable import WebAuthnTestSupport
import XCTest

/// Passkeys end to end over a real socket, with the software authenticator: registration (options, §7.1, a credential
/// id once), the login's second step and step-up (§7.2, the counter stored), and the red team's cases: a replayed
/// assertion, another origin or RP id, a cloned key, expired or reused challenges and mfaTokens, a credential
/// registered twice, another admin's passkey, brute force against the throttle. The console runs on loopback, so its
/// relying party is `http://localhost:PORT` (RP id `localhost`).
final class ConsoleWebAuthnTests: XCTestCase {
    var harness: ConsoleHarness!
    override func setUpWithError() throws { harness = try ConsoleHarness(users: 5, transport: .socket) }
    override func tearDown() { harness = nil }

    /// A policy change: a step-up route that succeeds when let through.
    let policyChange = #"{"key":"accountLinking.allowUnlinkingAll","value":true,"reason":"passkey test"}"#

    var origin: String { "http://localhost:\(harness.port)" }
    let rpID = "localhost"

    func object<T: Encodable>(_ value: T) throws -> Any {
        try JSONSerialization.jsonObject(with: JSONEncoder().encode(value))
    }

    func challenge(_ text: Any?) throws -> WebAuthnChallenge {
        WebAuthnChallenge(bytes: try XCTUnwrap(Base64URL.decode(try XCTUnwrap(text as? String))))
    }

    func registrationOptions(_ access: String, password: String = ConsoleHarness.password) throws -> RawResponse {
        try harness.request("POST", "/api/auth/webauthn/register/options", token: access, body: try harness.body(["password": password]))
    }

    /// Asks for creation options and answers them with `authenticator` (a test changes the answer with `edit`).
    func register(_ access: String, _ authenticator: SoftwareAuthenticator, name: String = "Laptop",
                  edit: (inout RegistrationBuilder) -> Void = { _ in }) throws -> RawResponse {
        let options = try registrationOptions(access)
        XCTAssertEqual(options.status, 200, options.bodyText)
        var builder = RegistrationBuilder(authenticator, challenge: try challenge(try harness.json(options)["challenge"]))
        builder.origin = origin
        builder.rpID = rpID
        edit(&builder)
        return try submit(access, builder, name: name)
    }

    func submit(_ access: String, _ builder: RegistrationBuilder, name: String = "Laptop") throws -> RawResponse {
        try harness.request("POST", "/api/auth/webauthn/register", token: access,
                            body: try harness.body(["credential": try object(builder.response), "name": name]))
    }

    /// Signs `challenge` with `authenticator`, its counter one up (a test changes the assertion with `edit`).
    func assertion(_ authenticator: SoftwareAuthenticator, _ challenge: Any?, edit: (inout AssertionBuilder) -> Void = { _ in }) throws -> Any {
        authenticator.signCount += 1
        var builder = AssertionBuilder(authenticator, challenge: try self.challenge(challenge), signCount: authenticator.signCount)
        builder.origin = origin
        builder.rpID = rpID
        edit(&builder)
        return try object(try builder.response())
    }

    /// The password step: the mfaToken, the methods and the passkey's request options.
    func passwordStep(_ username: String) throws -> (token: String, methods: [String], options: [String: Any]) {
        let response = try harness.login(username)
        let body = try harness.json(response)
        XCTAssertNil(body["accessToken"], response.bodyText)
        return (try XCTUnwrap(body["mfaToken"] as? String, response.bodyText), try XCTUnwrap(body["methods"] as? [String]),
                try XCTUnwrap(body["webauthn"] as? [String: Any], response.bodyText))
    }

    func secondStep(_ token: String, _ credential: Any) throws -> RawResponse {
        try harness.request("POST", "/api/auth/login/mfa", body: try harness.body(["mfaToken": token, "method": "webauthn", "credential": credential]))
    }

    func stepUpOptions(_ access: String) throws -> [String: Any] {
        let response = try harness.request("POST", "/api/auth/step-up/options", token: access, body: "{}")
        return try XCTUnwrap(try harness.json(response)["webauthn"] as? [String: Any], response.bodyText)
    }

    func stepUp(_ access: String, _ credential: Any) throws -> RawResponse {
        try harness.request("POST", "/api/auth/step-up", token: access, body: try harness.body(["method": "webauthn", "credential": credential]))
    }

    /// An admin with a registered passkey: the session's access token and the authenticator.
    func enrolled(_ username: String, _ authenticator: SoftwareAuthenticator? = nil) throws -> (access: String, authenticator: SoftwareAuthenticator) {
        let access = try harness.tokens(username).access
        let key = try authenticator ?? SoftwareAuthenticator.es256()
        let registered = try register(access, key)
        XCTAssertEqual(registered.status, 200, registered.bodyText)
        return (access, key)
    }

    func admin(_ username: String) throws -> (store: Store, admin: Admin) {
        let store = try Store.open(path: harness.storePath)
        return (store, try XCTUnwrap(try AdminDirectory(store: store).find(try AdminUsername(username))))
    }

    // MARK: The flow

    func testEnrolAPasskeyLogInWithItAndStepUpWithIt() throws {
        let access = try harness.tokens("root").access
        // Creation options as WebAuthn's JSON.
        let response = try registrationOptions(access)
        XCTAssertEqual(response.status, 200, response.bodyText)
        let options = try harness.json(response)
        XCTAssertEqual(options["rp"] as? [String: String], ["id": "localhost", "name": "Gatehouse"])
        let user = try XCTUnwrap(options["user"] as? [String: String])
        XCTAssertEqual(user["name"], "root")
        XCTAssertEqual(user["displayName"], "root")
        let handle = try XCTUnwrap(Base64URL.decode(try XCTUnwrap(user["id"])))
        XCTAssertEqual(handle.count, 32, "a random handle, not the username")
        XCTAssertEqual((options["pubKeyCredParams"] as? [[String: Any]])?.map { $0["alg"] as? Int }, [-7, -257])
        XCTAssertEqual((options["pubKeyCredParams"] as? [[String: Any]])?.map { $0["type"] as? String }, ["public-key", "public-key"])
        XCTAssertEqual(options["authenticatorSelection"] as? [String: String], ["residentKey": "preferred", "userVerification": "preferred"])
        XCTAssertEqual(options["attestation"] as? String, "none")
        XCTAssertEqual((options["excludeCredentials"] as? [Any])?.count, 0)
        XCTAssertEqual(try challenge(options["challenge"]).bytes.count, 32)

        // Registered: the first factor brings recovery codes, shown once.
        let authenticator = try SoftwareAuthenticator.es256()
        var builder = RegistrationBuilder(authenticator, challenge: try challenge(options["challenge"]))
        builder.origin = origin
        builder.rpID = rpID
        let registered = try submit(access, builder)
        XCTAssertEqual(registered.status, 200, registered.bodyText)
        let factorID = try XCTUnwrap(try harness.json(registered)["id"] as? String)
        XCTAssertEqual((try harness.json(registered)["recoveryCodes"] as? [String])?.count, 10)
        XCTAssertTrue(try harness.auditText().contains("admin.mfa.webauthn.register"))
        // The next options exclude it and keep the same handle; a second passkey brings no new codes.
        let again = try harness.json(try registrationOptions(access))
        XCTAssertEqual((again["excludeCredentials"] as? [[String: Any]])?.map { $0["id"] as? String }, [Base64URL.encode(authenticator.credentialID)])
        XCTAssertEqual((again["user"] as? [String: String])?["id"], user["id"])
        let securityKey = SoftwareAuthenticator.rs256()
        let second = try register(access, securityKey, name: "Security key")
        XCTAssertEqual(second.status, 200, second.bodyText)
        XCTAssertNil(try harness.json(second)["recoveryCodes"])

        // The login asks for the passkey with request options naming both credentials and the RP id.
        let (token, methods, request) = try passwordStep("root")
        XCTAssertEqual(methods, ["webauthn", "recovery"])
        XCTAssertEqual(request["rpId"] as? String, "localhost")
        XCTAssertEqual((request["allowCredentials"] as? [[String: Any]])?.count, 2)
        XCTAssertEqual(try challenge(request["challenge"]).bytes.count, 32)
        let signedIn = try secondStep(token, try assertion(authenticator, request["challenge"]) { $0.userHandle = handle })
        XCTAssertEqual(signedIn.status, 200, signedIn.bodyText)
        let session = try XCTUnwrap(try harness.json(signedIn)["accessToken"] as? String)
        XCTAssertNotNil(try harness.json(try harness.request("GET", "/api/auth/me", token: session))["factorCheckedAt"])
        // The counter is stored, and the passkey's last use.
        let (store, root) = try admin("root")
        let stored = try SecondFactors(store: store).webAuthnCredentials(of: root).first { $0.credentialID == Base64URL.encode(authenticator.credentialID) }
        XCTAssertEqual(stored?.signCount, authenticator.signCount)
        XCTAssertNotNil(try SecondFactors(store: store).factors(of: root).first { $0.id == factorID }?.lastUsedAt)

        // Step-up with the passkey: options carry a fresh challenge, allowCredentials and the RP id.
        harness.clock.advance(seconds: 301)
        XCTAssertEqual(harness.errorCode(try harness.request("POST", "/api/policy", token: session, body: policyChange)), "step_up_required")
        let stepOptions = try stepUpOptions(session)
        XCTAssertEqual(stepOptions["rpId"] as? String, "localhost")
        XCTAssertEqual((stepOptions["allowCredentials"] as? [Any])?.count, 2)
        let stepped = try stepUp(session, try assertion(authenticator, stepOptions["challenge"]))
        XCTAssertEqual(stepped.status, 200, stepped.bodyText)
        XCTAssertEqual(try harness.request("POST", "/api/policy", token: session, body: policyChange).status, 200)
        // The RSA passkey steps up as well.
        harness.clock.advance(seconds: 301)
        XCTAssertEqual(try stepUp(session, try assertion(securityKey, try stepUpOptions(session)["challenge"])).status, 200)
    }

    /// `admins list --json` shows passkeys among the factors (name, created, last used; never key material), and
    /// `admins mfa reset` removes them.
    func testTheListingShowsPasskeysAndTheResetRemovesThem() throws {
        let (_, authenticator) = try enrolled("sam")
        let (token, _, request) = try passwordStep("sam")
        XCTAssertEqual(try secondStep(token, try assertion(authenticator, request["challenge"])).status, 200)
        let (store, sam) = try admin("sam")
        let listing = try SecondFactors(store: store).listing()
        let text = String(decoding: try JSONEncoder().encode(listing), as: UTF8.self)
        let admins = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        let factors = try XCTUnwrap(admins.first { $0["username"] as? String == "sam" }?["factors"] as? [[String: Any]])
        XCTAssertEqual(factors.count, 1)
        XCTAssertEqual(factors[0]["kind"] as? String, "webauthn")
        XCTAssertEqual(factors[0]["name"] as? String, "Laptop")
        XCTAssertNotNil(factors[0]["createdAt"])
        XCTAssertNotNil(factors[0]["lastUsedAt"])
        let key = try XCTUnwrap(try SecondFactors(store: store).webAuthnCredentials(of: sam).first).publicKey
        XCTAssertFalse(text.contains(Base64URL.encode(key)))
        XCTAssertFalse(text.contains(Data(key).base64EncodedString()))
        XCTAssertFalse(text.lowercased().contains(Hex.encode(key).lowercased()))
        let reset = try SecondFactors(store: store).reset(try AdminUsername("sam"), reason: "lost laptop", actor: Actor("ops"), now: harness.clock.now)
        XCTAssertEqual(reset.factorsRemoved, 1)
        XCTAssertEqual(try SecondFactors(store: store).webAuthnCredentials(of: sam).count, 0)
        XCTAssertNotNil(try harness.json(try harness.login("sam"))["accessToken"], "the password alone after a reset")
    }

    /// A passkey is renamed and removed through the factor routes like any factor; removing it needs a step-up, and
    /// with the last factor go the recovery codes and the second step.
    func testAPasskeyIsRenamedAndRemovedLikeAnyFactor() throws {
        let (access, authenticator) = try enrolled("sam")
        let overview = try harness.json(try harness.request("GET", "/api/auth/mfa", token: access))
        XCTAssertEqual(overview["methods"] as? [String], ["webauthn", "recovery"])
        let id = try XCTUnwrap((overview["factors"] as? [[String: Any]])?.first?["id"] as? String)
        XCTAssertEqual((overview["factors"] as? [[String: Any]])?.first?["credentialId"] as? String, Base64URL.encode(authenticator.credentialID))
        let renamed = try harness.request("POST", "/api/auth/mfa/factors/\(id)/rename", token: access, body: #"{"name":"Work laptop"}"#)
        XCTAssertEqual(try harness.json(renamed)["name"] as? String, "Work laptop", renamed.bodyText)
        harness.clock.advance(seconds: 301)
        XCTAssertEqual(harness.errorCode(try harness.request("POST", "/api/auth/mfa/factors/\(id)/remove", token: access, body: "{}")), "step_up_required")
        XCTAssertEqual(try stepUp(access, try assertion(authenticator, try stepUpOptions(access)["challenge"])).status, 200)
        let removed = try harness.request("POST", "/api/auth/mfa/factors/\(id)/remove", token: access, body: "{}")
        XCTAssertEqual(removed.status, 200, removed.bodyText)
        XCTAssertNotNil(try harness.json(try harness.login("sam"))["accessToken"], "no factor: the password alone again")
    }

    /// Registration follows the enrolment rules of TOTP: the password again, step-up once the admin has a factor, and
    /// open while the store requires a factor of an admin who has none.
    func testRegistrationFollowsTheEnrolmentRules() throws {
        let (store, _) = try admin("vera")
        try SecondFactors(store: store).setRequired(true, actor: Actor("ops"), now: harness.clock.now)
        let access = try harness.tokens("vera").access
        XCTAssertEqual(harness.errorCode(try harness.request("GET", "/api/policy", token: access)), "mfa_enrollment_required")
        XCTAssertEqual(harness.errorCode(try registrationOptions(access, password: "wrong password")), "reauthentication_failed")
        let registered = try register(access, try SoftwareAuthenticator.es256())
        XCTAssertEqual(registered.status, 200, registered.bodyText)
        XCTAssertEqual(try harness.request("GET", "/api/policy", token: access).status, 200, "enrolled: everything again")
        harness.clock.advance(seconds: 301)
        XCTAssertEqual(harness.errorCode(try registrationOptions(access)), "step_up_required")
    }

    func testThePasskeyFlowOnPostgres() throws { try flow(on: .postgres) }
    func testThePasskeyFlowOnD1() throws { try flow(on: .d1) }

    /// Registration, the login's second step and step-up, alike on every engine (the user handle's column, the
    /// credential's lookup with it, the counter's write).
    func flow(on engine: EngineKind) throws {
        harness = try ConsoleHarness(users: 5, transport: .socket, engine: engine)
        let (access, authenticator) = try enrolled("root")
        let handle = try XCTUnwrap(Base64URL.decode(try XCTUnwrap((try harness.json(try registrationOptions(access))["user"] as? [String: String])?["id"])))
        let (token, methods, request) = try passwordStep("root")
        XCTAssertEqual(methods, ["webauthn", "recovery"], "\(engine)")
        let signedIn = try secondStep(token, try assertion(authenticator, request["challenge"]) { $0.userHandle = handle })
        XCTAssertEqual(signedIn.status, 200, "\(engine): \(signedIn.bodyText)")
        let replayed = try passwordStep("root")
        let clone = SoftwareAuthenticator(key: authenticator.key, credentialID: authenticator.credentialID, signCount: 0)
        XCTAssertEqual(harness.errorCode(try secondStep(replayed.token, try assertion(clone, replayed.options["challenge"]))), "invalid_code", "\(engine)")
        XCTAssertTrue(try harness.auditText().contains("admin.mfa.webauthn.counter_refused"), "\(engine)")
        let session = try XCTUnwrap(try harness.json(signedIn)["accessToken"] as? String)
        harness.clock.advance(seconds: 301)
        XCTAssertEqual(try stepUp(session, try assertion(authenticator, try stepUpOptions(session)["challenge"])).status, 200, "\(engine)")
        XCTAssertEqual(try harness.request("POST", "/api/policy", token: session, body: policyChange).status, 200, "\(engine)")
    }

    // MARK: The red team

    func testAReplayedAssertionIsRefused() throws {
        let (access, authenticator) = try enrolled("root")
        let (token, _, request) = try passwordStep("root")
        let signed = try assertion(authenticator, request["challenge"])
        XCTAssertEqual(try secondStep(token, signed).status, 200)
        // The same assertion again: with its own token (used), and at a new login (another challenge).
        XCTAssertEqual(harness.errorCode(try secondStep(token, signed)), "mfa_token_used")
        XCTAssertEqual(harness.errorCode(try secondStep(try passwordStep("root").token, signed)), "invalid_code")
        // A step-up's assertion replayed, and the login's as a step-up.
        let stepSigned = try assertion(authenticator, try stepUpOptions(access)["challenge"])
        XCTAssertEqual(try stepUp(access, stepSigned).status, 200)
        XCTAssertEqual(harness.errorCode(try stepUp(access, stepSigned)), "invalid_code")
        XCTAssertEqual(harness.errorCode(try stepUp(access, signed)), "invalid_code")
    }

    func testAnotherOriginOrAnotherRPIDIsRefused() throws {
        let access = try harness.tokens("root").access
        for (origin, rpID) in [("https://evil.example", "localhost"), ("http://localhost:1", "localhost"), (self.origin, "evil.example")] {
            let refused = try register(access, try SoftwareAuthenticator.es256()) { $0.origin = origin; $0.rpID = rpID }
            XCTAssertEqual(refused.status, 400, refused.bodyText)
            XCTAssertEqual(harness.errorCode(refused), "passkey_refused")
        }
        XCTAssertTrue(try harness.auditText().contains("admin.mfa.webauthn.register.failed"))
        XCTAssertTrue(try harness.auditText().contains("RP id hash"))
        let (_, authenticator) = try enrolled("sam")
        for (origin, rpID) in [("https://evil.example", "localhost"), (self.origin, "evil.example"), ("http://127.0.0.1:\(harness.port)", "localhost")] {
            let (token, _, request) = try passwordStep("sam")
            let refused = try secondStep(token, try assertion(authenticator, request["challenge"]) { $0.origin = origin; $0.rpID = rpID })
            XCTAssertEqual(harness.errorCode(refused), "invalid_code", "\(origin) \(rpID): \(refused.bodyText)")
        }
        let (token, _, request) = try passwordStep("sam")
        XCTAssertEqual(try secondStep(token, try assertion(authenticator, request["challenge"])).status, 200, "the token lived through the refusals")
    }

    func testAClonedKeyIsRefusedAndAudited() throws {
        let (_, authenticator) = try enrolled("root")
        let (token, _, request) = try passwordStep("root")
        XCTAssertEqual(try secondStep(token, try assertion(authenticator, request["challenge"])).status, 200)
        authenticator.signCount += 5
        let jumped = try passwordStep("root")
        XCTAssertEqual(try secondStep(jumped.token, try assertion(authenticator, jumped.options["challenge"])).status, 200, "a counter may jump ahead")
        // The clone: the same key and credential, its counter behind the original's.
        let clone = SoftwareAuthenticator(key: authenticator.key, credentialID: authenticator.credentialID, signCount: 1)
        let cloned = try passwordStep("root")
        let refused = try secondStep(cloned.token, try assertion(clone, cloned.options["challenge"]))
        XCTAssertEqual(harness.errorCode(refused), "invalid_code", refused.bodyText)
        XCTAssertTrue(try harness.auditText().contains("admin.mfa.webauthn.counter_refused"))
        // The original goes on.
        XCTAssertEqual(try secondStep(cloned.token, try assertion(authenticator, cloned.options["challenge"])).status, 200)
    }

    func testExpiredOrReusedChallengesAndTokensAreRefused() throws {
        let access = try harness.tokens("root").access
        // A registration challenge is used once.
        let options = try harness.json(try registrationOptions(access))
        var first = RegistrationBuilder(try SoftwareAuthenticator.es256(), challenge: try challenge(options["challenge"]))
        first.origin = origin
        first.rpID = rpID
        var misnamed = first
        misnamed.authenticator = try SoftwareAuthenticator.es256()
        XCTAssertEqual(harness.errorCode(try submit(access, misnamed, name: String(repeating: "n", count: 65))), "invalid", "a name too long")
        XCTAssertEqual(try submit(access, first).status, 200, "the name was checked before the challenge was used")
        var reused = first
        reused.authenticator = try SoftwareAuthenticator.es256()
        XCTAssertEqual(harness.errorCode(try submit(access, reused)), "passkey_refused", "a used registration challenge")
        // A registration challenge expires after 5 minutes.
        let late = try harness.json(try registrationOptions(access))
        harness.clock.advance(seconds: 301)
        var expired = RegistrationBuilder(try SoftwareAuthenticator.es256(), challenge: try challenge(late["challenge"]))
        expired.origin = origin
        expired.rpID = rpID
        XCTAssertEqual(harness.errorCode(try submit(access, expired)), "passkey_refused", "an expired registration challenge")
        // A challenge issued for a step-up does not register.
        let authenticator = first.authenticator
        let stepChallenge = try stepUpOptions(access)["challenge"]
        var crossed = RegistrationBuilder(try SoftwareAuthenticator.es256(), challenge: try challenge(stepChallenge))
        crossed.origin = origin
        crossed.rpID = rpID
        XCTAssertEqual(harness.errorCode(try submit(access, crossed)), "passkey_refused", "a step-up challenge")
        // A step-up challenge is used once and expires.
        XCTAssertEqual(try stepUp(access, try assertion(authenticator, stepChallenge)).status, 200)
        XCTAssertEqual(harness.errorCode(try stepUp(access, try assertion(authenticator, stepChallenge))), "invalid_code")
        let stale = try stepUpOptions(access)["challenge"]
        harness.clock.advance(seconds: 301)
        XCTAssertEqual(harness.errorCode(try stepUp(access, try assertion(authenticator, stale))), "invalid_code")
        // The login's mfaToken expires after 5 minutes, and is used once.
        let (token, _, request) = try passwordStep("root")
        harness.clock.advance(seconds: 301)
        XCTAssertEqual(harness.errorCode(try secondStep(token, try assertion(authenticator, request["challenge"]))), "mfa_token_expired")
        let (fresh, _, freshRequest) = try passwordStep("root")
        XCTAssertEqual(try secondStep(fresh, try assertion(authenticator, freshRequest["challenge"])).status, 200)
        XCTAssertEqual(harness.errorCode(try secondStep(fresh, try assertion(authenticator, freshRequest["challenge"]))), "mfa_token_used")
    }

    func testACredentialIDIsRegisteredOnce() throws {
        let (access, authenticator) = try enrolled("root")
        // The same authenticator again (one that ignores excludeCredentials), by the same admin or another.
        let again = try register(access, authenticator)
        XCTAssertEqual(again.status, 409, again.bodyText)
        let sam = try harness.tokens("sam").access
        let other = try register(sam, authenticator)
        XCTAssertEqual(other.status, 409, other.bodyText)
        XCTAssertTrue(try harness.auditText().contains("credential id already registered"))
        let (store, samAdmin) = try admin("sam")
        XCTAssertEqual(try SecondFactors(store: store).factors(of: samAdmin).count, 0)
    }

    func testAnotherAdminsPasskeyIsRefused() throws {
        let (_, rootKey) = try enrolled("root")
        let (_, samKey) = try enrolled("sam")
        let (token, _, request) = try passwordStep("sam")
        XCTAssertEqual(harness.errorCode(try secondStep(token, try assertion(rootKey, request["challenge"]))), "invalid_code")
        // Sam's own passkey claiming root's user handle.
        let rootHandle = try SecondFactors(store: try admin("root").store).webAuthnUserHandle(of: try admin("root").admin)
        XCTAssertEqual(harness.errorCode(try secondStep(token, try assertion(samKey, request["challenge"]) { $0.userHandle = rootHandle })), "invalid_code")
        XCTAssertEqual(try secondStep(token, try assertion(samKey, request["challenge"])).status, 200)
        // Root's challenge is root's: sam's passkey cannot answer root's login, nor root's step-up.
        let (rootToken, _, rootRequest) = try passwordStep("root")
        XCTAssertEqual(harness.errorCode(try secondStep(rootToken, try assertion(samKey, rootRequest["challenge"]))), "invalid_code")
    }

    /// Wrong passkeys count toward the username's throttle as wrong codes do: 5 failures lock the name.
    func testWrongPasskeysHitTheLoginThrottle() throws {
        let (_, authenticator) = try enrolled("root")
        let stranger = try SoftwareAuthenticator.es256()
        let (token, _, request) = try passwordStep("root")
        for _ in 0..<5 {
            XCTAssertEqual(harness.errorCode(try secondStep(token, try assertion(stranger, request["challenge"]))), "invalid_code")
        }
        let locked = try secondStep(token, try assertion(authenticator, request["challenge"]))
        XCTAssertEqual(locked.status, 429, "the right passkey is refused while the name is locked: \(locked.bodyText)")
        XCTAssertTrue(try harness.auditText().contains("console.mfa.failed"))
    }

    // MARK: The origin

    /// `serve --origin`: behind a proxy the relying party is the public origin, which the console also accepts in
    /// `Host` and `Origin`; an origin browsers refuse for passkeys is refused at start.
    func testAPublicOriginIsTheRelyingParty() throws {
        harness = try ConsoleHarness(users: 5, transport: .socket, origin: "https://Console.Example.com:443/")
        XCTAssertEqual(harness.console.relyingParty?.id, "console.example.com")
        XCTAssertEqual(harness.console.relyingParty?.origin, "https://console.example.com")
        let login = try harness.request("POST", "/api/auth/login", body: try harness.body(["username": "root", "password": ConsoleHarness.password]),
                                        headers: ["Origin: https://console.example.com"])
        XCTAssertEqual(login.status, 200, login.bodyText)
        let access = try XCTUnwrap(try harness.json(login)["accessToken"] as? String)
        let proxied = try harness.exchange("GET /api/auth/me HTTP/1.1\r\nHost: console.example.com\r\nAuthorization: Bearer \(access)\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(proxied.status, 200, proxied.bodyText)
        let options = try harness.json(try registrationOptions(access))
        XCTAssertEqual((options["rp"] as? [String: String])?["id"], "console.example.com")
        var builder = RegistrationBuilder(try SoftwareAuthenticator.es256(), challenge: try challenge(options["challenge"]))
        builder.origin = "https://console.example.com"
        builder.rpID = "console.example.com"
        XCTAssertEqual(try submit(access, builder).status, 200)
        XCTAssertEqual(try harness.request("POST", "/api/auth/logout", token: access, body: "{}", headers: ["Origin: https://evil.example"]).status, 403)
        for refused in ["https://10.0.0.1", "http://console.example.com", "https://console.example.com/path"] {
            let options = ConsoleServer.Options(storePath: harness.storePath, publicDirectory: ConsoleHarness.packageRoot.appendingPathComponent("Public").path,
                                                port: 0, origin: refused)
            XCTAssertThrowsError(try ConsoleServer(options: options), refused) {
                XCTAssertTrue(($0 as? GatehouseError)?.message.hasPrefix("the console's origin") ?? false, "\($0)")
            }
        }
    }

    // MARK: Time

    /// The server time of a passkey login: the password step and the second step (§7.2 verification, the counter
    /// written, the token family started), each measured around the console's request handler in-process (no
    /// socket, no client), median and worst of 30, on SQLite. The second step must take under 50 ms.
    func testAPasskeyLoginTakesUnder50MillisecondsOfServerTime() throws {
        harness = try ConsoleHarness(users: 50)
        let (_, authenticator) = try enrolled("root")
        var passwordSteps: [Double] = []
        var secondSteps: [Double] = []
        func timed(_ text: String) throws -> (RawResponse, Double) {
            let start = DispatchTime.now().uptimeNanoseconds
            let response = try ConsoleHarness.handleInProcess(text, console: harness.console)
            return (response, Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
        }
        func post(_ path: String, _ body: String) -> String {
            "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(harness.port)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        }
        for _ in 0..<30 {
            let (login, passwordTime) = try timed(post("/api/auth/login", try harness.body(["username": "root", "password": ConsoleHarness.password])))
            let body = try harness.json(login)
            let credential = try assertion(authenticator, (body["webauthn"] as? [String: Any])?["challenge"])
            let (signedIn, secondTime) = try timed(post("/api/auth/login/mfa", try harness.body(["mfaToken": try XCTUnwrap(body["mfaToken"] as? String),
                                                                                                "method": "webauthn", "credential": credential])))
            XCTAssertEqual(signedIn.status, 200, signedIn.bodyText)
            passwordSteps.append(passwordTime)
            secondSteps.append(secondTime)
        }
        func summary(_ times: [Double]) -> String {
            let sorted = times.sorted()
            return String(format: "median %.2f ms, worst %.2f ms", sorted[sorted.count / 2], sorted.last ?? 0)
        }
        print("passkey login server time: password step (PBKDF2 at the harness's 1,000 iterations) \(summary(passwordSteps)); second step \(summary(secondSteps))")
        XCTAssertLessThan(secondSteps.sorted()[secondSteps.count / 2], 50)
    }
}
