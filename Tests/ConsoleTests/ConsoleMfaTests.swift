@testable import Console
import Foundation
@testable import Gatehouse
import HTTPTestSupport
import JOSE
import Storage
import TestEngines
import XCTest

/// The console's second factor over a real socket: TOTP enrolment, the login's second step, the mfaToken's single
/// use and lifetime, codes refused when reused or outside ±1 step, brute force against the login throttle, recovery
/// codes once, step-up before irreversible writes, and the store-wide requirement.
final class ConsoleMfaTests: XCTestCase {
    var harness: ConsoleHarness!
    override func setUpWithError() throws { harness = try ConsoleHarness(users: 5, transport: .socket) }
    override func tearDown() { harness = nil }

    /// A policy change: a step-up route that succeeds when let through.
    let policyChange = #"{"key":"accountLinking.allowUnlinkingAll","value":true,"reason":"mfa test"}"#

    /// Enrols and confirms TOTP for `username` through the API; returns the session's access token, the authenticator
    /// and the recovery codes.
    func enrol(_ username: String) throws -> (access: String, totp: TOTP, recoveryCodes: [String], secret: String) {
        let access = try harness.tokens(username).access
        let enrolled = try harness.request("POST", "/api/auth/mfa/totp", token: access, body: try harness.body(["password": ConsoleHarness.password]))
        XCTAssertEqual(enrolled.status, 200, enrolled.bodyText)
        let body = try harness.json(enrolled)
        let secret = try XCTUnwrap(body["secret"] as? String)
        XCTAssertTrue((body["otpauthUri"] as? String)?.hasPrefix("otpauth://totp/Gatehouse:\(username)?secret=\(secret)") ?? false, enrolled.bodyText)
        let totp = TOTP(secret: try XCTUnwrap(Base32.decode(secret)))
        let confirmed = try harness.request("POST", "/api/auth/mfa/totp/confirm", token: access, body: try harness.body(["code": totp.code(at: harness.clock.now)]))
        XCTAssertEqual(confirmed.status, 200, confirmed.bodyText)
        let codes = try XCTUnwrap(try harness.json(confirmed)["recoveryCodes"] as? [String])
        XCTAssertEqual(codes.count, 10)
        return (access, totp, codes, secret)
    }

    /// The password step for an admin with a factor: the mfaToken and methods, no access token.
    func passwordStep(_ username: String) throws -> (token: String, methods: [String]) {
        let response = try harness.login(username)
        XCTAssertEqual(response.status, 200, response.bodyText)
        let body = try harness.json(response)
        XCTAssertEqual(body["mfaRequired"] as? Bool, true, response.bodyText)
        XCTAssertNil(body["accessToken"], "no access token before the second factor")
        XCTAssertNil(body["refreshToken"])
        return (try XCTUnwrap(body["mfaToken"] as? String), try XCTUnwrap(body["methods"] as? [String]))
    }

    func secondStep(_ token: String, method: String = "totp", code: String) throws -> RawResponse {
        try harness.request("POST", "/api/auth/login/mfa", body: try harness.body(["mfaToken": token, "method": method, "code": code]))
    }

    /// The next step's code: the step confirmed or used last is never accepted again.
    func nextCode(_ totp: TOTP) -> String {
        harness.clock.advance(seconds: 30)
        return totp.code(at: harness.clock.now)
    }

    func testLoginAsksForTheFactorAndTheSecondStepHandsOutTheTokens() throws {
        let enrolled = try enrol("root")
        let (token, methods) = try passwordStep("root")
        XCTAssertEqual(methods, ["totp", "recovery"])
        XCTAssertTrue(token.hasPrefix("ghm_"))
        let bundle = try secondStep(token, code: nextCode(enrolled.totp))
        XCTAssertEqual(bundle.status, 200, bundle.bodyText)
        let access = try XCTUnwrap(try harness.json(bundle)["accessToken"] as? String)
        let me = try harness.json(try harness.request("GET", "/api/auth/me", token: access))
        XCTAssertEqual(me["hasFactor"] as? Bool, true)
        XCTAssertNotNil(me["factorCheckedAt"])
        // An admin without a factor still logs in with the password alone.
        XCTAssertNotNil(try harness.json(try harness.login("vera"))["accessToken"])
        // The secret is shown once: never again in a response, the audit log or the store (sealed at rest).
        let overview = try harness.request("GET", "/api/auth/mfa", token: access)
        XCTAssertEqual(overview.status, 200, overview.bodyText)
        XCTAssertFalse(overview.bodyText.contains(enrolled.secret))
        XCTAssertEqual((try harness.json(overview)["factors"] as? [[String: Any]])?.first?["kind"] as? String, "totp")
        XCTAssertFalse(try harness.auditText().contains(enrolled.secret))
        let dump = try PostgresSecretsAtRestTests.run("/usr/bin/sqlite3", [harness.storePath, ".dump"]).stdout
        XCTAssertTrue(dump.contains("gatehouse_admin_factors"), "the dump is of this store")
        XCTAssertFalse(dump.contains(enrolled.secret), "no base32 secret at rest")
        XCTAssertFalse(dump.uppercased().contains(Hex.encode(try XCTUnwrap(Base32.decode(enrolled.secret))).uppercased()), "nor its bytes")
        for code in enrolled.recoveryCodes { XCTAssertFalse(dump.contains(code)) }
    }

    func testAnMfaTokenIsSingleUseAndLivesFiveMinutes() throws {
        let enrolled = try enrol("root")
        let first = try passwordStep("root").token
        XCTAssertEqual(try secondStep(first, code: nextCode(enrolled.totp)).status, 200)
        let reused = try secondStep(first, code: nextCode(enrolled.totp))
        XCTAssertEqual(reused.status, 401, reused.bodyText)
        XCTAssertEqual(harness.errorCode(reused), "mfa_token_used")
        let second = try passwordStep("root").token
        harness.clock.advance(seconds: 301)
        let late = try secondStep(second, code: enrolled.totp.code(at: harness.clock.now))
        XCTAssertEqual(late.status, 401, late.bodyText)
        XCTAssertEqual(harness.errorCode(late), "mfa_token_expired")
        let forged = try secondStep("ghm_" + String(repeating: "A", count: 43), code: "123456")
        XCTAssertEqual(harness.errorCode(forged), "invalid_mfa_token")
        XCTAssertEqual(harness.errorCode(try secondStep("gha_nothing", code: "123456")), "invalid_mfa_token")
        // An admin disabled between the two steps is refused as a wrong password would be.
        let third = try passwordStep("root").token
        let store = try Store.open(path: harness.storePath)
        try store.db.write { try store.db.execute("UPDATE gatehouse_admins SET disabled = 1 WHERE username = 'root'") }
        XCTAssertEqual(harness.errorCode(try secondStep(third, code: nextCode(enrolled.totp))), "invalid_credentials")
    }

    func testAReusedCodeAndACodeOutsideOneStepAreRefused() throws {
        let enrolled = try enrol("root")
        let confirmStep = TOTP.step(at: harness.clock.now)
        let token = try passwordStep("root").token
        // The code that confirmed the factor: its step is used.
        let reused = try secondStep(token, code: enrolled.totp.code(step: confirmStep))
        XCTAssertEqual(reused.status, 401, reused.bodyText)
        XCTAssertEqual(harness.errorCode(reused), "invalid_code")
        XCTAssertNil(reused.header("x-auth-error"))
        harness.clock.advance(seconds: 120)
        let now = TOTP.step(at: harness.clock.now)
        XCTAssertEqual(harness.errorCode(try secondStep(token, code: enrolled.totp.code(step: now + 2))), "invalid_code", "two steps ahead")
        XCTAssertEqual(harness.errorCode(try secondStep(token, code: enrolled.totp.code(step: now - 2))), "invalid_code", "two steps behind")
        // A wrong code left the token usable: the right one (one step behind) goes through.
        XCTAssertEqual(try secondStep(token, code: enrolled.totp.code(step: now - 1)).status, 200)
        XCTAssertTrue(try harness.auditText().contains("console.mfa.failed"))
    }

    /// Wrong codes count toward the username's throttle as wrong passwords do, and a new password step does not clear
    /// them: 5 failures lock the name.
    func testBruteForceOfCodesHitsTheLoginThrottle() throws {
        let enrolled = try enrol("root")
        let token = try passwordStep("root").token
        for guess in ["000000", "111111", "222222"] {
            XCTAssertEqual(harness.errorCode(try secondStep(token, code: guess)), "invalid_code")
        }
        // Logging in again with the right password does not wipe the failures.
        let again = try passwordStep("root").token
        for guess in ["333333", "444444"] {
            XCTAssertEqual(harness.errorCode(try secondStep(again, code: guess)), "invalid_code")
        }
        // The next step's code, within the window, without moving the clock past the 30 s lock.
        let locked = try secondStep(again, code: enrolled.totp.code(step: TOTP.step(at: harness.clock.now) + 1))
        XCTAssertEqual(locked.status, 429, "the right code is refused while the name is locked: \(locked.bodyText)")
        XCTAssertNotNil(locked.header("retry-after"))
        XCTAssertEqual(try harness.login("root").status, 429)
    }

    func testARecoveryCodeWorksOnce() throws {
        let enrolled = try enrol("root")
        let first = try secondStep(try passwordStep("root").token, method: "recovery", code: enrolled.recoveryCodes[3])
        XCTAssertEqual(first.status, 200, first.bodyText)
        let again = try secondStep(try passwordStep("root").token, method: "recovery", code: enrolled.recoveryCodes[3])
        XCTAssertEqual(again.status, 401, again.bodyText)
        XCTAssertEqual(harness.errorCode(again), "invalid_code")
        let unknownMethod = try secondStep(try passwordStep("root").token, method: "sms", code: "123456")
        XCTAssertEqual(unknownMethod.status, 400, unknownMethod.bodyText)
    }

    func testStepUpIsRequiredOnceTheWindowPassesAndAFreshCheckLetsTheWriteThrough() throws {
        let enrolled = try enrol("root")
        // Confirming the factor was a check: the window is open.
        let open = try harness.request("POST", "/api/policy", token: enrolled.access, body: policyChange)
        XCTAssertEqual(open.status, 200, open.bodyText)
        harness.clock.advance(seconds: 301)
        let stale = try harness.request("POST", "/api/policy", token: enrolled.access, body: policyChange)
        XCTAssertEqual(stale.status, 403, stale.bodyText)
        XCTAssertEqual(harness.errorCode(stale), "step_up_required")
        // Reads are not stepped up.
        XCTAssertEqual(try harness.request("GET", "/api/policy", token: enrolled.access).status, 200)
        let options = try harness.request("POST", "/api/auth/step-up/options", token: enrolled.access, body: "{}")
        XCTAssertEqual(options.status, 200, options.bodyText)
        XCTAssertEqual(try harness.json(options)["methods"] as? [String], ["totp", "recovery"])
        let wrong = try harness.request("POST", "/api/auth/step-up", token: enrolled.access, body: try harness.body(["method": "totp", "code": "000000"]))
        XCTAssertEqual(wrong.status, 401, wrong.bodyText)
        XCTAssertEqual(harness.errorCode(wrong), "invalid_code")
        XCTAssertEqual(harness.errorCode(try harness.request("POST", "/api/policy", token: enrolled.access, body: policyChange)), "step_up_required")
        let stepped = try harness.request("POST", "/api/auth/step-up", token: enrolled.access,
                                          body: try harness.body(["method": "totp", "code": enrolled.totp.code(at: harness.clock.now)]))
        XCTAssertEqual(stepped.status, 200, stepped.bodyText)
        XCTAssertEqual(try harness.request("POST", "/api/policy", token: enrolled.access, body: policyChange).status, 200)
        // The check belongs to the login: a refreshed token keeps it; another login of the same admin has its own.
        harness.clock.advance(seconds: 200)
        XCTAssertEqual(try harness.request("POST", "/api/policy", token: enrolled.access, body: policyChange).status, 200)
        // MFA changes are stepped up too.
        harness.clock.advance(seconds: 200)
        let regenerate = try harness.request("POST", "/api/auth/mfa/recovery-codes", token: enrolled.access, body: "{}")
        XCTAssertEqual(harness.errorCode(regenerate), "step_up_required", regenerate.bodyText)
        XCTAssertTrue(try harness.auditText().contains("console.step_up"))
        // An admin without a factor is never asked to step up.
        let undo = try harness.request("POST", "/api/merges/999/undo", token: try harness.tokens("sam").access, body: #"{"reason":"x"}"#)
        XCTAssertNotEqual(harness.errorCode(undo), "step_up_required", undo.bodyText)
        XCTAssertNotEqual(undo.status, 403, undo.bodyText)
    }

    func testARequiredFactorLimitsAnAdminWithoutOneToEnrolment() throws {
        let store = try Store.open(path: harness.storePath)
        try SecondFactors(store: store).setRequired(true, actor: Actor("ops"), now: harness.clock.now)
        let access = try harness.tokens("vera").access
        for (method, path) in [("GET", "/api/policy"), ("GET", "/api/users?q=a"), ("GET", "/api/audit")] {
            let refused = try harness.request(method, path, token: access)
            XCTAssertEqual(refused.status, 403, "\(path): \(refused.bodyText)")
            XCTAssertEqual(harness.errorCode(refused), "mfa_enrollment_required", path)
        }
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: access).status, 200)
        XCTAssertEqual(try harness.request("GET", "/api/auth/mfa", token: access).status, 200)
        let enrolled = try harness.request("POST", "/api/auth/mfa/totp", token: access, body: try harness.body(["password": ConsoleHarness.password]))
        XCTAssertEqual(enrolled.status, 200, enrolled.bodyText)
        let totp = TOTP(secret: try XCTUnwrap(Base32.decode(try XCTUnwrap(try harness.json(enrolled)["secret"] as? String))))
        XCTAssertEqual(try harness.request("POST", "/api/auth/mfa/totp/confirm", token: access,
                                           body: try harness.body(["code": totp.code(at: harness.clock.now)])).status, 200)
        XCTAssertEqual(try harness.request("GET", "/api/policy", token: access).status, 200, "enrolled: everything again")
    }

    func testRemovingAFactorNeedsAStepUpAndEndsTheSecondStep() throws {
        let enrolled = try enrol("sam")
        let overview = try harness.json(try harness.request("GET", "/api/auth/mfa", token: enrolled.access))
        let id = try XCTUnwrap((overview["factors"] as? [[String: Any]])?.first?["id"] as? String)
        let renamed = try harness.request("POST", "/api/auth/mfa/factors/\(id)/rename", token: enrolled.access, body: #"{"name":"Work phone"}"#)
        XCTAssertEqual(try harness.json(renamed)["name"] as? String, "Work phone", renamed.bodyText)
        harness.clock.advance(seconds: 301)
        XCTAssertEqual(harness.errorCode(try harness.request("POST", "/api/auth/mfa/factors/\(id)/remove", token: enrolled.access, body: "{}")), "step_up_required")
        XCTAssertEqual(try harness.request("POST", "/api/auth/step-up", token: enrolled.access,
                                           body: try harness.body(["method": "recovery", "code": enrolled.recoveryCodes[0]])).status, 200)
        let removed = try harness.request("POST", "/api/auth/mfa/factors/\(id)/remove", token: enrolled.access, body: "{}")
        XCTAssertEqual(removed.status, 200, removed.bodyText)
        XCTAssertNotNil(try harness.json(try harness.login("sam"))["accessToken"], "no factor: the password alone again")
    }

    func testTheFlowOnPostgres() throws { try flow(on: .postgres) }
    func testTheFlowOnD1() throws { try flow(on: .d1) }
    func testTheFlowOnSQLite() throws { try flow(on: .sqlite) }

    /// Enrolment, the login's second step, single use of the token and the code, step-up, a recovery code, the
    /// requirement and the break-glass reset, alike on every engine (its SQL and its way of writing).
    func flow(on engine: EngineKind) throws {
        harness = try ConsoleHarness(users: 5, engine: engine)
        let enrolled = try enrol("root")
        let token = try passwordStep("root").token
        let code = nextCode(enrolled.totp)
        XCTAssertEqual(try secondStep(token, code: code).status, 200, "\(engine)")
        XCTAssertEqual(harness.errorCode(try secondStep(token, code: code)), "mfa_token_used", "\(engine)")
        XCTAssertEqual(harness.errorCode(try secondStep(try passwordStep("root").token, code: code)), "invalid_code", "\(engine): the code again")
        XCTAssertEqual(try secondStep(try passwordStep("root").token, method: "recovery", code: enrolled.recoveryCodes[0]).status, 200, "\(engine)")
        XCTAssertEqual(harness.errorCode(try secondStep(try passwordStep("root").token, method: "recovery", code: enrolled.recoveryCodes[0])), "invalid_code")
        harness.clock.advance(seconds: 301)
        XCTAssertEqual(harness.errorCode(try harness.request("POST", "/api/policy", token: enrolled.access, body: policyChange)), "step_up_required", "\(engine)")
        XCTAssertEqual(try harness.request("POST", "/api/auth/step-up", token: enrolled.access,
                                           body: try harness.body(["method": "totp", "code": nextCode(enrolled.totp)])).status, 200, "\(engine)")
        XCTAssertEqual(try harness.request("POST", "/api/policy", token: enrolled.access, body: policyChange).status, 200, "\(engine)")
        let store = try Store.open(path: harness.storePath)
        let factors = SecondFactors(store: store)
        try factors.setRequired(true, actor: Actor("ops"), now: harness.clock.now)
        XCTAssertEqual(harness.errorCode(try harness.request("GET", "/api/policy", token: try harness.tokens("vera").access)), "mfa_enrollment_required", "\(engine)")
        // At rest on this engine: a dump of the database holds neither the base32 secret nor its bytes, nor a recovery code.
        let dump = engine == .postgres
            ? try PostgresSecretsAtRestTests.run(try PostgresSecretsAtRestTests.pgDump(), [harness.storePath, "--data-only", "--no-owner"]).stdout
            : try PostgresSecretsAtRestTests.run("/usr/bin/sqlite3", [harness.d1File ?? harness.storePath, ".dump"]).stdout
        XCTAssertTrue(dump.contains("Authenticator app"), "\(engine): the dump holds the factor's row")
        XCTAssertFalse(dump.contains(enrolled.secret), "\(engine)")
        XCTAssertFalse(dump.lowercased().contains(Hex.encode(try XCTUnwrap(Base32.decode(enrolled.secret))).lowercased()), "\(engine)")
        for code in enrolled.recoveryCodes { XCTAssertFalse(dump.contains(code), "\(engine)") }
        let reset = try factors.reset(try AdminUsername("root"), reason: "lost phone", actor: Actor("ops"), now: harness.clock.now)
        XCTAssertEqual(reset.factorsRemoved, 1, "\(engine)")
        XCTAssertEqual(reset.recoveryCodesRemoved, 9, "\(engine)")
        XCTAssertNotNil(try harness.json(try harness.login("root"))["accessToken"], "\(engine): the password alone after a reset")
    }

    /// Passkeys plug in through `WebAuthnAssertionVerifier`: with one, the login and the step-up offer them with a
    /// challenge, an assertion over another challenge (a replay) is refused, a step-up challenge is used once, and a
    /// counter that does not grow is refused and audited.
    func testAPasskeyPlugsInThroughTheVerifierSeam() throws {
        harness = try ConsoleHarness(users: 5, transport: .socket, webauthn: FakeWebAuthnVerifier())
        let store = try Store.open(path: harness.storePath)
        let root = try XCTUnwrap(try AdminDirectory(store: store).find(try AdminUsername("root")))
        _ = try SecondFactors(store: store).addWebAuthnCredential(root, name: "Laptop", credentialID: "cred-1", publicKey: [1, 2, 3], signCount: 1,
                                                                  actor: root.consoleActor, now: harness.clock.now)
        func assertion(_ challenge: String, counter: Int, id: String = "cred-1") -> [String: Any] {
            ["id": id, "challenge": challenge, "counter": counter]
        }
        func second(_ token: String, _ credential: [String: Any]) throws -> RawResponse {
            try harness.request("POST", "/api/auth/login/mfa", body: try harness.body(["mfaToken": token, "method": "webauthn", "credential": credential]))
        }
        let login = try harness.json(try harness.login("root"))
        XCTAssertEqual(login["methods"] as? [String], ["webauthn", "recovery"])
        let options = try XCTUnwrap(login["webauthn"] as? [String: Any])
        let challenge = try XCTUnwrap(options["challenge"] as? String)
        XCTAssertEqual((options["allowCredentials"] as? [[String: Any]])?.first?["id"] as? String, "cred-1")
        let token = try XCTUnwrap(login["mfaToken"] as? String)
        let signedIn = try second(token, assertion(challenge, counter: 2))
        XCTAssertEqual(signedIn.status, 200, signedIn.bodyText)
        let access = try XCTUnwrap(try harness.json(signedIn)["accessToken"] as? String)
        // The same assertion at another login: its challenge is not this login's.
        let replayToken = try XCTUnwrap(try harness.json(try harness.login("root"))["mfaToken"] as? String)
        XCTAssertEqual(harness.errorCode(try second(replayToken, assertion(challenge, counter: 3))), "invalid_code")
        // A counter that does not grow: a cloned authenticator.
        let cloneLogin = try harness.json(try harness.login("root"))
        let cloned = try second(try XCTUnwrap(cloneLogin["mfaToken"] as? String),
                                assertion(try XCTUnwrap((cloneLogin["webauthn"] as? [String: Any])?["challenge"] as? String), counter: 2))
        XCTAssertEqual(harness.errorCode(cloned), "invalid_code", cloned.bodyText)
        XCTAssertTrue(try harness.auditText().contains("admin.mfa.webauthn.counter_refused"))
        // Step-up with a passkey: the options' challenge, once.
        harness.clock.advance(seconds: 301)
        let stepOptions = try harness.json(try harness.request("POST", "/api/auth/step-up/options", token: access, body: "{}"))
        let stepChallenge = try XCTUnwrap((stepOptions["webauthn"] as? [String: Any])?["challenge"] as? String)
        func stepUp(_ credential: [String: Any]) throws -> RawResponse {
            try harness.request("POST", "/api/auth/step-up", token: access, body: try harness.body(["method": "webauthn", "credential": credential]))
        }
        XCTAssertEqual(harness.errorCode(try stepUp(assertion("bm90LWlzc3VlZA", counter: 10))), "invalid_code", "a challenge never issued")
        XCTAssertEqual(try stepUp(assertion(stepChallenge, counter: 10)).status, 200)
        XCTAssertEqual(harness.errorCode(try stepUp(assertion(stepChallenge, counter: 11))), "invalid_code", "the step-up challenge is used")
        XCTAssertEqual(try harness.request("POST", "/api/policy", token: access, body: policyChange).status, 200)
    }

    /// An enrolled factor is never skipped: a passkey that does not verify, or that no verifier can check, and no
    /// recovery code left still make the login wait for a second step.
    func testAFactorThatCannotBeCheckedNowStillHoldsTheLogin() throws {
        let store = try Store.open(path: harness.storePath)
        let root = try XCTUnwrap(try AdminDirectory(store: store).find(try AdminUsername("root")))
        _ = try SecondFactors(store: store).addWebAuthnCredential(root, name: "Laptop", credentialID: "cred-9", publicKey: [1], signCount: 0,
                                                                  actor: root.consoleActor, now: harness.clock.now)
        try store.db.write { try store.db.execute("DELETE FROM gatehouse_recovery_codes") }
        let (token, methods) = try passwordStep("root")
        XCTAssertEqual(methods, ["webauthn"], "the console on loopback checks passkeys with its relying party")
        XCTAssertEqual(harness.errorCode(try secondStep(token, method: "webauthn", code: "{}")), "invalid_code")
        // Without a verifier (a console with no origin) no method is left, and the login still waits.
        let withoutVerifier = try TokenService(store: store, hasher: ConsoleHarness.testHasher)
            .signIn(username: "root", password: try AdminPassword(ConsoleHarness.password), client: "test", now: harness.clock.now)
        guard case .secondFactor(let challenge) = withoutVerifier else { return XCTFail("signed in with the password alone") }
        XCTAssertEqual(challenge.methods, [])
    }

    /// The routes the issue lists as irreversible or security-relevant are registered with step-up, in one place.
    func testEveryIrreversibleWriteIsASteppedUpRoute() {
        var router = Router()
        APIRoutes.register(on: &router)
        XCTAssertEqual(Set(router.stepUpRoutes), [
            "POST /api/merges/:planId/apply", "POST /api/merges/:id/undo",
            "POST /api/deletions/:planId/apply", "POST /api/deletions/:id/undo", "POST /api/deletions/purge",
            "POST /api/policy", "POST /api/gates/enable", "POST /api/gates/disable", "POST /api/gates/requirements",
            "POST /api/apple/keys", "POST /api/apple/keys/rollback", "POST /api/apple/keys/:id/activate", "POST /api/apple/keys/:id/revoke",
            "POST /api/apple/export", "POST /api/apple/secret/mint", "PUT /api/providers/apple", "PUT /api/providers/google",
            "POST /api/security/events/google/:id/undo", "POST /api/approvals/:id/approve",
            "POST /api/admins/:username/disable", "POST /api/admins/:username/enable", "POST /api/admins/:username/remove",
            "POST /api/auth/mfa/totp", "POST /api/auth/mfa/factors/:id/remove", "POST /api/auth/mfa/recovery-codes",
            "POST /api/auth/webauthn/register/options",
        ])
        XCTAssertEqual(Set(router.enrolmentRoutes), ["GET /api/auth/me", "POST /api/auth/logout", "GET /api/auth/mfa", "POST /api/auth/mfa/totp",
                                                     "POST /api/auth/mfa/totp/confirm", "POST /api/auth/webauthn/register/options",
                                                     "POST /api/auth/webauthn/register"])
    }
}

/// A stand-in for the WebAuthn library, to test the seam: an "assertion" is `{"id", "challenge", "counter"}`, valid
/// when it names the credential and the challenge it is checked against.
struct FakeWebAuthnVerifier: WebAuthnAssertionVerifier {
    struct Refused: Error {}

    func fields(_ assertion: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(assertion.utf8)) as? [String: Any] else { throw Refused() }
        return object
    }

    func credentialID(of assertion: String) throws -> String {
        guard let id = try fields(assertion)["id"] as? String else { throw Refused() }
        return id
    }

    func challenge(of assertion: String) throws -> String {
        guard let challenge = try fields(assertion)["challenge"] as? String else { throw Refused() }
        return challenge
    }

    func verify(assertion: String, challenge: String, credential: WebAuthnCredential) throws -> UInt32 {
        let object = try fields(assertion)
        guard object["challenge"] as? String == challenge, object["id"] as? String == credential.credentialID,
              let counter = object["counter"] as? Int else { throw Refused() }
        return UInt32(counter)
    }
}
