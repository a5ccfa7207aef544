@testable import Console
import Foundation
@testable import Gatehouse
import HTTPTestSupport
import Storage
import TestEngines
import XCTest

/// Tests/Fixtures/oidc_provider.py (Authlib's provider side), run with the project's venv Python for one test: its
/// issuer is `http://127.0.0.1:PORT`, its client `gatehouse` with `ConsoleSSOTests.clientSecret`.
final class OIDCProviderFixture {
    let process: Process
    let port: UInt16
    private let output: URL
    var issuer: String { "http://127.0.0.1:\(port)" }

    init(arguments: [String] = []) throws {
        let configured = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"] ?? ""
        let python = configured.isEmpty ? ConsoleHarness.packageRoot.appendingPathComponent(".venv/bin/python").path : configured
        guard FileManager.default.isExecutableFile(atPath: python) else {
            XCTFail("no Python for the OpenID provider at \(python): run ops/test, which creates .venv")
            throw CocoaError(.fileNoSuchFile)
        }
        output = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [ConsoleHarness.packageRoot.appendingPathComponent("Tests/Fixtures/oidc_provider.py").path, "--port", "0"] + arguments
        var environment = ProcessInfo.processInfo.environment
        // The secret goes by the environment, never the command line.
        environment["OIDC_CLIENT_SECRET"] = ConsoleSSOTests.clientSecret
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: output)
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        var found: UInt16?
        while Date() < deadline, found == nil, process.isRunning {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }) { found = UInt16(line.dropFirst(5)) }
            usleep(50_000)
        }
        guard let found else {
            process.terminate()
            XCTFail("the OpenID provider did not start: \((try? String(contentsOf: output, encoding: .utf8)) ?? "")")
            throw CocoaError(.fileReadUnknown)
        }
        port = found
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: output)
    }

    /// One request to the provider over a socket.
    func request(_ method: String, _ target: String, body: String? = nil, contentType: String = "application/json") throws -> RawResponse {
        let client = try RawHTTPClient(port: port)
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let body { text += "Content-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)" } else { text += "\r\n" }
        try client.send(text)
        return try client.readResponse()
    }

    /// A test endpoint (`/test/forge`, `/test/users`, …).
    func test(_ path: String, _ object: [String: Any]) throws {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        XCTAssertEqual(try request("POST", "/test/" + path, body: body).status, 200)
    }

    func stats() throws -> [String: Int] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try request("GET", "/test/stats").body)) as? [String: Int])
    }
}

/// Single sign-on end to end over real sockets: the console (`ConsoleHarness` on a socket) and the Authlib provider,
/// every step as a browser takes it, and every refusal the issue names, each asserted by its own reason code so that
/// skipping the check it names fails the test.
final class ConsoleSSOTests: XCTestCase {
    static let clientSecret = "oidc-client-secret-T7fq2"

    var harness: ConsoleHarness!
    var provider: OIDCProviderFixture!
    var store: Store!

    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 5, transport: .socket)
        // ID tokens carry the provider's real time: the console's clock starts there.
        harness.clock.advance(seconds: (Timestamp.now().milliseconds - harness.clock.now.milliseconds) / 1000)
        provider = try OIDCProviderFixture()
        store = try Store.open(path: harness.storePath)
        try configure()
    }

    override func tearDown() {
        harness = nil
        provider = nil
        store = nil
    }

    func configure(allowedDomain: String? = nil, passwordLogin: Bool = true) throws {
        let secretFile = harness.directory.appendingPathComponent("sso.secret").path
        try (Self.clientSecret + "\n").write(toFile: secretFile, atomically: true, encoding: .utf8)
        try SSOConfiguration(store: store).set(SSOSettings(issuer: provider.issuer, clientID: "gatehouse", adminGroup: "ops-admins",
                                                           supportGroup: "ops-support", viewerGroup: "staff", allowedDomain: allowedDomain,
                                                           passwordLogin: passwordLogin),
                                               secret: try SSOClientSecret(readFrom: secretFile, option: "--client-secret-file"),
                                               actor: Actor("tester"), now: harness.clock.now)
    }

    // MARK: The flow, step by step

    struct Started {
        let location: String
        let cookie: String
        let parameters: [String: String]
    }

    /// `GET /api/auth/sso/start`: the 302 to the provider and the browser's cookie.
    func start() throws -> Started {
        let response = try harness.get("/api/auth/sso/start")
        XCTAssertEqual(response.status, 302, response.bodyText)
        let location = try XCTUnwrap(response.header("location"))
        let setCookie = try XCTUnwrap(response.header("set-cookie"))
        let cookie = String(setCookie.split(separator: ";")[0])
        let query = try XCTUnwrap(URLComponents(string: location)?.queryItems)
        return Started(location: location, cookie: cookie, parameters: Dictionary(query.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 }))
    }

    /// The provider's login form posted as `user`: the provider's redirect back (the callback's path and query).
    func authorize(_ started: Started, as user: String) throws -> String {
        var form = started.parameters
        form["username"] = user
        form["password"] = user + "-password"
        let body = form.map { "\(Self.escape($0.key))=\(Self.escape($0.value))" }.joined(separator: "&")
        let response = try provider.request("POST", "/authorize", body: body, contentType: "application/x-www-form-urlencoded")
        XCTAssertEqual(response.status, 302, response.bodyText)
        let location = try XCTUnwrap(response.header("location"))
        let url = try XCTUnwrap(URLComponents(string: location))
        return url.path + "?" + (url.percentEncodedQuery ?? "")
    }

    /// `GET` the callback with the browser's cookie.
    func callback(_ target: String, cookie: String?) throws -> RawResponse {
        try harness.request("GET", target, headers: cookie.map { ["Cookie: \($0)"] } ?? [])
    }

    /// `POST /api/auth/sso/complete`.
    func complete(_ ticket: String) throws -> RawResponse {
        try harness.request("POST", "/api/auth/sso/complete", body: try harness.body(["ticket": ticket]))
    }

    /// The ticket in a callback's `Location: /#sso=TICKET`.
    func ticket(_ response: RawResponse, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        XCTAssertEqual(response.status, 302, "\(response.header("x-sso-refusal") ?? ""): \(response.bodyText)", file: file, line: line)
        let location = try XCTUnwrap(response.header("location"), file: file, line: line)
        XCTAssertTrue(location.hasPrefix("/#sso="), location, file: file, line: line)
        return String(location.dropFirst("/#sso=".count))
    }

    /// The whole sign-in as `user`: the token bundle.
    func signIn(_ user: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let started = try start()
        let response = try complete(try ticket(try callback(try authorize(started, as: user), cookie: started.cookie), file: file, line: line))
        XCTAssertEqual(response.status, 200, response.bodyText, file: file, line: line)
        return try harness.json(response)
    }

    /// The whole sign-in as `user` up to the callback's answer.
    func callbackAnswer(_ user: String) throws -> RawResponse {
        let started = try start()
        return try callback(try authorize(started, as: user), cookie: started.cookie)
    }

    func assertRefused(_ response: RawResponse, _ code: String, status: Int = 403, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, response.bodyText, file: file, line: line)
        XCTAssertEqual(response.header("x-sso-refusal"), code, response.bodyText, file: file, line: line)
        XCTAssertTrue(response.bodyText.contains("Sign-in refused") && response.bodyText.contains(code), response.bodyText, file: file, line: line)
        XCTAssertNil(response.header("location"), file: file, line: line)
    }

    func ssoAdmins() throws -> [Admin] { try AdminDirectory(store: store).list().filter { $0.source == .sso } }

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }

    // MARK: Tests

    func testTheWholeFlowSignsEachRoleInAndListsThemAsSSOAdmins() throws {
        let offer = try harness.json(try harness.get("/api/auth/sso"))
        XCTAssertEqual(offer["enabled"] as? Bool, true)
        XCTAssertEqual(offer["provider"] as? String, "127.0.0.1")
        let started = try start()
        // The authorization request (Core §3.1.2.1, RFC 7636 §4.3).
        XCTAssertTrue(started.location.hasPrefix(provider.issuer + "/authorize?"), started.location)
        XCTAssertEqual(started.parameters["response_type"], "code")
        XCTAssertEqual(started.parameters["client_id"], "gatehouse")
        XCTAssertEqual(started.parameters["scope"], "openid email profile groups", "groups, since discovery offers it")
        XCTAssertEqual(started.parameters["code_challenge_method"], "S256")
        XCTAssertEqual(started.parameters["code_challenge"]?.count, 43)
        XCTAssertEqual(started.parameters["redirect_uri"], "http://127.0.0.1:\(harness.port)/api/auth/sso/callback")
        XCTAssertGreaterThanOrEqual(started.parameters["state"]?.count ?? 0, 43)
        XCTAssertGreaterThanOrEqual(started.parameters["nonce"]?.count ?? 0, 43)
        XCTAssertNotEqual(started.parameters["state"], started.parameters["nonce"])
        let setCookie = try XCTUnwrap(try harness.get("/api/auth/sso/start").header("set-cookie"))
        for attribute in ["HttpOnly", "SameSite=Lax", "Path=/api/auth/sso/", "Max-Age=600"] { XCTAssertTrue(setCookie.contains(attribute), setCookie) }

        let callback = try self.callback(try authorize(started, as: "alice"), cookie: started.cookie)
        XCTAssertTrue(callback.header("set-cookie")?.contains("Max-Age=0") == true, "the binding cookie is cleared")
        let bundle = try harness.json(try complete(try ticket(callback)))
        XCTAssertEqual(bundle["username"] as? String, "alice@example.com")
        XCTAssertEqual(bundle["role"] as? String, "admin")
        let access = try XCTUnwrap(bundle["accessToken"] as? String)
        let me = try harness.json(try harness.request("GET", "/api/auth/me", token: access))
        XCTAssertEqual(me["username"] as? String, "alice@example.com")
        XCTAssertEqual(try signIn("sam")["role"] as? String, "support")
        XCTAssertEqual(try signIn("vera")["role"] as? String, "viewer")

        let admins = try ssoAdmins()
        XCTAssertEqual(admins.map(\.username), ["alice@example.com", "sam@example.com", "vera@example.com"])
        XCTAssertTrue(admins.allSatisfy { $0.lastLoginAt != nil })
        let audit = try harness.auditText()
        XCTAssertTrue(audit.contains("console:alice@example.com console.login alice@example.com"), audit)
        XCTAssertFalse(audit.contains(Self.clientSecret))
        // An SSO admin has no password: the password login refuses any.
        XCTAssertEqual(try harness.login("alice@example.com", "!sso").status, 401)
    }

    func testAChangedStateOrAnotherBrowsersCookieIsRefused() throws {
        let started = try start()
        let target = try authorize(started, as: "alice")
        let state = try XCTUnwrap(started.parameters["state"])
        let changed = target.replacingOccurrences(of: "state=" + Self.escape(state), with: "state=" + Self.escape(String(state.reversed())))
        XCTAssertNotEqual(changed, target)
        assertRefused(try callback(changed, cookie: started.cookie), "sso_state_mismatch", status: 400)
        // Another browser's cookie (it started a sign-in of its own): the state is not bound to it.
        let other = try start()
        assertRefused(try callback(target, cookie: other.cookie), "sso_state_mismatch", status: 400)
        assertRefused(try callback(target, cookie: nil), "sso_state_missing", status: 400)
        // The right pair still works: the refusals used nothing up.
        _ = try ticket(try callback(target, cookie: started.cookie))
        XCTAssertTrue(try harness.auditText().contains("console.sso.refused"))
    }

    func testAPersonWhoCancelsAtTheProviderGetsAPageThatSaysSo() throws {
        let started = try start()
        var form = started.parameters
        form["deny"] = "1"
        let body = form.map { "\(Self.escape($0.key))=\(Self.escape($0.value))" }.joined(separator: "&")
        let denied = try provider.request("POST", "/authorize", body: body, contentType: "application/x-www-form-urlencoded")
        let location = try XCTUnwrap(URLComponents(string: try XCTUnwrap(denied.header("location"))))
        XCTAssertEqual(location.queryItems?.first { $0.name == "error" }?.value, "access_denied")
        let response = try callback(location.path + "?" + (location.percentEncodedQuery ?? ""), cookie: started.cookie)
        assertRefused(response, "sso_provider_error")
        XCTAssertTrue(response.bodyText.contains("(access_denied)"), response.bodyText)
        XCTAssertEqual(try ssoAdmins().count, 0)
    }

    func testAProviderThatFailsIsAPageAndTheNextTryWorks() throws {
        try provider.test("fault", ["where": "discovery", "status": 500])
        let refused = try harness.get("/api/auth/sso/start")
        XCTAssertEqual(refused.status, 502)
        XCTAssertEqual(refused.header("x-sso-refusal"), "sso_provider_unavailable")
        XCTAssertTrue(refused.bodyText.contains("HTTP 500"), refused.bodyText)
        try provider.test("fault", ["where": "jwks", "status": 503])
        assertRefused(try callbackAnswer("alice"), "sso_provider_unavailable", status: 502)
        XCTAssertEqual(try signIn("alice")["role"] as? String, "admin")
        // Sign-ins begun and left are not kept past their lifetime.
        for _ in 0..<3 { _ = try start() }
        harness.clock.advance(seconds: SSOLogin.stateLifetime + 1)
        _ = try start()
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_sso_logins").int64, 1)
    }

    func testAReplayedCallbackOrCodeIsRefused() throws {
        let started = try start()
        let target = try authorize(started, as: "alice")
        _ = try ticket(try callback(target, cookie: started.cookie))
        assertRefused(try callback(target, cookie: started.cookie), "sso_state_used", status: 400)
        // The same code under a new sign-in's state and cookie: the provider refuses a code used once.
        let again = try start()
        let code = try XCTUnwrap(URLComponents(string: target)?.queryItems?.first { $0.name == "code" }?.value)
        let replay = "/api/auth/sso/callback?code=\(Self.escape(code))&state=\(Self.escape(again.parameters["state"] ?? ""))"
        assertRefused(try callback(replay, cookie: again.cookie), "sso_code_refused")
    }

    func testForgedIDTokensAreRefusedAndMakeNobody() throws {
        let cases: [(mode: String, code: String)] = [
            ("other_key", "id_token_signature"), ("unknown_kid", "id_token_signature"), ("other_audience", "id_token_audience"),
            ("several_audiences", "id_token_audience"), ("expired", "id_token_expired"), ("future", "id_token_expired"),
            ("wrong_nonce", "id_token_nonce"), ("other_issuer", "id_token_issuer"),
        ]
        for (mode, code) in cases {
            try provider.test("forge", ["mode": mode])
            assertRefused(try callbackAnswer("alice"), code)
            XCTAssertEqual(try ssoAdmins().count, 0, mode)
        }
        let audit = try harness.auditText()
        for (_, code) in cases { XCTAssertTrue(audit.contains(code), code) }
        // With nothing forged, the same person signs in.
        XCTAssertEqual(try signIn("alice")["role"] as? String, "admin")
    }

    func testNoMatchingGroupIs403WithAPageThatSaysWhyAndMakesNobody() throws {
        let response = try callbackAnswer("mallory")
        assertRefused(response, "no_matching_group")
        XCTAssertTrue(response.bodyText.contains("none of the groups"), response.bodyText)
        XCTAssertTrue(response.bodyText.contains("ops-admins, ops-support, staff"), response.bodyText)
        XCTAssertEqual(response.header("content-type"), "text/html; charset=utf-8")
        XCTAssertEqual(try ssoAdmins().count, 0)
    }

    func testATicketIsUsedOnceAndLastsSixtySeconds() throws {
        let started = try start()
        let ticket = try ticket(try callback(try authorize(started, as: "alice"), cookie: started.cookie))
        XCTAssertEqual(try complete(ticket).status, 200)
        let twice = try complete(ticket)
        XCTAssertEqual(twice.status, 401)
        XCTAssertEqual(harness.errorCode(twice), "sso_ticket_used")
        let late = try start()
        let lateTicket = try self.ticket(try callback(try authorize(late, as: "alice"), cookie: late.cookie))
        harness.clock.advance(seconds: 61)
        XCTAssertEqual(harness.errorCode(try complete(lateTicket)), "sso_ticket_expired")
        XCTAssertEqual(harness.errorCode(try complete("ghs_" + String(repeating: "A", count: 43))), "sso_ticket_invalid")
    }

    func testSomeoneRemovedFromTheGroupsLosesAccessAtTheirNextSignInAndTheirSessionsEnd() throws {
        let first = try signIn("alice")
        let access = try XCTUnwrap(first["accessToken"] as? String), refresh = try XCTUnwrap(first["refreshToken"] as? String)
        // Moved from the admin group to a viewer's: the next sign-in gives the lower role.
        try provider.test("users", ["username": "alice", "groups": ["staff"]])
        XCTAssertEqual(try signIn("alice")["role"] as? String, "viewer")
        XCTAssertEqual(try ssoAdmins().first?.role, .viewer)
        XCTAssertTrue(try harness.auditText().contains("admin.role"))
        // Out of every group: refused, and the sessions still open end now.
        try provider.test("users", ["username": "alice", "groups": []])
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: access).status, 200)
        assertRefused(try callbackAnswer("alice"), "no_matching_group")
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: access).header("x-auth-error"), "token_revoked")
        // A sign-in lasts one access token: its refresh token is refused (the next sign-in asks the provider again).
        try provider.test("users", ["username": "alice", "groups": ["ops-admins"]])
        let again = try signIn("alice")
        let refused = try harness.refresh(try XCTUnwrap(again["refreshToken"] as? String))
        XCTAssertEqual(refused.status, 401)
        XCTAssertEqual(refused.header("x-auth-error"), "token_expired")
        XCTAssertEqual(try harness.refresh(refresh).status, 401)
    }

    func testADisabledSSOAdminAndALocalAdminsNameAreRefused() throws {
        _ = try signIn("sam")
        try AdminDirectory(store: store).disable(try AdminUsername("sam@example.com"), actor: Actor("tester"), now: harness.clock.now)
        assertRefused(try callbackAnswer("sam"), "admin_disabled")
        // A local admin named like the person's email is not theirs to take over.
        try provider.test("users", ["username": "root", "email": "root", "groups": ["ops-admins"]])
        assertRefused(try callbackAnswer("root"), "name_taken")
    }

    func testPasswordLoginOffRefusesPasswordsButNotSSO() throws {
        try configure(passwordLogin: false)
        let login = try harness.login("root")
        XCTAssertEqual(login.status, 403)
        XCTAssertEqual(harness.errorCode(login), "password_login_disabled")
        XCTAssertEqual(try harness.json(try harness.get("/api/auth/sso"))["passwordLogin"] as? Bool, false)
        XCTAssertEqual(try signIn("alice")["role"] as? String, "admin")
        try SSOConfiguration(store: store).disable(actor: Actor("tester"), now: harness.clock.now)
        XCTAssertEqual(try harness.login("root").status, 200)
        XCTAssertEqual(try harness.json(try harness.get("/api/auth/sso"))["enabled"] as? Bool, false)
        XCTAssertEqual(try harness.get("/api/auth/sso/start").header("x-sso-refusal"), "sso_not_configured")
    }

    func testTheDomainRuleNeedsAVerifiedEmailAtTheDomain() throws {
        try configure(allowedDomain: "example.com")
        assertRefused(try callbackAnswer("eve"), "email_not_verified")
        assertRefused(try callbackAnswer("olga"), "domain_not_allowed")
        XCTAssertEqual(try signIn("alice")["role"] as? String, "admin")
        XCTAssertEqual(try ssoAdmins().map(\.username), ["alice@example.com"])
    }

    func testDiscoveryIsKeptAndTheKeySetFetchedAgainAtMostOncAMinute() throws {
        _ = try signIn("alice")
        _ = try signIn("sam")
        var stats = try provider.stats()
        XCTAssertEqual(stats["discovery"], 1, "discovery is kept")
        XCTAssertEqual(stats["jwks"], 1, "the key set is kept")
        // Unknown key ids: the set is fetched again once, not for each.
        for _ in 0..<3 {
            try provider.test("forge", ["mode": "unknown_kid"])
            assertRefused(try callbackAnswer("alice"), "id_token_signature")
        }
        stats = try provider.stats()
        XCTAssertEqual(stats["jwks"], 1, "fetched less than a minute ago: not again")
        // The provider rotates its key; a minute later a token under the new kid fetches the set again and verifies.
        try provider.test("rotate", [:])
        harness.clock.advance(seconds: 61)
        XCTAssertEqual(try signIn("alice")["role"] as? String, "admin")
        XCTAssertEqual(try provider.stats()["jwks"], 2)
    }

    func testClientSecretPostAndES256() throws {
        provider = try OIDCProviderFixture(arguments: ["--alg", "ES256"])
        try provider.test("config", ["token_auth": "client_secret_post"])
        try configure()
        XCTAssertEqual(try signIn("vera")["role"] as? String, "viewer")
        // A provider that fails is a 502 page, not a crash.
        try provider.test("fault", ["where": "token", "status": 500])
        assertRefused(try callbackAnswer("vera"), "sso_code_refused")
    }

    func testTheFlowAndItsSingleUseValuesOnPostgresAndD1() throws {
        for engine in [EngineKind.postgres, .d1] {
            do {
                harness = try ConsoleHarness(users: 5, transport: .socket, engine: engine)
            } catch let skip as XCTSkip {
                print("\(engine): \(skip)")
                continue
            }
            harness.clock.advance(seconds: (Timestamp.now().milliseconds - harness.clock.now.milliseconds) / 1000)
            store = try Store.open(path: harness.storePath)
            try configure()
            XCTAssertEqual(try signIn("alice")["role"] as? String, "admin", "\(engine)")
            let started = try start()
            let target = try authorize(started, as: "sam")
            let ticket = try ticket(try callback(target, cookie: started.cookie))
            assertRefused(try callback(target, cookie: started.cookie), "sso_state_used", status: 400)
            XCTAssertEqual(try complete(ticket).status, 200, "\(engine)")
            XCTAssertEqual(harness.errorCode(try complete(ticket)), "sso_ticket_used", "\(engine)")
            assertRefused(try callbackAnswer("mallory"), "no_matching_group")
            try provider.test("forge", ["mode": "wrong_nonce"])
            assertRefused(try callbackAnswer("vera"), "id_token_nonce")
            XCTAssertEqual(try ssoAdmins().map(\.username), ["alice@example.com", "sam@example.com"], "\(engine)")
            XCTAssertTrue(try ssoAdmins().allSatisfy { $0.lastLoginAt != nil }, "\(engine)")
        }
    }

    func testAnSSOAdminReauthenticatesWithAFreshSignInNotAPassword() throws {
        let access = try XCTUnwrap(try signIn("vera")["accessToken"] as? String)
        XCTAssertEqual(try harness.json(try harness.request("GET", "/api/auth/me", token: access))["source"] as? String, "sso")
        // Enrolling a factor asks for the password again: an SSO admin's fresh sign-in stands in for it.
        let enrol = try harness.request("POST", "/api/auth/mfa/totp", token: access, body: try harness.body(["password": "", "name": "phone"]))
        XCTAssertEqual(enrol.status, 200, enrol.bodyText)
        harness.clock.advance(seconds: 301)
        let late = try harness.request("POST", "/api/auth/mfa/totp", token: access, body: try harness.body(["password": "anything at all", "name": "phone"]))
        XCTAssertEqual(late.status, 403, late.bodyText)
        XCTAssertEqual(harness.errorCode(late), "reauthentication_needed")
    }

    func testAnSSOAdminWithASecondFactorStillProvesIt() throws {
        _ = try signIn("sam")
        let sam = try XCTUnwrap(try AdminDirectory(store: store).find(try AdminUsername("sam@example.com")))
        let enrolment = try SecondFactors(store: store).enrolTOTP(sam, name: "phone", actor: Actor("tester"), now: harness.clock.now)
        let secret = try XCTUnwrap(Base32.decode(enrolment.secret))
        _ = try SecondFactors(store: store).confirmTOTP(sam, code: TOTP(secret: secret).code(at: harness.clock.now), actor: Actor("tester"),
                                                       now: harness.clock.now)
        let started = try start()
        let outcome = try harness.json(try complete(try ticket(try callback(try authorize(started, as: "sam"), cookie: started.cookie))))
        XCTAssertEqual(outcome["mfaRequired"] as? Bool, true, "the single sign-on is the first factor only")
        XCTAssertNil(outcome["accessToken"])
    }
}
