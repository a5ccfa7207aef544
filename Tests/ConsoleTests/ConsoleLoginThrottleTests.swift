@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
import JOSE
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// Failed logins: throttled per username and per client without letting a flood lock out an admin who
/// knows the password, counted before the password check so parallel attempts cannot slip through,
/// audited without anything typed that could be a password, and hostile usernames handled as plain failures.
final class ConsoleLoginThrottleTests: XCTestCase {
    var harness: ConsoleHarness!
    override func setUpWithError() throws { harness = try ConsoleHarness(users: 5) }
    override func tearDown() { harness = nil }

    /// A console whose client lock is out of the way, to watch one username's.
    func perAccountOnly() throws -> ConsoleHarness {
        try ConsoleHarness(users: 1, throttle: LoginThrottle.Rules(clientThreshold: 1000))
    }

    func testFiveFailuresLockTheAccountWithGrowingBackoff() throws {
        harness = try perAccountOnly()
        for attempt in 1...5 {
            let response = try harness.login("vera", "wrong-password-\(attempt)")
            XCTAssertEqual(response.status, 401, "attempt \(attempt)")
            XCTAssertEqual(harness.errorCode(response), "invalid_credentials")
            XCTAssertNil(response.header("x-auth-error"))
        }
        // Locked: even the right password is refused, without being checked.
        let locked = try harness.login("vera")
        XCTAssertEqual(locked.status, 429, locked.bodyText)
        XCTAssertEqual(locked.header("retry-after"), "30")
        harness.clock.advance(seconds: 31)
        // The next failure doubles the lock.
        XCTAssertEqual(try harness.login("vera", "wrong again, sorry").status, 401)
        XCTAssertEqual(try harness.login("vera").header("retry-after"), "60")
        harness.clock.advance(seconds: 61)
        XCTAssertEqual(try harness.login("vera").status, 200)
        // Success cleared the account's count: one more failure does not lock.
        XCTAssertEqual(try harness.login("vera", "one slip of the finger").status, 401)
        XCTAssertEqual(try harness.login("vera").status, 200)
    }

    func testTheLockNeverExceedsFifteenMinutes() throws {
        harness = try perAccountOnly()
        for _ in 1...5 { _ = try harness.login("sam", "nope nope nope") }
        for _ in 1...8 {
            let wait = Int64(try XCTUnwrap(try harness.login("sam").header("retry-after")).description) ?? 0
            XCTAssertLessThanOrEqual(wait, 900)
            harness.clock.advance(seconds: wait + 1)
            XCTAssertEqual(try harness.login("sam", "nope nope nope").status, 401)
        }
        XCTAssertEqual(try harness.login("sam").header("retry-after"), "900")
        // Fifteen quiet minutes forget the failures.
        harness.clock.advance(seconds: 901)
        XCTAssertEqual(try harness.login("sam").status, 200)
    }

    func testAFloodOfWrongNamesLocksTheClientButNotTheAdminWhoKnowsThePassword() throws {
        // 20 failures from one client (names that are no admin, and admins' names with a slip) lock the client…
        for index in 1...17 {
            XCTAssertEqual(try harness.login("intruder\(index)", "guess-\(index)").status, 401, "attempt \(index)")
        }
        for name in ["sam", "vera", "root"] { XCTAssertEqual(try harness.login(name, "not the password").status, 401) }
        // …so the flood goes on refused at once, without a password check: unknown names, a disabled form, hostile text.
        for name in ["intruder99", "ROOT", "root\u{0}", String(repeating: "x", count: 5000)] {
            let refused = try harness.login(name, "guess")
            XCTAssertEqual(refused.status, 429, name.prefix(20) + ": " + refused.bodyText)
            XCTAssertEqual(refused.header("retry-after"), "30")
        }
        // An admin whose own record has no lock still has the password checked, and gets in.
        XCTAssertEqual(try harness.login("root").status, 200)
        XCTAssertEqual(try harness.login("vera").status, 200)
        harness.clock.advance(seconds: 60)
        for index in 1...200 { _ = try harness.login("spray\(index)", "guess") }
        XCTAssertEqual(try harness.login("sam").status, 200, "200 more failures of other names still lock no admin out")
        let checked = try Store.open(path: harness.storePath).db
            .scalar("SELECT count(*) FROM gatehouse_audit WHERE action = 'console.login.failed'").int64
        XCTAssertLessThanOrEqual(checked ?? 0, 25, "a locked client costs no password checks")
    }

    func testAnAdminsOwnLockStillHoldsWhileTheClientIsLocked() throws {
        for index in 1...20 { _ = try harness.login("nobody\(index)", "guess") }
        for _ in 1...5 { XCTAssertEqual(try harness.login("sam", "wrong password, sam").status, 401) }
        XCTAssertEqual(try harness.login("sam").status, 429, "sam's own lock")
        XCTAssertEqual(try harness.login("root").status, 200, "another admin is not affected")
    }

    func testFortyParallelWrongLoginsGetAtMostTheThresholdOfPasswordChecks() throws {
        harness = try ConsoleHarness(users: 1, threads: 8, transport: .socket)
        // A realistic hash cost, so the attempts truly overlap.
        let store = try Store.open(path: harness.storePath)
        try AdminDirectory(store: store, hasher: PasswordHasher(iterations: 60_000))
            .setPassword(try AdminUsername("root"), password: try AdminPassword(ConsoleHarness.password), actor: Actor("tester"), now: .now())
        func parallel(_ bodies: [String]) throws -> [Int] {
            let port = harness.port
            let clients = try bodies.map { body -> RawHTTPClient in
                let client = try RawHTTPClient(port: port)
                try client.send("POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
                return client
            }
            return try clients.map { try $0.readResponse(timeout: 30).status }
        }
        let sameName = try parallel((1...40).map { try harness.body(["username": "root", "password": "parallel guess \($0)"]) })
        XCTAssertEqual(sameName.filter { $0 == 401 }.count, 5, "\(sameName)")
        XCTAssertEqual(sameName.filter { $0 == 429 }.count, 35, "\(sameName)")
        func checks(_ refusal: String) throws -> Int64 {
            try store.db.scalar("SELECT count(*) FROM gatehouse_audit WHERE action = 'console.login.failed' AND details LIKE ?",
                                ["%\(refusal)%"]).int64 ?? -1
        }
        XCTAssertEqual(try checks("wrong_password"), 5, "password checks")
        // 40 parallel attempts on 40 names no admin has: the client's threshold bounds them.
        let spray = try parallel((1...40).map { try harness.body(["username": "nobody\($0)", "password": "guess"]) })
        XCTAssertLessThanOrEqual(spray.filter { $0 == 401 }.count, 20 - 5, "\(spray)")
        XCTAssertLessThanOrEqual(try checks("unknown_user"), 15)
        harness.clock.advance(seconds: 31)
        XCTAssertEqual(try harness.login("root").status, 200, "root knows the password")
    }

    func testFailuresAreAuditedWithoutThePassword() throws {
        let secret = "Tr0ub4dor&3-not-the-password"
        XCTAssertEqual(try harness.login("root", secret).status, 401)
        XCTAssertEqual(try harness.login("nobody", secret).status, 401)
        // The password typed into the username field: recorded as a digest only, in the audit log and the throttle.
        let typedIntoName = "MyS3cret-Passw0rd!"
        XCTAssertEqual(try harness.login(typedIntoName, "").status, 401)
        XCTAssertEqual(try harness.login("root", "").status, 401)
        let good = try harness.tokens("root")
        let audit = try harness.auditText()
        XCTAssertTrue(audit.contains("console (login) console.login.failed root"), audit)
        XCTAssertTrue(audit.contains("wrong_password"), audit)
        XCTAssertTrue(audit.contains("unknown_user"), audit)
        XCTAssertTrue(audit.contains("console.login.failed unknown user (hmac:"), audit)
        for value in [secret, typedIntoName, "nobody", ConsoleHarness.password, good.access, good.refresh] {
            XCTAssertFalse(audit.contains(value), "the audit log holds a secret")
        }
        let scopes = try Store.open(path: harness.storePath).db.rows("SELECT scope FROM gatehouse_login_failures").compactMap { $0["scope"].string }
        XCTAssertFalse(scopes.contains { $0.contains(typedIntoName) || $0.contains("nobody") }, "\(scopes)")
        // Nor a plain hash of it: a SHA-256 of a typed password is one dictionary lookup away from the password.
        for name in [typedIntoName, "nobody"] {
            let plain = String(SHA256.hex(name).prefix(8))
            XCTAssertFalse(audit.contains(plain), "the audit log holds an unkeyed SHA-256 of \(name)")
            XCTAssertFalse(scopes.contains { $0.contains(plain) }, "the throttle holds an unkeyed SHA-256 of \(name): \(scopes)")
        }
    }

    func testHostileUsernamesAreOrdinaryFailures() throws {
        let names = [String(repeating: "a", count: 100_000), "root\u{0}", "\u{0}", "' OR '1'='1' --", "root'; DROP TABLE gatehouse_admins; --",
                     "ROOT", "\u{202E}toor", "../../etc/passwd", "root\r\nX-Injected: 1", ""]
        for name in names {
            let response = try harness.login(name, "whatever password")
            XCTAssertEqual(response.status, 401, "\(name.prefix(30)): \(response.bodyText.prefix(200))")
            XCTAssertEqual(harness.errorCode(response), "invalid_credentials")
            XCTAssertFalse(response.bodyText.contains("whatever password"))
            XCTAssertLessThan(response.body.count, 400, "the error does not echo the input")
            harness.clock.advance(seconds: 901)
        }
        let store = try Store.open(path: harness.storePath)
        XCTAssertEqual(try AdminDirectory(store: store).count(), 3, "the admins table is intact")
        let subjects = try store.db.rows("SELECT subject FROM gatehouse_audit WHERE action = 'console.login.failed'").compactMap { $0["subject"].string }
        XCTAssertEqual(subjects.count, names.count)
        for subject in subjects {
            XCTAssertLessThanOrEqual(subject.unicodeScalars.count, 65)
            XCTAssertFalse(subject.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202E}" }, subject)
        }
        XCTAssertTrue(try store.audit.verify(store.db).isIntact)
        XCTAssertEqual(try harness.login("root").status, 200)
    }

    func testASuccessfulLoginForgetsQuietAndEarlierSchemeScopes() throws {
        let db = try Store.open(path: harness.storePath).db
        let long = harness.clock.now.adding(seconds: -3600).iso8601
        // Undigested rows hold the name as typed (here a password typed into the username field).
        for scope in ["account:Hunter2-typed-as-a-name", "*"] {
            try db.execute("INSERT INTO gatehouse_login_failures VALUES (?, 3, ?, ?, NULL)", [scope, long, long])
        }
        XCTAssertEqual(try harness.login("old-typo", "guess").status, 401)
        harness.clock.advance(seconds: 1201)
        XCTAssertEqual(try harness.login("fresh-typo", "guess").status, 401)
        XCTAssertEqual(try harness.login("root").status, 200)
        let scopes = try db.rows("SELECT scope FROM gatehouse_login_failures ORDER BY scope").compactMap { $0["scope"].string }
        XCTAssertEqual(scopes, ["client:127.0.0.1", LoginThrottle.accountScope("fresh-typo", store: try Store.open(path: harness.storePath))])
    }
}
