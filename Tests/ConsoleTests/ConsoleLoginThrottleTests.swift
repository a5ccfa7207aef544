import Foundation
import XCTest
@testable import Console
import Gatehouse
import HTTPTestSupport

/// Failed logins: throttled per account and overall, audited without the password, and hostile
/// usernames handled as plain failures.
final class ConsoleLoginThrottleTests: XCTestCase {
    var harness: ConsoleHarness!
    override func setUpWithError() throws { harness = try ConsoleHarness(users: 5) }
    override func tearDown() { harness = nil }

    /// A console whose overall lock is out of the way, to watch one account's.
    func perAccountOnly() throws -> ConsoleHarness {
        try ConsoleHarness(users: 1, throttle: LoginThrottle.Rules(overallThreshold: 1000))
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

    func testFailuresAcrossAccountsLockTheConsoleOverall() throws {
        // Different names each time (a spray), none locked on its own.
        for name in ["a1", "b2", "c3", "d4", "e5"] {
            XCTAssertEqual(try harness.login(name, "guess-\(name)").status, 401)
        }
        let locked = try harness.login("root")
        XCTAssertEqual(locked.status, 429)
        XCTAssertEqual(harness.errorCode(locked), "throttled")
        harness.clock.advance(seconds: 31)
        XCTAssertEqual(try harness.login("root").status, 200)
        // A success does not reset the overall count: the next failure locks again, for longer.
        XCTAssertEqual(try harness.login("f6", "guess").status, 401)
        XCTAssertEqual(try harness.login("root").header("retry-after"), "60")
    }

    func testFailuresAreAuditedWithoutThePassword() throws {
        let secret = "Tr0ub4dor&3-not-the-password"
        XCTAssertEqual(try harness.login("root", secret).status, 401)
        XCTAssertEqual(try harness.login("nobody", secret).status, 401)
        let good = try harness.tokens("root")
        let audit = try harness.auditText()
        XCTAssertTrue(audit.contains("console (login) console.login.failed root"), audit)
        XCTAssertTrue(audit.contains("wrong_password"), audit)
        XCTAssertTrue(audit.contains("unknown_user"), audit)
        for value in [secret, ConsoleHarness.password, good.access, good.refresh] {
            XCTAssertFalse(audit.contains(value), "the audit log holds a secret")
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
}
