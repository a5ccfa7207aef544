import Foundation
import XCTest
import Storage
@testable import Console
import Gatehouse
import HTTPTestSupport

/// The console's read pages answer alike on a SQLite store and a Postgres store holding the same seeded data, and
/// its policy switch writes on Postgres as on SQLite.
final class ConsoleEngineParityTests: XCTestCase {
    /// A response body with the times the console stamps as it answers (and the store's name) in common form.
    func normalized(_ response: RawResponse, store: String) -> String {
        let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
        return response.bodyText.replacingOccurrences(of: store, with: "STORE")
            .replacingOccurrences(of: store.replacingOccurrences(of: "/", with: "\\/"), with: "STORE")
            .replacingOccurrences(of: ", dates as timestamp with time zone", with: "")
            .replacingOccurrences(of: today + #"T\d\d:\d\d:\d\d\.\d{3}Z"#, with: "NOW", options: .regularExpression)
            .replacingOccurrences(of: #""(hash|prevHash|family)":"[^"]*""#, with: #""$1":"X""#, options: .regularExpression)
            .replacingOccurrences(of: #""durationMs":\d+"#, with: #""durationMs":0"#, options: .regularExpression)
    }

    func testReadPagesAnswerAlikeOnSQLiteAndPostgres() throws {
        let postgres = try ConsoleHarness(users: 60, engine: .postgres)
        let sqlite = try ConsoleHarness(users: 60)
        let tokens = (sqlite: try sqlite.tokens("vera").access, postgres: try postgres.tokens("vera").access)
        let found = try sqlite.json(try sqlite.request("GET", "/api/users?q=a&limit=5", token: tokens.sqlite))
        let id = try XCTUnwrap(((found["users"] as? [[String: Any]])?.first)?["id"] as? String)
        let paths = ["/api/status", "/api/users?q=ana", "/api/users?q=a&limit=5", "/api/users/\(id)", "/api/users/no-such-user",
                     "/api/users/duplicates", "/api/accounts/check", "/api/policy", "/api/policy/history", "/api/gates",
                     "/api/merges", "/api/apple/keys", "/api/audit?action=demo.seed"]
        for path in paths {
            let a = try sqlite.request("GET", path, token: tokens.sqlite), b = try postgres.request("GET", path, token: tokens.postgres)
            XCTAssertEqual(b.status, a.status, "\(path): \(b.bodyText.prefix(500))")
            XCTAssertEqual(normalized(b, store: postgres.storePath), normalized(a, store: sqlite.storePath), path)
        }
    }

    func testThePolicySwitchWritesOnPostgres() throws {
        let console = try ConsoleHarness(users: 10, engine: .postgres)
        let token = try console.tokens("root").access
        let set = try console.request("POST", "/api/policy", token: token, body: try console.body([
            "key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-1 explicit linking", "ifVersion": 0,
        ]))
        XCTAssertEqual(set.status, 200, set.bodyText)
        XCTAssertEqual(try console.json(set)["version"] as? Int, 1)
        // The same condition again: the version moved on, so it is refused.
        let stale = try console.request("POST", "/api/policy", token: token, body: try console.body([
            "key": "linkSocial.allowDifferentEmails", "value": false, "reason": "x", "ifVersion": 0,
        ]))
        XCTAssertEqual(stale.status, 409, stale.bodyText)
        let history = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try console.request("GET", "/api/policy/history", token: token).body)) as? [[String: Any]])
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual(history.first?["actor"] as? String, "console:root")
        XCTAssertTrue(try console.auditText().contains("policy.set"))
    }
}
