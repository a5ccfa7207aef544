@testable import Console
@testable import D1Engine
import Foundation
@testable import Gatehouse
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// The user, duplicate, integrity and health APIs over a real socket: answers, hostile input, and
/// no token or password value in any answer.
final class ConsoleUserTests: XCTestCase {
    var harness: ConsoleHarness!
    var viewer: String!
    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 120)
        viewer = try harness.tokens("vera").access
    }
    override func tearDown() { harness = nil }

    func get(_ path: String, token: String? = nil) throws -> RawResponse {
        try harness.request("GET", path, token: token ?? viewer)
    }

    func someUser(withAccountTokens: Bool = false) throws -> (id: String, email: String) {
        let store = try Store.open(path: harness.storePath)
        let user = store.schema.user, account = store.schema.account
        let sql = withAccountTokens
            ? "SELECT u.\(user.col(.id)), u.\(user.col(.email)) FROM \(user.sql) u JOIN \(account.sql) a ON a.\(account.col(.userId)) = u.\(user.col(.id)) WHERE a.\(account.col(.accessToken)) IS NOT NULL OR a.\(account.col(.password)) IS NOT NULL LIMIT 1"
            : "SELECT \(user.col(.id)), \(user.col(.email)) FROM \(user.sql) ORDER BY \(user.col(.id)) LIMIT 1"
        let row = try XCTUnwrap(try store.db.row(sql))
        return (try XCTUnwrap(row[0].string), try XCTUnwrap(row[1].string))
    }

    func testDetailJSONIsWhatJSONEncoderWrites() throws {
        let store = try Store.open(path: harness.storePath)
        let user = store.schema.user
        let ids = try store.db.rows("SELECT \(user.col(.id)) FROM \(user.sql) ORDER BY \(user.col(.id)) LIMIT 40").compactMap { $0[0].string }
        XCTAssertEqual(ids.count, 40)
        for id in ids {
            let response = try get("/api/users/\(id)?sessions=100")
            XCTAssertEqual(response.status, 200, response.bodyText)
            let detail = try UserDirectory(store: store).show(id, now: harness.clock.now, latestSessions: 100)
            XCTAssertEqual(response.bodyText, String(decoding: try JSONBody.encoder.encode(detail), as: UTF8.self), id)
        }
    }

    /// `show` picks the merge columns once per table definition; it must read what `MergeLedger.history` reads.
    func testDetailMergeHistoryIsTheLedgers() throws {
        let store = try Store.open(path: harness.storePath)
        let user = store.schema.user
        let ids = try store.db.rows("SELECT \(user.col(.id)) FROM \(user.sql) ORDER BY \(user.col(.id)) LIMIT 3").compactMap { $0[0].string }
        try store.db.execute("PRAGMA foreign_keys = OFF")
        try store.db.execute("""
            INSERT INTO gatehouse_merges (plan_id, source_user_id, target_user_id, ticket, actor, status, planned_at, applied_at, undo_data)
            VALUES ('plan-1', ?, ?, 'SUP-9', 'console:root', 'applied', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z', '{"token":"never shown"}')
            """, [ids[0], ids[1]])
        for (index, id) in ids.enumerated() {
            let merges = try UserDirectory(store: store).show(id).merges
            XCTAssertEqual(merges, try MergeLedger.history(store.db, user: BetterAuthUserID(id)))
            XCTAssertEqual(merges.records.count, index < 2 ? 1 : 0)
            XCTAssertFalse(merges.records.contains { $0.fields.values.contains("never shown") })
        }
    }

    func testSearchFindsByEmailPrefixAndSaysHowItMatched() throws {
        let user = try someUser()
        let prefix = String(user.email.prefix(6)).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let response = try get("/api/users?q=\(prefix)&by=email&limit=5")
        XCTAssertEqual(response.status, 200, response.bodyText)
        let users = try XCTUnwrap(try harness.json(response)["users"] as? [[String: Any]])
        XCTAssertTrue(users.contains { $0["id"] as? String == user.id }, response.bodyText)
        XCTAssertTrue(users.allSatisfy { $0["matchedBy"] as? String == "email" })
    }

    func testHostileSearchInput() throws {
        // % and _ are ordinary characters, not wildcards: they match nothing here.
        for query in ["%25", "_", "%25_%25", "a%25", "%27%20OR%201%3D1--", "%22%3B%20DROP%20TABLE%20user%3B"] {
            let response = try get("/api/users?q=\(query)")
            XCTAssertEqual(response.status, 200, "\(query): \(response.bodyText)")
            XCTAssertEqual((try harness.json(response)["users"] as? [Any])?.count, 0, query)
        }
        let long = try get("/api/users?q=" + String(repeating: "a", count: 5000))
        XCTAssertEqual(long.status, 400)
        XCTAssertFalse(long.bodyText.contains(String(repeating: "a", count: 100)), "the query is not echoed in full")
        for path in ["/api/users", "/api/users?q=", "/api/users?q=%20%20", "/api/users?q=ana&by=sql", "/api/users?q=ana&limit=0",
                     "/api/users?q=ana&limit=100000", "/api/users?q=ana&limit=ten", "/api/users?q=a%01b", "/api/users?q=ana&by=sub"] {
            let response = try get(path)
            XCTAssertEqual(response.status, 400, "\(path): \(response.bodyText)")
            XCTAssertEqual(harness.errorCode(response), "invalid", path)
        }
    }

    func testDetailByIdEmailOrSubWithoutSecrets() throws {
        let user = try someUser(withAccountTokens: true)
        let store = try Store.open(path: harness.storePath)
        let account = store.schema.account, session = store.schema.session
        var secrets: [String] = []
        for column: AuthSchema.Field in [.accessToken, .refreshToken, .idToken, .password] where account.has(column) {
            secrets += try store.db.rows("SELECT \(account.col(column)) FROM \(account.sql) WHERE \(account.col(.userId)) = ?", [user.id]).compactMap { $0[0].string }
        }
        secrets += try store.db.rows("SELECT \(session.col(.token)) FROM \(session.sql) WHERE \(session.col(.userId)) = ?", [user.id]).compactMap { $0[0].string }
        XCTAssertFalse(secrets.isEmpty, "the seeded user has token or password values to leak")
        let sub = "better_auth%7C" + user.id
        for reference in [user.id, user.email.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!, sub] {
            let response = try get("/api/users/\(reference)?sessions=100")
            XCTAssertEqual(response.status, 200, "\(reference): \(response.bodyText)")
            let detail = try harness.json(response)
            XCTAssertEqual((detail["user"] as? [String: Any])?["id"] as? String, user.id)
            XCTAssertFalse((detail["accounts"] as? [Any])?.isEmpty ?? true)
            for secret in secrets where secret.count >= 8 {
                XCTAssertFalse(response.bodyText.contains(secret), "a token or password value is in the detail")
            }
        }
    }

    func testInvalidUserReferences() throws {
        XCTAssertEqual(try get("/api/users/" + String(repeating: "x", count: 32)).status, 404)
        XCTAssertEqual(try get("/api/users/nobody%40example.com").status, 404)
        XCTAssertEqual(try get("/api/users/better_auth%7C").status, 404)
        XCTAssertEqual(try get("/api/users/" + String(repeating: "z", count: 600)).status, 400)
        XCTAssertEqual(try get("/api/users/a%01b").status, 400)
        XCTAssertEqual(try get("/api/users/%25_%25").status, 404)
        XCTAssertEqual(try get("/api/users/someone?sessions=101").status, 400)
        XCTAssertEqual(try get("/api/users/a/b").status, 404, "no route has that shape")
    }

    func testDuplicatesNeedSupportAndCheckTheirBounds() throws {
        let support = try harness.tokens("sam").access
        let response = try get("/api/users/duplicates?minScore=0.5&limit=5", token: support)
        XCTAssertEqual(response.status, 200, response.bodyText)
        let report = try harness.json(response)
        XCTAssertEqual(report["minScore"] as? Double, 0.5)
        XCTAssertLessThanOrEqual((report["candidates"] as? [Any])?.count ?? 99, 5)
        for query in ["minScore=2", "minScore=-0.1", "minScore=nan", "minScore=abc", "limit=0", "window=0"] {
            XCTAssertEqual(try get("/api/users/duplicates?\(query)", token: support).status, 400, query)
        }
    }

    func testIntegrityCheckAndHealth() throws {
        let check = try get("/api/accounts/check")
        XCTAssertEqual(check.status, 200, check.bodyText)
        XCTAssertNotNil(try harness.json(check)["findings"] as? [Any])

        let health = try get("/api/health")
        XCTAssertEqual(health.status, 200, health.bodyText)
        let report = try harness.json(health)
        XCTAssertNotNil(report["status"] as? String)
        XCTAssertFalse((report["checks"] as? [Any])?.isEmpty ?? true)
        let history = try get("/api/health/history")
        XCTAssertEqual(history.bodyText, "[]", "running the checks from the console does not record a run")

        let store = try Store.open(path: harness.storePath)
        let runner = HealthRunner()
        for _ in 0..<3 { try runner.record(runner.run(store, HealthContext(now: .now())), in: store) }
        let recorded = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try get("/api/health/history?limit=2").body)) as? [[String: Any]])
        XCTAssertEqual(recorded.count, 2)
        for limit in ["0", "1001", "x"] { XCTAssertEqual(try get("/api/health/history?limit=\(limit)").status, 400, limit) }
    }
}
