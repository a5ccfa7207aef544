@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// The console's login and token lifecycle, over a real socket.
final class ConsoleAuthTests: XCTestCase {
    var harness: ConsoleHarness!
    override func setUpWithError() throws { harness = try ConsoleHarness(users: 10) }
    override func tearDown() { harness = nil }

    func assertAuthError(_ response: RawResponse, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, 401, response.bodyText, file: file, line: line)
        XCTAssertEqual(response.header("x-auth-error"), expected, response.bodyText, file: file, line: line)
        XCTAssertEqual(harness.errorCode(response), expected, file: file, line: line)
    }

    func testLoginReturnsAShortLivedAccessTokenAndARefreshToken() throws {
        let response = try harness.login("root")
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(response.header("cache-control"), "no-store")
        let bundle = try harness.json(response)
        XCTAssertEqual(bundle["expiresIn"] as? Int, 900)
        XCTAssertEqual(bundle["role"] as? String, "admin")
        XCTAssertEqual(bundle["username"] as? String, "root")
        let access = try XCTUnwrap(bundle["accessToken"] as? String), refresh = try XCTUnwrap(bundle["refreshToken"] as? String)
        XCTAssertTrue(access.hasPrefix("gha_") && access.count == 47, access)
        XCTAssertTrue(refresh.hasPrefix("ghr_") && refresh.count == 47)
        let me = try harness.request("GET", "/api/auth/me", token: access)
        XCTAssertEqual(me.status, 200, me.bodyText)
        XCTAssertEqual(try harness.json(me)["username"] as? String, "root")
        // Only hashes are stored.
        let store = try Store.open(path: harness.storePath)
        let stored = try store.db.rows("SELECT token_hash FROM gatehouse_tokens").compactMap { $0["token_hash"].string }
        XCTAssertEqual(Set(stored), [SHA256Hex.of(access), SHA256Hex.of(refresh)])
    }

    func testRefreshRotatesAndAReusedRefreshTokenRevokesTheFamily() throws {
        let first = try harness.tokens("root")
        let rotated = try harness.refresh(first.refresh)
        XCTAssertEqual(rotated.status, 200, rotated.bodyText)
        let second = try harness.json(rotated)
        let secondAccess = try XCTUnwrap(second["accessToken"] as? String), secondRefresh = try XCTUnwrap(second["refreshToken"] as? String)
        XCTAssertNotEqual(secondAccess, first.access)
        XCTAssertNotEqual(secondRefresh, first.refresh)
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: secondAccess).status, 200)
        // The consumed refresh token again, past the grace for a lost answer: the whole family ends, for whoever
        // holds any of its tokens.
        harness.clock.advance(seconds: TokenService.refreshGrace.value + 1)
        assertAuthError(try harness.refresh(first.refresh), "token_reuse")
        assertAuthError(try harness.request("GET", "/api/auth/me", token: secondAccess), "token_revoked")
        assertAuthError(try harness.request("GET", "/api/auth/me", token: first.access), "token_revoked")
        assertAuthError(try harness.refresh(secondRefresh), "token_revoked")
        XCTAssertTrue(try harness.auditText().contains("console.token.reuse"))
        // Another login is unaffected.
        let other = try harness.tokens("root")
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: other.access).status, 200)
    }

    /// A page reloaded while its refresh was in flight never received the new pair and presents the old refresh token
    /// again. Within the grace, while that pair is unused, it gets another; the lost pair's refresh token is retired, so
    /// whoever presents it later meets the reuse check.
    func testARefreshWhoseAnswerWasLostIsAnsweredAgainWithinTheGraceOnly() throws {
        let first = try harness.tokens("root")
        let lost = try harness.json(try harness.refresh(first.refresh))
        let lostRefresh = try XCTUnwrap(lost["refreshToken"] as? String)
        harness.clock.advance(seconds: TokenService.refreshGrace.value - 1)
        let again = try harness.refresh(first.refresh)
        XCTAssertEqual(again.status, 200, again.bodyText)
        let current = try harness.json(again)
        let access = try XCTUnwrap(current["accessToken"] as? String), refresh = try XCTUnwrap(current["refreshToken"] as? String)
        XCTAssertNotEqual(refresh, lostRefresh)
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: access).status, 200)
        XCTAssertTrue(try harness.auditText().contains("console.token.reissue"))
        // The new pair is used: the old token again is reuse, even within the grace, and ends the family.
        harness.clock.advance(seconds: 1)
        let used = try harness.json(try harness.refresh(refresh))
        assertAuthError(try harness.refresh(first.refresh), "token_reuse")
        assertAuthError(try harness.request("GET", "/api/auth/me", token: try XCTUnwrap(used["accessToken"] as? String)), "token_revoked")

        // The retired pair's token, presented later by whoever held it, is reuse too.
        let second = try harness.tokens("root")
        let held = try XCTUnwrap(try harness.json(try harness.refresh(second.refresh))["refreshToken"] as? String)
        XCTAssertEqual(try harness.refresh(second.refresh).status, 200)
        harness.clock.advance(seconds: TokenService.refreshGrace.value + 1)
        assertAuthError(try harness.refresh(held), "token_reuse")

        // Past the grace, a lost answer is a new login.
        let third = try harness.tokens("root")
        XCTAssertEqual(try harness.refresh(third.refresh).status, 200)
        harness.clock.advance(seconds: TokenService.refreshGrace.value + 1)
        assertAuthError(try harness.refresh(third.refresh), "token_reuse")
    }

    func testAnExpiredAccessTokenIsTokenExpiredAndARefreshRecovers() throws {
        let tokens = try harness.tokens("vera")
        harness.clock.advance(seconds: 899)
        XCTAssertEqual(try harness.request("GET", "/api/policy", token: tokens.access).status, 200)
        harness.clock.advance(seconds: 2)
        assertAuthError(try harness.request("GET", "/api/policy", token: tokens.access), "token_expired")
        let refreshed = try harness.json(try harness.refresh(tokens.refresh))
        let access = try XCTUnwrap(refreshed["accessToken"] as? String)
        XCTAssertEqual(try harness.request("GET", "/api/policy", token: access).status, 200)
        // A refresh token past its own lifetime (12 h) needs a new login.
        let late = try XCTUnwrap(refreshed["refreshToken"] as? String)
        harness.clock.advance(seconds: 12 * 3600 + 1)
        assertAuthError(try harness.refresh(late), "token_expired")
    }

    func testLogoutRevokesTheFamily() throws {
        let tokens = try harness.tokens("sam")
        let logout = try harness.request("POST", "/api/auth/logout", token: tokens.access)
        XCTAssertEqual(logout.status, 200, logout.bodyText)
        assertAuthError(try harness.request("GET", "/api/auth/me", token: tokens.access), "token_revoked")
        assertAuthError(try harness.refresh(tokens.refresh), "token_revoked")
        XCTAssertTrue(try harness.auditText().contains("console:sam console.logout sam"))
    }

    func testMissingMalformedAndUnknownTokensAreInvalid() throws {
        assertAuthError(try harness.request("GET", "/api/auth/me"), "invalid_token")
        for header in ["Authorization: Basic cm9vdDpwdw==", "Authorization: Bearer", "Authorization: Bearer not-a-token",
                       "Authorization: Bearer gha_" + String(repeating: "A", count: 43),
                       "Authorization: Bearer ghr_" + String(repeating: "A", count: 43),
                       "Authorization: Bearer gha_" + String(repeating: "'", count: 43),
                       "Authorization: Bearer " + String(repeating: "x", count: 4000)] {
            assertAuthError(try harness.request("GET", "/api/auth/me", headers: [header]), "invalid_token")
        }
        // A refresh token is not an access token, and the other way round.
        let tokens = try harness.tokens("root")
        assertAuthError(try harness.request("GET", "/api/auth/me", token: tokens.refresh), "invalid_token")
        assertAuthError(try harness.refresh(tokens.access), "invalid_token")
    }

    func testEveryRouteButLoginRefreshAndSetupNeedsAToken() throws {
        var router = Router()
        APIRoutes.register(on: &router)
        var publicRoutes: [String] = []
        for line in router.table {
            let parts = line.split(separator: " ")
            let (method, path, access) = (String(parts[0]), String(parts[1]), String(parts[2]))
            if access == "(public)" { publicRoutes.append("\(method) \(path)"); continue }
            let response = try harness.request(method, path.replacingOccurrences(of: ":id", with: "x"), body: method == "GET" ? nil : "{}")
            XCTAssertEqual(response.status, 401, "\(line): \(response.bodyText)")
            XCTAssertEqual(response.header("x-auth-error"), "invalid_token", line)
        }
        // The login's second step is public: its mfaToken stands in for the access token it is exchanged for. So are the
        // single sign-on's steps: the provider and the single-use state, code and ticket stand in for a password.
        XCTAssertEqual(publicRoutes.sorted(), ["GET /api/auth/setup", "GET /api/auth/sso", "GET /api/auth/sso/callback", "GET /api/auth/sso/start",
                                               "POST /api/auth/login", "POST /api/auth/login/mfa", "POST /api/auth/refresh", "POST /api/auth/sso/complete"])
    }

    /// The login page asks whether anyone can log in; a store with admins says so and nothing more (the command that
    /// names the store is only for a store without one: Tests/Package/test_first_run.sh).
    func testSetupSaysOnlyThatTheStoreHasAdmins() throws {
        let response = try harness.request("GET", "/api/auth/setup")
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(response.bodyText, #"{"hasAdmins":true}"#)
    }

    func testRolesAreEnforcedPerRoute() throws {
        let viewer = try harness.tokens("vera").access, support = try harness.tokens("sam").access, admin = try harness.tokens("root").access
        let change = try harness.body(["key": "linkSocial.allowDifferentEmails", "value": true, "reason": "INC-1 window"])
        let simulate = try harness.body(["flow": "signin", "provider": "google", "email": "ana@gmail.com", "emailVerified": true])
        for token in [viewer, support, admin] {
            XCTAssertEqual(try harness.request("GET", "/api/policy", token: token).status, 200)
            XCTAssertEqual(try harness.request("GET", "/api/audit", token: token).status, 200)
        }
        let refused = try harness.request("POST", "/api/policy", token: viewer, body: change)
        XCTAssertEqual(refused.status, 403)
        XCTAssertEqual(harness.errorCode(refused), "forbidden_role")
        XCTAssertNil(refused.header("x-auth-error"), "a role refusal must not send the client back to login")
        XCTAssertEqual(try harness.request("POST", "/api/policy", token: support, body: change).status, 403)
        XCTAssertEqual(try harness.request("POST", "/api/policy/simulate", token: viewer, body: simulate).status, 403)
        XCTAssertEqual(try harness.request("POST", "/api/policy/simulate", token: support, body: simulate).status, 200)
        XCTAssertEqual(try harness.request("POST", "/api/policy", token: admin, body: change).status, 200)
        // Nothing changed on the refused attempts: one policy change, by the admin.
        let store = try Store.open(path: harness.storePath)
        XCTAssertEqual(try PolicyStore(store: store).history(now: harness.clock.now).map(\.actor), ["console:root"])
    }

    func testDisablingAnAdminEndsTheirSessions() throws {
        let tokens = try harness.tokens("sam")
        let store = try Store.open(path: harness.storePath)
        try AdminDirectory(store: store).disable(try AdminUsername("sam"), actor: Actor("tester"), now: harness.clock.now)
        assertAuthError(try harness.request("GET", "/api/auth/me", token: tokens.access), "token_revoked")
        assertAuthError(try harness.refresh(tokens.refresh), "token_revoked")
        XCTAssertEqual(try harness.login("sam").status, 401)
    }

    func testReauthenticationChecksThePasswordAgain() throws {
        let store = try Store.open(path: harness.storePath)
        let service = TokenService(store: store)
        let tokens = try harness.tokens("root")
        let session = try service.authenticate(accessToken: tokens.access, now: harness.clock.now)
        XCTAssertNoThrow(try service.reauthenticate(session, password: AdminPassword(presented: ConsoleHarness.password), client: "127.0.0.1", now: harness.clock.now))
        XCTAssertThrowsError(try service.reauthenticate(session, password: AdminPassword(presented: "wrong password!!"), client: "127.0.0.1", now: harness.clock.now)) {
            XCTAssertEqual($0 as? LoginError, .invalidCredentials)
        }
        XCTAssertTrue(try harness.auditText().contains("console.reauth.failed"))
        XCTAssertFalse(try harness.auditText().contains("wrong password!!"))
        // The session survives a failed re-authentication.
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: tokens.access).status, 200)
    }
}

/// SHA-256 hex of a string, as the token table stores it.
enum SHA256Hex {
    static func of(_ text: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try? process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try? input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(String(decoding: data, as: UTF8.self).prefix(64))
    }
}
