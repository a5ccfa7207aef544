@testable import Console
import Foundation
import Gatehouse
import HTTPTestSupport
import Storage
import TestEngines
import XCTest

/// Two-person approval over the console's API: with the store requiring an action, the console answers 202 and
/// changes nothing; another admin's approval runs the request as it was made (against the store as it is then) and
/// audits both names; self-approval, denial, expiry, a plan gone stale and two approvers at once are refused.
final class ConsoleApprovalTests: XCTestCase {
    var harness: ConsoleHarness!
    var root: String!
    var ada: String!
    var sam: String!

    override func setUpWithError() throws { try start(.sqlite) }
    override func tearDown() { harness = nil }

    func start(_ engine: EngineKind) throws {
        harness = try ConsoleHarness(users: 40, engine: engine)
        // A second admin, to approve what root asks for (and the other way round).
        let store = try Store.open(path: harness.storePath)
        try AdminDirectory(store: store, hasher: ConsoleHarness.testHasher)
            .add(try AdminUsername("ada"), role: .admin, password: try AdminPassword(ConsoleHarness.password), actor: Actor("tester"), now: .now())
        root = try harness.tokens("root").access
        ada = try harness.tokens("ada").access
        sam = try harness.tokens("sam").access
    }

    func require(_ actions: Set<ApprovalAction>, expiresAfter: Seconds? = nil) throws {
        try ApprovalStore(store: try Store.open(path: harness.storePath)).require(actions, expiresAfter: expiresAfter, actor: Actor("host-operator"), now: harness.clock.now)
    }

    func post(_ path: String, _ object: [String: Any] = [:], token: String) throws -> RawResponse {
        try harness.request("POST", path, token: token, body: try harness.body(object))
    }

    /// The approval id of a held request, after checking it was held (202, pending).
    func held(_ response: RawResponse, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        XCTAssertEqual(response.status, 202, response.bodyText, file: file, line: line)
        let body = try harness.json(response)
        XCTAssertEqual(body["status"] as? String, "pending", file: file, line: line)
        return try XCTUnwrap(body["approvalId"] as? Int, file: file, line: line)
    }

    func count(_ sql: String) throws -> Int64 {
        try Store.open(path: harness.storePath).db.scalar(sql).int64 ?? -1
    }

    func policyValue() throws -> Bool? {
        let policy = try harness.json(try harness.request("GET", "/api/policy", token: root))
        let entries = policy["entries"] as? [[String: Any]] ?? []
        return entries.first { $0["key"] as? String == "linkSocial.allowDifferentEmails" }?["value"] as? Bool
    }

    /// Two users with a password each: their merge plan has a conflict to decide.
    func mergePlan(token: String) throws -> String {
        let store = try Store.open(path: harness.storePath)
        let account = store.schema.account
        let ids = try store.db.rows("""
            SELECT DISTINCT \(account.col(.userId)) FROM \(account.sql)
            WHERE \(account.col(.providerId)) = 'credential' AND \(account.col(.password)) IS NOT NULL ORDER BY 1 LIMIT 2
            """).compactMap { $0[0].string }
        let planned = try post("/api/merges/plan", ["from": ids[1], "into": ids[0], "keepPassword": "target", "keepEmail": "target"], token: token)
        XCTAssertEqual(planned.status, 200, planned.bodyText)
        return try XCTUnwrap((try harness.json(planned)["plan"] as? [String: Any])?["planID"] as? String)
    }

    func testAHeldMergeRunsOnlyWhenAnotherAdminApprovesItAndTheAuditNamesBoth() throws {
        try require([.mergeApply, .mergeUndo])
        let planID = try mergePlan(token: sam)
        // Support staff ask; the merge is held and nothing is merged.
        let id = try held(try post("/api/merges/\(planID)/apply", ["ticket": "SUP-900"], token: sam))
        XCTAssertEqual(try count("SELECT count(*) FROM gatehouse_merges"), 0)
        let pending = try harness.request("GET", "/api/approvals", token: sam)
        XCTAssertEqual(pending.status, 200, pending.bodyText)
        let list = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(pending.body)) as? [[String: Any]])
        XCTAssertEqual(list.map { $0["id"] as? Int }, [id])
        XCTAssertEqual(list.first?["action"] as? String, "merge.apply")
        XCTAssertEqual(list.first?["requestedBy"] as? String, "sam")
        // The reviewer sees the plan's rows, redacted as the merge page shows them.
        let shown = try harness.json(try harness.request("GET", "/api/approvals/\(id)", token: root))
        let detail = try XCTUnwrap((shown["detail"] as? [String: Any])?["plan"] as? [String: Any])
        XCTAssertEqual(detail["planID"] as? String, planID)
        XCTAssertFalse((detail["changes"] as? [Any])?.isEmpty ?? true)
        XCTAssertEqual((shown["body"] as? [String: Any])?["ticket"] as? String, "SUP-900")

        // Support staff cannot approve; an admin can.
        XCTAssertEqual(try post("/api/approvals/\(id)/approve", token: sam).status, 403)
        let approved = try post("/api/approvals/\(id)/approve", token: root)
        XCTAssertEqual(approved.status, 200, approved.bodyText)
        XCTAssertEqual(approved.header("x-approval-id"), String(id))
        let mergeID = try XCTUnwrap(try harness.json(approved)["mergeID"] as? Int)
        XCTAssertEqual(try count("SELECT count(*) FROM gatehouse_merges"), 1)
        let audit = try harness.auditText()
        XCTAssertTrue(audit.contains("console:sam, approved by console:root (approval \(id))"), "the merge's own entry names both")
        XCTAssertTrue(audit.contains("approval.approved"))
        let after = try harness.json(try harness.request("GET", "/api/approvals/\(id)", token: root))
        XCTAssertEqual(after["status"] as? String, "approved")
        XCTAssertEqual(after["decidedBy"] as? String, "console:root")
        XCTAssertEqual(after["outcomeStatus"] as? Int, 200)
        // Decided once: a second approval is refused.
        let again = try post("/api/approvals/\(id)/approve", token: ada)
        XCTAssertEqual(again.status, 409, again.bodyText)
        XCTAssertEqual(harness.errorCode(again), "approval_closed")

        // The undo is held too, and runs on approval.
        let undo = try held(try post("/api/merges/\(mergeID)/undo", ["reason": "wrong person"], token: root))
        XCTAssertEqual(try count("SELECT count(*) FROM gatehouse_merges WHERE undone_at IS NOT NULL"), 0)
        let selfApproval = try post("/api/approvals/\(undo)/approve", token: root)
        XCTAssertEqual(selfApproval.status, 403, selfApproval.bodyText)
        XCTAssertEqual(harness.errorCode(selfApproval), "self_approval")
        XCTAssertEqual(try post("/api/approvals/\(undo)/approve", token: ada).status, 200)
        XCTAssertEqual(try count("SELECT count(*) FROM gatehouse_merges WHERE undone_at IS NOT NULL"), 1)
    }

    func testEveryListedConsoleActionIsHeldAndChangesNothingUntilApproved() throws {
        try everyActionIsHeld()
    }

    func testEveryListedConsoleActionIsHeldOnPostgresAndD1() throws {
        for engine in [EngineKind.postgres, .d1] {
            do { try start(engine) } catch is XCTSkip { continue }
            try everyActionIsHeld()
        }
    }

    func everyActionIsHeld(file: StaticString = #filePath, line: UInt = #line) throws {
        try require(Set(ApprovalAction.allCases))
        // Every listed action has its console routes.
        var router = Router()
        APIRoutes.register(on: &router)
        XCTAssertEqual(Set(router.approvalRoutes.values), Set(ApprovalAction.allCases))
        XCTAssertEqual(router.approvalRoutes["POST /api/admins/:username/disable"], .admins)
        XCTAssertEqual(router.approvalRoutes["POST /api/gates/enable"], .gateEnable)
        XCTAssertNil(router.approvalRoutes["POST /api/gates/disable"], "turning a provider off is not held")

        // policy.set: held; approved by another admin, the value changes.
        XCTAssertEqual(try policyValue(), false)
        let policy = try held(try post("/api/policy", ["key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-1 connect", "for": "1h"], token: root))
        XCTAssertEqual(try policyValue(), false, "held: nothing changed")
        XCTAssertEqual(try post("/api/approvals/\(policy)/approve", token: ada).status, 200)
        XCTAssertEqual(try policyValue(), true)

        // user.delete: held; approved, the user is gone.
        let store = try Store.open(path: harness.storePath)
        let user = store.schema.user
        let row = try XCTUnwrap(try store.db.row("SELECT \(user.col(.id)) AS id, \(user.col(.email)) AS email FROM \(user.sql) WHERE \(user.col(.email)) IS NOT NULL ORDER BY 1 LIMIT 1"))
        let (userID, email) = (try row.string("id"), try row.string("email"))
        let planned = try post("/api/users/\(userID)/deletion/plan", ["ticket": "SUP-2"], token: root)
        let deletionPlan = try XCTUnwrap((try harness.json(planned)["plan"] as? [String: Any])?["planID"] as? String)
        let deletion = try held(try post("/api/deletions/\(deletionPlan)/apply", ["confirmEmail": email, "noRevoke": true, "reason": "asked"], token: root))
        XCTAssertEqual(try harness.request("GET", "/api/users/\(userID)", token: root).status, 200, "held: the user is there")
        XCTAssertEqual(try harness.json(try harness.request("GET", "/api/approvals/\(deletion)", token: ada))["detail"].flatMap { ($0 as? [String: Any])?["email"] as? String }, email)
        XCTAssertEqual(try post("/api/approvals/\(deletion)/approve", token: ada).status, 200)
        XCTAssertEqual(try harness.request("GET", "/api/users/\(userID)", token: root).status, 404)

        // gate.enable and the Apple key actions: held, and on approval the action answers as it would have (here
        // refused: the demo store's gates and keys are not ready), the approval recording it as failed.
        let keys = try count("SELECT count(*) FROM gatehouse_apple_keys")
        for (path, body) in [("/api/gates/enable", ["provider": "google", "platform": "web", "reason": "web 1.0"] as [String: Any]),
                             ("/api/apple/keys/1/activate", [:]), ("/api/apple/keys/1/revoke", [:]), ("/api/apple/keys/rollback", [:])] {
            let id = try held(try post(path, body, token: root))
            XCTAssertEqual(try count("SELECT count(*) FROM gatehouse_apple_keys"), keys)
            let answered = try post("/api/approvals/\(id)/approve", token: ada)
            XCTAssertNotEqual(answered.status, 202, "\(path): an approved request runs, it is not held again")
            let outcome = try harness.json(try harness.request("GET", "/api/approvals/\(id)", token: ada))
            XCTAssertEqual(outcome["outcomeStatus"] as? Int, answered.status, path)
            XCTAssertEqual(outcome["status"] as? String, (200..<300).contains(answered.status) ? "approved" : "failed", path)
        }

        // admins: disabling vera is held; approved, she can no longer sign in.
        let disable = try held(try post("/api/admins/vera/disable", token: root))
        XCTAssertEqual(try harness.login("vera").status, 200, "held: vera still signs in")
        XCTAssertEqual(try post("/api/approvals/\(disable)/approve", token: ada).status, 200)
        XCTAssertEqual(try harness.login("vera").status, 401)

        // Not required: the same routes answer at once.
        try require([])
        let direct = try post("/api/policy", ["key": "linkSocial.allowDifferentEmails", "value": false, "reason": "SUP-1 done"], token: root)
        XCTAssertEqual(direct.status, 200, direct.bodyText)
    }

    func testDenyExpiryAStalePlanAndHostileIDs() throws {
        try require([.mergeApply, .policySet], expiresAfter: Seconds(3600))
        // Denied with a reason: closed, and never runs.
        let denied = try held(try post("/api/policy", ["key": "linkSocial.allowDifferentEmails", "value": true, "reason": "x"], token: root))
        let noReason = try post("/api/approvals/\(denied)/deny", [:], token: ada)
        XCTAssertEqual(noReason.status, 400, noReason.bodyText)
        let deny = try post("/api/approvals/\(denied)/deny", ["reason": "not without a ticket"], token: ada)
        XCTAssertEqual(deny.status, 200, deny.bodyText)
        XCTAssertEqual(try harness.json(deny)["status"] as? String, "denied")
        XCTAssertEqual(harness.errorCode(try post("/api/approvals/\(denied)/approve", token: ada)), "approval_closed")
        XCTAssertEqual(try policyValue(), false)
        XCTAssertTrue(try harness.auditText().contains("approval.denied"))

        // Expired after the configured hour: no longer pending, and refused.
        let late = try held(try post("/api/policy", ["key": "linkSocial.allowDifferentEmails", "value": true, "reason": "y"], token: root))
        harness.clock.advance(seconds: 3601)
        root = try harness.tokens("root").access
        ada = try harness.tokens("ada").access
        let pending = try JSONSerialization.jsonObject(with: Data(try harness.request("GET", "/api/approvals", token: ada).body)) as? [Any]
        XCTAssertEqual(pending?.count, 0)
        let expired = try post("/api/approvals/\(late)/approve", token: ada)
        XCTAssertEqual(expired.status, 409, expired.bodyText)
        XCTAssertTrue(expired.bodyText.contains("expired"), expired.bodyText)
        XCTAssertEqual(try policyValue(), false)

        // A plan that went stale between the request and the approval is refused as stale; the approval failed.
        let planID = try mergePlan(token: root)
        let id = try held(try post("/api/merges/\(planID)/apply", ["ticket": "SUP-901"], token: root))
        let store = try Store.open(path: harness.storePath)
        let user = store.schema.user
        try store.db.write {
            try store.db.execute("UPDATE \(user.sql) SET \(user.col(.name)) = 'Renamed Meanwhile' WHERE \(user.col(.id)) IN (SELECT source_user_id FROM gatehouse_merge_plans WHERE id = ?)", [planID])
        }
        let stale = try post("/api/approvals/\(id)/approve", token: ada)
        XCTAssertEqual(stale.status, 409, stale.bodyText)
        XCTAssertEqual(try count("SELECT count(*) FROM gatehouse_merges"), 0)
        XCTAssertEqual(try harness.json(try harness.request("GET", "/api/approvals/\(id)", token: ada))["status"] as? String, "failed")

        // Hostile ids and bodies.
        for bad in ["0", "-1", "abc", "99999999999999999999", "1%00"] {
            XCTAssertEqual(try post("/api/approvals/\(bad)/approve", token: ada).status, 400, bad)
        }
        XCTAssertEqual(try post("/api/approvals/424242/approve", token: ada).status, 404)
        let notJSON = try harness.request("POST", "/api/policy", token: root, body: "{\"key\": ", contentType: "application/json")
        XCTAssertEqual(notJSON.status, 400, notJSON.bodyText)
        XCTAssertEqual(try count("SELECT count(*) FROM gatehouse_approvals WHERE status = 'pending'"), 0, "nothing is left pending, and a refused body is no request")
        let statuses = try Store.open(path: harness.storePath).db.rows("SELECT status FROM gatehouse_approvals ORDER BY id").compactMap { $0["status"].string }
        XCTAssertEqual(statuses, ["denied", "expired", "failed"])
    }

    func testARequestLeftRunningByAStoppedProcessIsSettledByWhatTheAuditLogShows() throws {
        let approvals = ApprovalStore(store: try Store.open(path: harness.storePath))
        let start = harness.clock.now
        func claimed() throws -> Approval {
            let request = try approvals.request(.policySet, method: "POST", path: "/api/policy", query: nil, body: "{}", detail: nil,
                                                requester: "root", actor: Actor("console:root"), now: start)
            return try approvals.claim(request.id, approver: "console:ada", actor: Actor("console:ada"), now: start)
        }
        // Claimed, then the process stopped: nothing ran.
        let lost = try claimed()
        XCTAssertEqual(try approvals.show(lost.id, now: start.adding(seconds: 60)).status, .running, "still running within the bound")
        // Claimed, and the action's own entry was written before the process stopped.
        let ran = try claimed()
        let store = try Store.open(path: harness.storePath)
        _ = try store.db.write {
            try store.audit.append(store.db, actor: ApprovalStore.actor(requestedBy: "root", approvedBy: Actor("console:ada"), approval: ran.id),
                                   action: "policy.set", subject: "linkSocial.allowDifferentEmails", at: start)
        }
        let later = start.adding(seconds: ApprovalStore.interruptedAfter.value + 1)
        let listed = try approvals.list(pendingOnly: false, now: later)
        XCTAssertEqual(listed.first { $0.id == lost.id }?.status, .failed)
        XCTAssertEqual(listed.first { $0.id == ran.id }?.status, .approved)
        let note = try XCTUnwrap(try approvals.show(lost.id, now: later).outcome?.objectValue?["interrupted"]?.stringValue)
        XCTAssertTrue(note.contains("nothing changed"), note)
        XCTAssertTrue(try approvals.show(ran.id, now: later).outcome?.objectValue?["interrupted"]?.stringValue?.contains("policy.set") == true)
        XCTAssertEqual(try count("SELECT count(*) FROM gatehouse_audit WHERE action = 'approval.interrupted'"), 2, "settled once each")
        XCTAssertEqual(harness.errorCode(try post("/api/approvals/\(lost.id)/approve", token: root)), "approval_closed")
    }

    func testHeldAndApprovedAlikeOnPostgresAndD1() throws {
        for engine in [EngineKind.postgres, .d1] {
            do { try start(engine) } catch is XCTSkip { continue }
            try require([.policySet])
            let id = try held(try post("/api/policy", ["key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-3", "for": "1h"], token: root))
            XCTAssertEqual(try policyValue(), false, "\(engine)")
            XCTAssertEqual(harness.errorCode(try post("/api/approvals/\(id)/approve", token: root)), "self_approval")
            let approved = try post("/api/approvals/\(id)/approve", token: ada)
            XCTAssertEqual(approved.status, 200, "\(engine): \(approved.bodyText)")
            XCTAssertEqual(try policyValue(), true, "\(engine)")
            XCTAssertTrue(try harness.auditText().contains("approved by console:ada (approval \(id))"), "\(engine)")
        }
    }
}
