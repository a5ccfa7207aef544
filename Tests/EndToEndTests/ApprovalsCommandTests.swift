import Foundation
import XCTest

/// `gatehouse approvals` as an operator on the host meets it: which actions need a second admin, the break-glass
/// bypass (run at once, audited "approval: bypassed (cli)", `health` warning for a day), and approving or denying a
/// request the console recorded.
final class ApprovalsCommandTests: InitialisedStoreTestCase {
    func approvalsCheck() throws -> [String: Any] {
        let result = try cli.run(["health", "--store", store, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
        return try XCTUnwrap((object["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "console.approvals" }, result.stdout)
    }

    /// A request as the console records it when an admin asks for a policy change that needs approval.
    func recordRequest(by requester: String, value: Bool) throws {
        let body = #"{"key":"linkSocial.allowDifferentEmails","value":\#(value),"reason":"SUP-11"}"#
        _ = try sqlite3(store, """
            INSERT INTO gatehouse_approvals (id, action, method, path, body, requested_by, requested_at, expires_at, status)
            VALUES ((SELECT coalesce(max(id), 0) + 1 FROM gatehouse_approvals), 'policy.set', 'POST', '/api/policy', '\(body)', '\(requester)',
                    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+1 day'), 'pending');
            """)
    }

    func policyValue() throws -> Bool? {
        let shown = try json(try run(["policy", "show", "--json"])) as? [String: Any]
        return (shown?["entries"] as? [[String: Any]])?.first { $0["key"] as? String == "linkSocial.allowDifferentEmails" }?["value"] as? Bool
    }

    func testRequireTheBypassOnTheHostAndItsHealthWarning() throws {
        XCTAssertEqual(try approvalsCheck()["status"] as? String, "ok")
        let unknown = try run(["approvals", "require", "merge.aply"], status: 1)
        XCTAssertTrue(unknown.stderr.contains(#""merge.aply" is not an action that can need approval"#), unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("merge.apply merge.undo user.delete policy.set gate.enable apple.key.revoke apple.key.activate admins"), unknown.stderr)
        try run(["approvals", "require", "none", "policy.set"], status: 2)
        try run(["approvals", "require"], status: 2)
        try run(["approvals", "require", "policy.set", "--expires-after", "45d"], status: 1)

        let set = try json(try run(["approvals", "require", "policy.set", "merge.apply", "admins", "--expires-after", "8h", "--json"])) as? [String: Any]
        XCTAssertEqual(set?["actions"] as? [String], ["merge.apply", "policy.set", "admins"])
        XCTAssertEqual(set?["expiresAfter"] as? Int, 8 * 3600)
        XCTAssertTrue((try approvalsCheck()["summary"] as? String)?.contains("3 action(s) need a second admin's approval; 0 request(s) waiting") ?? false)

        // On the host the change proceeds, says it bypassed the approval, and is audited so.
        let bypass = try run(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "SUP-10 outage", "--actor", "ops-alice"])
        XCTAssertTrue(bypass.stderr.contains("policy.set needs a second admin's approval in the console; run here, it was recorded as bypassed (approval: bypassed (cli))"), bypass.stderr)
        XCTAssertEqual(try policyValue(), true)
        let audit = try run(["audit", "list", "--action", "approval.bypassed", "--json"])
        XCTAssertTrue(audit.stdout.contains("bypassed (cli)") && audit.stdout.contains("ops-alice") && audit.stdout.contains("gatehouse policy set"), audit.stdout)
        let check = try approvalsCheck()
        XCTAssertEqual(check["status"] as? String, "warning")
        XCTAssertTrue((check["summary"] as? String)?.contains("policy.set ran from the CLI") ?? false, "\(check)")
        // A failed command bypasses nothing.
        try run(["policy", "set", "linkSocial.allowDifferentEmails", "maybe", "--reason", "x"], status: 1)
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_audit WHERE action = 'approval.bypassed';"), "1")

        try run(["approvals", "require", "none"])
        let quiet = try run(["policy", "set", "linkSocial.allowDifferentEmails", "false", "--reason", "SUP-10 over"])
        XCTAssertFalse(quiet.stderr.contains("bypassed"), quiet.stderr)
    }

    func testApproveAndDenyARequestTheConsoleRecorded() throws {
        try run(["approvals", "require", "policy.set"])
        try recordRequest(by: "alice", value: true)
        let listed = try json(try run(["approvals", "list", "--json"])) as? [[String: Any]]
        XCTAssertEqual(listed?.map { $0["requestedBy"] as? String }, ["alice"])
        let table = try run(["approvals"])
        XCTAssertTrue(table.stdout.contains("needs approval: policy.set") && table.stdout.contains("PENDING") && table.stdout.contains("POST /api/policy"), table.stdout)
        XCTAssertTrue(try run(["approvals", "show", "1"]).stdout.contains("requested by alice"))

        // Approved on the host: the change runs as alice asked, audited with both names.
        let approved = try run(["approvals", "approve", "1", "--actor", "ops-bob"])
        XCTAssertTrue(approved.stdout.contains("approval 1 approved: the action ran (HTTP 200)"), approved.all)
        XCTAssertEqual(try policyValue(), true)
        let audit = try run(["audit", "list", "--action", "policy.*"])
        XCTAssertTrue(audit.stdout.contains("console:alice, approved by ops-bob (approval 1)"), audit.stdout)
        let again = try run(["approvals", "approve", "1", "--actor", "ops-bob"], status: 1)
        XCTAssertTrue(again.stderr.contains("approval 1 is approved by ops-bob"), again.stderr)

        // Nobody approves their own request; a denial needs a reason and closes it.
        try recordRequest(by: "ops-bob", value: false)
        let own = try run(["approvals", "approve", "2", "--actor", "ops-bob"], status: 1)
        XCTAssertTrue(own.stderr.contains("ops-bob asked for approval 2: another admin must approve it"), own.stderr)
        try run(["approvals", "deny", "2"], status: 2)
        let denied = try run(["approvals", "deny", "2", "--reason", "not during the freeze", "--actor", "ops-carol"])
        XCTAssertTrue(denied.stdout.contains("approval 2 denied: not during the freeze"), denied.stdout)
        XCTAssertEqual(try policyValue(), true)
        let all = try json(try run(["approvals", "list", "--all", "--json"])) as? [[String: Any]]
        XCTAssertEqual(all?.map { $0["status"] as? String }, ["denied", "approved"])

        for bad in ["abc", "0", "-3", "99999999999999999999999"] { try run(["approvals", "approve", bad], status: 2) }
        try run(["approvals", "approve", "77"], status: 1)
    }
}
