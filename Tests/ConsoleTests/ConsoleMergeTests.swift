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

/// The merge API over a real socket: plan (deciding a conflict), apply with a ticket, list, show and
/// undo; roles; hostile input; and no token value or password hash in any answer.
final class ConsoleMergeTests: XCTestCase {
    var harness: ConsoleHarness!
    var support: String!
    var viewer: String!

    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 80)
        support = try harness.tokens("sam").access
        viewer = try harness.tokens("vera").access
    }
    override func tearDown() { harness = nil }

    /// The merge routes and their minimum roles.
    static let routes: [(method: String, path: String, role: AdminRole)] = [
        ("POST", "/api/merges/plan", .support),
        ("POST", "/api/merges/mp_0123/apply", .support),
        ("POST", "/api/merges/1/undo", .support),
        ("GET", "/api/merges", .viewer),
        ("GET", "/api/merges/1", .viewer),
    ]

    func post(_ path: String, _ object: [String: Any], token: String? = nil) throws -> RawResponse {
        try harness.request("POST", path, token: token ?? support, body: try harness.body(object))
    }

    /// Two distinct users who both have a password (a credential account), so planning them meets the password conflict.
    func twoPasswordUsers() throws -> (u1: String, u2: String) {
        let store = try Store.open(path: harness.storePath)
        let account = store.schema.account
        let ids = try store.db.rows("""
            SELECT DISTINCT \(account.col(.userId)) FROM \(account.sql)
            WHERE \(account.col(.providerId)) = 'credential' AND \(account.col(.password)) IS NOT NULL ORDER BY 1 LIMIT 2
            """).compactMap { $0[0].string }
        XCTAssertEqual(ids.count, 2, "the seeded store has two users with a password")
        return (ids[0], ids[1])
    }

    /// Every token value and password hash the two users hold.
    func secrets(of users: [String]) throws -> [String] {
        let store = try Store.open(path: harness.storePath)
        let account = store.schema.account, session = store.schema.session
        var values: [String] = []
        for user in users {
            for column: AuthSchema.Field in [.accessToken, .refreshToken, .idToken, .password] where account.has(column) {
                values += try store.db.rows("SELECT \(account.col(column)) FROM \(account.sql) WHERE \(account.col(.userId)) = ?", [user]).compactMap { $0[0].string }
            }
            values += try store.db.rows("SELECT \(session.col(.token)) FROM \(session.sql) WHERE \(session.col(.userId)) = ?", [user]).compactMap { $0[0].string }
        }
        return values.filter { $0.count >= 8 }
    }

    func assertNoSecret(_ response: RawResponse, _ secrets: [String], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        for secret in secrets {
            XCTAssertFalse(response.bodyText.contains(secret), "\(what) holds a token value or password hash", file: file, line: line)
        }
    }

    func testPlanDecideApplyListShowAndUndo() throws {
        let (u1, u2) = try twoPasswordUsers()
        let secrets = try secrets(of: [u1, u2])
        XCTAssertFalse(secrets.isEmpty, "the users have values to leak")

        // Undecided: the plan is shown, not stored, and says which field decides the password conflict.
        let first = try post("/api/merges/plan", ["from": u2, "into": u1])
        XCTAssertEqual(first.status, 200, first.bodyText)
        assertNoSecret(first, secrets, "the undecided plan")
        let undecided = try harness.json(first)
        let plan = try XCTUnwrap(undecided["plan"] as? [String: Any])
        XCTAssertNil(plan["planID"] as? String, "a plan with an undecided conflict is not stored")
        XCTAssertGreaterThan(plan["unresolved"] as? Int ?? 0, 0)
        let decisions = try XCTUnwrap(undecided["decisions"] as? [[String: Any]])
        let password = try XCTUnwrap(decisions.first { $0["kind"] as? String == "password" })
        XCTAssertEqual(password["field"] as? String, "keepPassword")
        XCTAssertEqual(password["values"] as? [String], ["target", "source"])
        XCTAssertNil(password["chosen"] as? String)

        // Decided: U1 takes U2's password hash, which the diff shows redacted.
        let second = try post("/api/merges/plan", ["from": u2, "into": u1, "keepPassword": "source", "keepEmail": "target"])
        XCTAssertEqual(second.status, 200, second.bodyText)
        assertNoSecret(second, secrets, "the decided plan")
        let decided = try XCTUnwrap(try harness.json(second)["plan"] as? [String: Any])
        let planID = try XCTUnwrap(decided["planID"] as? String)
        XCTAssertTrue(planID.hasPrefix("mp_"))
        XCTAssertEqual(decided["unresolved"] as? Int, 0)
        XCTAssertTrue(second.bodyText.contains("[redacted]"), "the password column is named, its value redacted")
        let changes = try XCTUnwrap(decided["changes"] as? [[String: Any]])
        XCTAssertTrue(changes.contains { $0["operation"] as? String == "delete" && $0["table"] as? String == "user" })
        XCTAssertNotNil(decided["warnings"] as? [String])

        // A stored plan edited in the store (its steps' words here) is refused with 409, naming the plan;
        // put back as it was made, it applies.
        let store = try Store.open(path: harness.storePath)
        let stored = try XCTUnwrap(try store.db.scalar("SELECT plan FROM gatehouse_merge_plans WHERE id = ?", [planID]).string)
        try store.db.write {
            try store.db.execute("UPDATE gatehouse_merge_plans SET plan = ? WHERE id = ?", [stored.replacingOccurrences(of: "\"reason\":\"", with: "\"reason\":\"edited: "), planID])
        }
        let tampered = try post("/api/merges/\(planID)/apply", ["ticket": "SUP-4242"])
        XCTAssertEqual(tampered.status, 409, tampered.bodyText)
        XCTAssertTrue(tampered.bodyText.contains("merge plan \(planID) does not match what its users' rows and decisions give: the stored plan was altered"), tampered.bodyText)
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_merges").int64, 0)
        try store.db.write { try store.db.execute("UPDATE gatehouse_merge_plans SET plan = ? WHERE id = ?", [stored, planID]) }

        // Apply with a ticket.
        let applied = try post("/api/merges/\(planID)/apply", ["ticket": "SUP-4242"])
        XCTAssertEqual(applied.status, 200, applied.bodyText)
        assertNoSecret(applied, secrets, "the apply result")
        let mergeID = try XCTUnwrap(try harness.json(applied)["mergeID"] as? Int)
        XCTAssertEqual(try harness.json(applied)["ticket"] as? String, "SUP-4242")
        let again = try post("/api/merges/\(planID)/apply", ["ticket": "SUP-4242"])
        XCTAssertEqual(again.status, 409, "a plan applies once: \(again.bodyText)")

        // A viewer reads the list and the merge, without values.
        let list = try harness.request("GET", "/api/merges", token: viewer)
        XCTAssertEqual(list.status, 200, list.bodyText)
        assertNoSecret(list, secrets, "the list")
        let records = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.body)) as? [[String: Any]])
        XCTAssertEqual(records.first?["id"] as? Int, mergeID)
        XCTAssertEqual(records.first?["status"] as? String, "applied")
        let shown = try harness.request("GET", "/api/merges/\(mergeID)", token: viewer)
        XCTAssertEqual(shown.status, 200, shown.bodyText)
        assertNoSecret(shown, secrets, "the merge")
        XCTAssertFalse((try harness.json(shown)["rows"] as? [String])?.isEmpty ?? true)

        // Undo with a reason; a second undo is refused.
        let undone = try post("/api/merges/\(mergeID)/undo", ["reason": "wrong person, SUP-4243"])
        XCTAssertEqual(undone.status, 200, undone.bodyText)
        assertNoSecret(undone, secrets, "the undo result")
        XCTAssertGreaterThan(try harness.json(undone)["rowsRestored"] as? Int ?? 0, 0)
        let twice = try post("/api/merges/\(mergeID)/undo", ["reason": "again"])
        XCTAssertEqual(twice.status, 409, twice.bodyText)
        let after = try harness.json(try harness.request("GET", "/api/merges/\(mergeID)", token: viewer))
        XCTAssertEqual(after["status"] as? String, "undone")
        XCTAssertEqual(after["undoReason"] as? String, "wrong person, SUP-4243")
        // An undone plan is spent: applying it again is refused, though the rows are as it read them.
        let reapplied = try post("/api/merges/\(planID)/apply", ["ticket": "SUP-4244"])
        XCTAssertEqual(reapplied.status, 409, reapplied.bodyText)
        XCTAssertTrue(reapplied.bodyText.contains("undone; an undone plan is spent"), reapplied.bodyText)

        // Audited under the console actor, without values.
        let audit = try harness.auditText()
        for action in ["merge.plan", "merge.apply", "merge.undo"] { XCTAssertTrue(audit.contains(action), action) }
        XCTAssertTrue(audit.contains("console:sam"))
        for secret in secrets { XCTAssertFalse(audit.contains(secret), "the audit log holds a secret") }
    }

    /// The list and one merge name who they joined: U2 by the name and email of the user row the merge deleted, U1 by
    /// its row before the merge changed its email, or as it is when the merge left it alone.
    func testTheListAndAMergeNameWhoTheyJoined() throws {
        let (u1, u2) = try twoPasswordUsers()
        let store = try Store.open(path: harness.storePath)
        let user = store.schema.user
        func person(_ id: String) throws -> (name: String, email: String) {
            let row = try XCTUnwrap(try store.db.row("SELECT \(user.col(.name)), \(user.col(.email)) FROM \(user.sql) WHERE \(user.col(.id)) = ?", [id]))
            return (row[0].string ?? "", row[1].string ?? "")
        }
        let (one, two) = (try person(u1), try person(u2))
        XCTAssertNotEqual(one.email, two.email)

        func merge(keepEmail: String) throws -> Int {
            let planned = try harness.json(try post("/api/merges/plan", ["from": u2, "into": u1, "keepPassword": "target", "keepEmail": keepEmail,
                                                                         "keepSubscription": "target", "sameProvider": "both", "carryRoles": false]))
            let planID = try XCTUnwrap((planned["plan"] as? [String: Any])?["planID"] as? String, "\(planned)")
            let applied = try post("/api/merges/\(planID)/apply", ["ticket": "SUP-4250"])
            XCTAssertEqual(applied.status, 200, applied.bodyText)
            return try XCTUnwrap(try harness.json(applied)["mergeID"] as? Int)
        }
        func listed(_ id: Int) throws -> [String: Any] {
            let list = try harness.request("GET", "/api/merges", token: viewer)
            XCTAssertEqual(list.status, 200, list.bodyText)
            let records = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.body)) as? [[String: Any]])
            return try XCTUnwrap(records.first { $0["id"] as? Int == id })
        }

        // U1 takes U2's email: U1 is named by its row before the merge.
        let first = try merge(keepEmail: "source")
        XCTAssertEqual(try person(u1).email, two.email, "the merge gave U1 U2's email")
        for record in [try listed(first), try harness.json(try harness.request("GET", "/api/merges/\(first)", token: viewer))] {
            XCTAssertEqual(record["sourceName"] as? String, two.name)
            XCTAssertEqual(record["sourceEmail"] as? String, two.email)
            XCTAssertEqual(record["targetName"] as? String, one.name)
            XCTAssertEqual(record["targetEmail"] as? String, one.email)
            XCTAssertEqual(record["source"] as? String, u2, "the record's own fields are kept")
        }
        XCTAssertEqual(try post("/api/merges/\(first)/undo", ["reason": "test, SUP-4250"]).status, 200)

        // U1 keeps its email: the merge left U1's row alone, which names it as it is.
        let second = try merge(keepEmail: "target")
        let record = try listed(second)
        XCTAssertEqual(record["sourceEmail"] as? String, two.email)
        XCTAssertEqual(record["targetName"] as? String, one.name)
        XCTAssertEqual(record["targetEmail"] as? String, one.email)
    }

    func testRolesAreEnforced() throws {
        var router = Router()
        APIRoutes.register(on: &router)
        for route in Self.routes {
            let pattern = route.path.replacingOccurrences(of: "mp_0123", with: ":planId").replacingOccurrences(of: "/1", with: "/:id")
            XCTAssertTrue(router.table.contains("\(route.method) \(pattern) (\(route.role.rawValue))"), "\(route.method) \(pattern)")
        }
        for route in Self.routes {
            let body = route.method == "POST" ? "{}" : nil
            XCTAssertEqual(try harness.request(route.method, route.path, body: body).status, 401, "\(route.path) without a token")
            if route.role != .viewer {
                let refused = try harness.request(route.method, route.path, token: viewer, body: body)
                XCTAssertEqual(refused.status, 403, "\(route.method) \(route.path) as a viewer")
                XCTAssertEqual(harness.errorCode(refused), "forbidden_role")
            }
        }
        let (u1, u2) = try twoPasswordUsers()
        let refused = try post("/api/merges/plan", ["from": u2, "into": u1, "keepPassword": "target"], token: viewer)
        XCTAssertEqual(refused.status, 403)
        let count = try Store.open(path: harness.storePath).db.scalar("SELECT count(*) FROM gatehouse_merge_plans").int64
        XCTAssertEqual(count, 0, "a viewer's plan is not stored")
    }

    func testHostileInput() throws {
        let (u1, u2) = try twoPasswordUsers()
        func status(_ response: RawResponse, _ expected: Int, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertEqual(response.status, expected, "\(what): \(response.bodyText)", file: file, line: line)
            XCTAssertFalse(response.bodyText.lowercased().contains("sqlite"), "\(what): no SQLite text in the answer", file: file, line: line)
        }
        status(try post("/api/merges/plan", ["from": u1, "into": u1]), 400, "the same user twice")
        status(try post("/api/merges/plan", ["from": u1, "into": "better_auth|" + u1]), 400, "the same user by id and by sub")
        status(try post("/api/merges/plan", ["from": "nobody-here", "into": u1]), 404, "an unknown user")
        for hostile in ["' OR 1=1 --", "\"; DROP TABLE user; --", "%", "_", "x@y' UNION SELECT password FROM account --"] {
            status(try post("/api/merges/plan", ["from": hostile, "into": u1]), 404, "SQL metacharacters \(hostile)")
        }
        status(try post("/api/merges/plan", ["from": String(repeating: "a", count: 10_000), "into": u1]), 400, "a huge user reference")
        status(try post("/api/merges/plan", ["from": u2, "into": u1, "keepEmail": "sideways"]), 400, "an unknown decision")
        status(try post("/api/merges/plan", ["from": u2]), 400, "no into")
        status(try harness.request("POST", "/api/merges/plan", token: support, body: "from=a&into=b", contentType: "application/x-www-form-urlencoded"),
               415, "a form body")
        status(try harness.request("POST", "/api/merges/plan", token: support, body: "{not json"), 400, "broken JSON")
        status(try harness.request("POST", "/api/merges/plan", token: support, body: "[1,2]"), 400, "a JSON array")

        let decided = try harness.json(try post("/api/merges/plan", ["from": u2, "into": u1, "keepPassword": "target"]))
        let planID = try XCTUnwrap((decided["plan"] as? [String: Any])?["planID"] as? String)
        let huge = String(repeating: "T", count: 5_000)
        let hugeTicket = try post("/api/merges/\(planID)/apply", ["ticket": huge])
        status(hugeTicket, 400, "a huge ticket")
        XCTAssertFalse(hugeTicket.bodyText.contains(String(repeating: "T", count: 100)), "the ticket is not echoed")
        status(try post("/api/merges/\(planID)/apply", ["ticket": "SUP-1\nSUP-2"]), 400, "a two-line ticket")
        status(try post("/api/merges/\(planID)/apply", ["ticket": "   "]), 400, "a blank ticket")
        status(try post("/api/merges/\(planID)/apply", [:]), 400, "no ticket")
        status(try post("/api/merges/mp_000000000000000000000000/apply", ["ticket": "SUP-1"]), 404, "an unknown plan")
        status(try post("/api/merges/\(String(repeating: "x", count: 500))/apply", ["ticket": "SUP-1"]), 404, "a huge plan id")
        status(try post("/api/merges/mp_'%20OR%201=1/apply", ["ticket": "SUP-1"]), 404, "SQL in the plan id")
        status(try post("/api/merges/999/undo", ["reason": "r"]), 404, "an unknown merge")
        status(try post("/api/merges/abc/undo", ["reason": "r"]), 404, "a merge id that is not a number")
        status(try harness.request("GET", "/api/merges/abc", token: viewer), 404, "show a merge id that is not a number")
        status(try harness.request("GET", "/api/merges/1%20OR%201=1", token: viewer), 404, "SQL in a merge id")
        status(try harness.request("GET", "/api/merges?limit=0", token: viewer), 400, "limit 0")
        status(try harness.request("GET", "/api/merges?limit=lots", token: viewer), 400, "limit text")

        // Nothing above changed the users: the plan still applies, and an empty reason cannot undo it.
        let applied = try post("/api/merges/\(planID)/apply", ["ticket": "SUP-9"])
        status(applied, 200, "the plan after the hostile requests")
        let mergeID = try XCTUnwrap(try harness.json(applied)["mergeID"] as? Int)
        status(try post("/api/merges/\(mergeID)/undo", ["reason": "  "]), 400, "an empty reason")
        status(try post("/api/merges/\(mergeID)/undo", ["reason": String(repeating: "r", count: 3000)]), 400, "a huge reason")
        // The merged-away user is gone, so planning it again names it as unknown.
        status(try post("/api/merges/plan", ["from": u2, "into": u1]), 404, "the merged-away user")
    }
}
