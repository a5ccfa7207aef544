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

/// The user-deletion API: admin only; the plan from the user page with the email to type; apply refused without the
/// typed email, and (in this build) without `noRevoke` and a reason; undo, list, show, purge; no token value in any answer.
final class ConsoleUserDeletionTests: XCTestCase {
    var harness: ConsoleHarness!
    var admin: String!
    var support: String!

    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 20)
        admin = try harness.tokens("root").access
        support = try harness.tokens("sam").access
    }
    override func tearDown() { harness = nil }

    func post(_ path: String, _ object: [String: Any], token: String? = nil) throws -> RawResponse {
        try harness.request("POST", path, token: token ?? admin, body: try harness.body(object))
    }

    /// A seeded user with an email, and every token value they hold.
    func someUser() throws -> (id: String, email: String, secrets: [String]) {
        let store = try Store.open(path: harness.storePath)
        let user = store.schema.user, account = store.schema.account, session = store.schema.session
        let row = try XCTUnwrap(try store.db.row("SELECT \(user.col(.id)), \(user.col(.email)) FROM \(user.sql) WHERE \(user.col(.email)) <> '' ORDER BY 1 LIMIT 1"))
        let id = try XCTUnwrap(row[0].string), email = try XCTUnwrap(row[1].string)
        var secrets: [String] = []
        for column: AuthSchema.Field in [.accessToken, .refreshToken, .idToken, .password] where account.has(column) {
            secrets += try store.db.rows("SELECT \(account.col(column)) FROM \(account.sql) WHERE \(account.col(.userId)) = ?", [id]).compactMap { $0[0].string }
        }
        secrets += try store.db.rows("SELECT \(session.col(.token)) FROM \(session.sql) WHERE \(session.col(.userId)) = ?", [id]).compactMap { $0[0].string }
        return (id, email, secrets.filter { $0.count >= 8 })
    }

    func testPlanConfirmApplyUndoAsAdminOnly() throws {
        let (id, email, secrets) = try someUser()
        let denied = try post("/api/users/\(id)/deletion/plan", ["ticket": "SUP-1"], token: support)
        XCTAssertEqual(denied.status, 403, denied.bodyText)

        let planned = try post("/api/users/\(id)/deletion/plan", ["ticket": "SUP-1"])
        XCTAssertEqual(planned.status, 200, planned.bodyText)
        for secret in secrets { XCTAssertFalse(planned.bodyText.contains(secret), "the plan holds a token value") }
        let body = try harness.json(planned)
        XCTAssertEqual(body["email"] as? String, email)
        let plan = try XCTUnwrap(body["plan"] as? [String: Any])
        let planID = try XCTUnwrap(plan["planID"] as? String)
        XCTAssertEqual((plan["tables"] as? [String: Int])?["user"], 1)

        let wrongEmail = try post("/api/deletions/\(planID)/apply", ["confirmEmail": "someone@else.example", "noRevoke": true, "reason": "r"])
        XCTAssertEqual(wrongEmail.status, 400, wrongEmail.bodyText)
        let noReason = try post("/api/deletions/\(planID)/apply", ["confirmEmail": email, "noRevoke": true])
        XCTAssertEqual(noReason.status, 400, noReason.bodyText)
        let byOther = try post("/api/deletions/\(planID)/apply", ["confirmEmail": email, "noRevoke": true, "reason": "r"], token: support)
        XCTAssertEqual(byOther.status, 403, byOther.bodyText)

        let applied = try post("/api/deletions/\(planID)/apply", ["confirmEmail": email.uppercased(), "noRevoke": true, "reason": "no Apple account", "retain": "7d"])
        XCTAssertEqual(applied.status, 200, applied.bodyText)
        for secret in secrets { XCTAssertFalse(applied.bodyText.contains(secret), "the result holds a token value") }
        let deletionID = try XCTUnwrap(try harness.json(applied)["deletionID"] as? Int)
        let gone = try harness.request("GET", "/api/users/\(id)", token: admin)
        XCTAssertEqual(gone.status, 404, gone.bodyText)

        let list = try harness.request("GET", "/api/deletions", token: admin)
        XCTAssertEqual(list.status, 200, list.bodyText)
        XCTAssertTrue(list.bodyText.contains(id))
        let shown = try harness.request("GET", "/api/deletions/\(deletionID)", token: admin)
        XCTAssertEqual(shown.status, 200, shown.bodyText)
        XCTAssertEqual(try harness.request("GET", "/api/deletions/\(deletionID)", token: support).status, 403)

        let undone = try post("/api/deletions/\(deletionID)/undo", ["reason": "asked by mistake"])
        XCTAssertEqual(undone.status, 200, undone.bodyText)
        XCTAssertEqual(try harness.request("GET", "/api/users/\(id)", token: admin).status, 200)
        // An undone plan is spent: applying it again is refused, though the user's rows are back as it read them.
        let reapplied = try post("/api/deletions/\(planID)/apply", ["confirmEmail": email, "noRevoke": true, "reason": "again"])
        XCTAssertEqual(reapplied.status, 409, reapplied.bodyText)
        XCTAssertTrue(reapplied.bodyText.contains("undone; an undone plan is spent"), reapplied.bodyText)
        XCTAssertEqual(try harness.request("GET", "/api/users/\(id)", token: admin).status, 200)
        let purged = try post("/api/deletions/purge", [:])
        XCTAssertEqual(purged.status, 200, purged.bodyText)
        XCTAssertTrue(try harness.auditText().contains("user.delete.undo"))
    }

    func testHostileInput() throws {
        for path in ["/api/users/nobody/deletion/plan", "/api/users/%27%3B%20DROP/deletion/plan"] {
            let response = try post(path, ["ticket": "T"])
            XCTAssertEqual(response.status, 404, response.bodyText)
        }
        let (id, _, _) = try someUser()
        XCTAssertEqual(try post("/api/users/\(id)/deletion/plan", ["ticket": String(repeating: "T", count: 5000)]).status, 400)
        XCTAssertEqual(try post("/api/users/\(id)/deletion/plan", ["nope": 1]).status, 400)
        XCTAssertEqual(try post("/api/deletions/dp_\(String(repeating: "z", count: 300))/apply", ["confirmEmail": "x"]).status, 404)
        XCTAssertEqual(try post("/api/deletions/abc/undo", ["reason": "r"]).status, 404)
    }
}
