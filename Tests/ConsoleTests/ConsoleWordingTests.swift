@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The console speaks no CLI: error responses and JSON bodies that carry the domain's words (refused merge plans and
/// applies, gate and policy refusals, the health report) name request fields and pages, never a `--flag` or a
/// `gatehouse …` command line, and never show the marks the domain's text carries.
final class ConsoleWordingTests: XCTestCase {
    var harness: ConsoleHarness!
    var admin: String!

    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 80)
        admin = try harness.tokens("root").access
    }
    override func tearDown() { harness = nil }

    func post(_ path: String, _ object: [String: Any]) throws -> RawResponse {
        try harness.request("POST", path, token: admin, body: try harness.body(object))
    }

    func get(_ path: String) throws -> RawResponse {
        try harness.request("GET", path, token: admin)
    }

    /// No CLI flag, no command line, no marker character in the body.
    func assertSpeaksNoCLI(_ response: RawResponse, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let body = response.bodyText
        XCTAssertNil(body.range(of: #"--[a-z]"#, options: .regularExpression), "\(what) names a CLI flag: \(body)", file: file, line: line)
        XCTAssertNil(body.range(of: #"`gatehouse |gatehouse (merge|gates|apple|providers|policy|users|accounts|health|audit|init|demo|admins) "#,
                                options: .regularExpression), "\(what) names a CLI command: \(body)", file: file, line: line)
        XCTAssertFalse(body.unicodeScalars.contains(where: DomainText.isMarker), "\(what) leaks a marker: \(body)", file: file, line: line)
    }

    /// Two users who both have a password, so planning them meets a conflict.
    func twoPasswordUsers() throws -> (u1: String, u2: String) {
        let store = try Store.open(path: harness.storePath)
        let account = store.schema.account
        let ids = try store.db.rows("""
            SELECT DISTINCT \(account.col(.userId)) FROM \(account.sql)
            WHERE \(account.col(.providerId)) = 'credential' AND \(account.col(.password)) IS NOT NULL ORDER BY 1 LIMIT 2
            """).compactMap { $0[0].string }
        XCTAssertEqual(ids.count, 2)
        return (ids[0], ids[1])
    }

    func testMergeAnswersAndRefusalsNameFieldsAndPages() throws {
        let (u1, u2) = try twoPasswordUsers()
        let undecided = try post("/api/merges/plan", ["from": u2, "into": u1])
        XCTAssertEqual(undecided.status, 200, undecided.bodyText)
        XCTAssertGreaterThan((try harness.json(undecided)["plan"] as? [String: Any])?["unresolved"] as? Int ?? 0, 0)
        assertSpeaksNoCLI(undecided, "a plan with unresolved conflicts")

        // Decided: the steps' reasons name the decision by its request field.
        let decided = try post("/api/merges/plan", ["from": u2, "into": u1, "keepPassword": "source", "keepEmail": "source", "carryRoles": true])
        XCTAssertEqual(decided.status, 200, decided.bodyText)
        assertSpeaksNoCLI(decided, "a decided plan")
        XCTAssertTrue(decided.bodyText.contains(#"(\"keepPassword\" source)"#), decided.bodyText)
        let planID = try XCTUnwrap((try harness.json(decided)["plan"] as? [String: Any])?["planID"] as? String)

        let noTicket = try post("/api/merges/\(planID)/apply", ["ticket": " "])
        XCTAssertEqual(noTicket.status, 400)
        assertSpeaksNoCLI(noTicket, "an apply without a ticket")
        XCTAssertTrue(noTicket.bodyText.contains(#"\"ticket\" is empty"#), noTicket.bodyText)

        let noPlan = try post("/api/merges/mp_nosuchplan/apply", ["ticket": "SUP-1"])
        XCTAssertEqual(noPlan.status, 404)
        assertSpeaksNoCLI(noPlan, "an apply of a missing plan")
        XCTAssertTrue(noPlan.bodyText.contains("the Merges page's plan form"), noPlan.bodyText)

        // The stored plan's reasons are rendered when read back.
        let applied = try post("/api/merges/\(planID)/apply", ["ticket": "SUP-1"])
        XCTAssertEqual(applied.status, 200, applied.bodyText)
        let mergeID = try XCTUnwrap(try harness.json(applied)["mergeID"] as? Int)
        assertSpeaksNoCLI(applied, "the apply result")
        assertSpeaksNoCLI(try get("/api/merges/\(mergeID)"), "the merge record")
        assertSpeaksNoCLI(try get("/api/merges"), "the merge list")
        let again = try post("/api/merges/\(planID)/apply", ["ticket": "SUP-1"])
        XCTAssertEqual(again.status, 409)
        assertSpeaksNoCLI(again, "a second apply")

        for (path, body) in [("/api/merges/\(mergeID)/undo", ["reason": ""]), ("/api/merges/999999/undo", ["reason": "wrong person"])] {
            let refused = try post(path, body)
            XCTAssertGreaterThanOrEqual(refused.status, 400)
            assertSpeaksNoCLI(refused, "undo refusal \(path)")
        }
        let sameUser = try post("/api/merges/plan", ["from": u1, "into": u1])
        XCTAssertEqual(sameUser.status, 400)
        assertSpeaksNoCLI(sameUser, "a plan of one user with itself")
        XCTAssertTrue(sameUser.bodyText.contains(#"\"from\" and \"into\" are the same user"#), sameUser.bodyText)
    }

    func testGateRefusalsAndTheBoardNameFieldsAndPages() throws {
        assertSpeaksNoCLI(try get("/api/gates"), "the gate board")
        let refusals: [(String, [String: Any])] = [
            ("/api/gates/requirements", ["provider": "apple", "requirement": "membership", "met": true, "evidence": "x", "expires": "2020-01-01"]),
            ("/api/gates/requirements", ["provider": "apple", "requirement": "membership", "met": true, "evidence": "x"]),
            ("/api/gates/requirements", ["provider": "apple", "requirement": "membership", "platform": "ios", "met": true, "evidence": "x", "expires": "2030-01-01"]),
            ("/api/gates/requirements", ["provider": "apple", "requirement": "app_id", "met": false, "evidence": "x", "expires": "2030-01-01"]),
            ("/api/gates/requirements", ["provider": "apple", "requirement": "p8_key", "met": true, "evidence": "x"]),
            ("/api/gates/requirements", ["provider": "google", "requirement": "oauth_client", "platform": "ios", "met": true, "evidence": "x"]),
            ("/api/gates/requirements", ["provider": "apple", "requirement": "app_id", "met": true, "evidence": " "]),
            ("/api/gates/enable", ["provider": "google", "platform": "ios", "reason": "launch"]),
            ("/api/gates/enable", ["provider": "apple", "platform": "ios", "reason": "launch"]),
            ("/api/gates/enable", ["provider": "apple", "platform": "ios", "reason": ""]),
        ]
        for (path, body) in refusals {
            let response = try post(path, body)
            XCTAssertGreaterThanOrEqual(response.status, 400, "\(path) \(body): \(response.bodyText)")
            assertSpeaksNoCLI(response, "\(path) \(body)")
        }
        let past = try post("/api/gates/requirements", refusals[0].1)
        XCTAssertTrue(past.bodyText.contains(#"add \"force\""#), past.bodyText)
        let guideline = try post("/api/gates/enable", refusals[7].1)
        XCTAssertEqual(guideline.status, 409, guideline.bodyText)
    }

    func testPolicyRefusalsAndHealthSpeakNoCLI() throws {
        // The refusals worded outside Policy/ (reasons checked as operator text); Policy's own wording is converted
        // with Policy/ (its takeover, stale-version and empty-reason refusals still name flags until then).
        for body in [["key": "linkSocial.allowDifferentEmails", "value": true, "reason": String(repeating: "r", count: 5000)],
                     ["key": "linkSocial.allowDifferentEmails", "value": true, "reason": "a\u{1B}[2Jb"]] as [[String: Any]] {
            let response = try post("/api/policy", body)
            XCTAssertEqual(response.status, 400, response.bodyText)
            assertSpeaksNoCLI(response, "a policy refusal")
        }
        // An open-ended linking window makes the policy check ask for an end: its action is a policy command.
        let window = try post("/api/policy", ["key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-9 window"])
        XCTAssertEqual(window.status, 200, window.bodyText)
        let health = try get("/api/health")
        XCTAssertEqual(health.status, 200, health.bodyText)
        XCTAssertTrue(health.bodyText.contains(#"give it an end: the Policy page (linkSocial.allowDifferentEmails true, \"for\" 7d"#), health.bodyText)
        XCTAssertTrue(health.bodyText.contains(#"the timer records with \"record\""#), health.bodyText)
        assertSpeaksNoCLI(health, "the health report")
    }

    /// A user may type marker characters: they are not read as references, and never reach the page raw.
    func testTypedMarkerCharactersRenderHarmlessly() throws {
        let typed = "\u{E000}freveal\u{E001}x\u{E002}\u{E000}"
        let response = try post("/api/merges/plan", ["from": typed, "into": "nobody"])
        XCTAssertEqual(response.status, 404, response.bodyText)
        assertSpeaksNoCLI(response, "an echoed hostile id")
        XCTAssertFalse(response.bodyText.contains(#"\"reveal\""#), "a typed mark is not a reference: \(response.bodyText)")
        XCTAssertTrue(response.bodyText.contains("\u{FFFD}"), response.bodyText)
        // Typed into operator text that would be stored, they are refused.
        let reason = try post("/api/gates/enable", ["provider": "apple", "platform": "web", "reason": "launch \u{E000}cmerge list\u{E001}"])
        XCTAssertEqual(reason.status, 400, reason.bodyText)
        XCTAssertTrue(reason.bodyText.contains("private-use character U+E000"), reason.bodyText)
        assertSpeaksNoCLI(reason, "a refused reason")
    }

    /// The JSON pass renders each string alone: marks split across strings, or hidden in keys, stay harmless and the
    /// document stays valid.
    func testRenderingJSONKeepsDocumentsValid() throws {
        let values: [String: String] = ["a\u{E000}": "\u{E001}b", "c": "x \u{E000}fticket\u{E001} \"q\" \\ \u{E000}cmerge list\u{E001}",
                                        "d": "\u{E000}rgates set\u{E002}wapple\u{E002}oevidence=\"...\"\u{E001}", "e": "plain"]
        let rendered = ConsoleSpelling.renderJSON(Array(try JSONBody.encoder.encode(values)))
        let decoded = try JSONDecoder().decode([String: String].self, from: Data(rendered))
        XCTAssertEqual(decoded["c"], #"x "ticket" "q" \ the Merges page"#)
        XCTAssertEqual(decoded["d"], #"the Gates page's requirement form (apple, "evidence" "...")"#)
        XCTAssertEqual(decoded["e"], "plain")
        XCTAssertEqual(decoded["a\u{FFFD}"], "\u{FFFD}b")
        XCTAssertFalse(String(decoding: rendered, as: UTF8.self).unicodeScalars.contains(where: DomainText.isMarker))
    }
}
