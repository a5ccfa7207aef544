@testable import Console
import Foundation
import Gatehouse
import HTTPTestSupport
import Storage
import TestEngines
import XCTest

/// The console's admins over a real socket: the list (no secret in it), disable, enable and remove for an admin only
/// (with step-up), never of oneself, never the last admin; hostile usernames.
final class ConsoleAdminRoutesTests: XCTestCase {
    var harness: ConsoleHarness!
    var root: String!

    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 5)
        root = try harness.tokens("root").access
    }
    override func tearDown() { harness = nil }

    func post(_ path: String, token: String? = nil) throws -> RawResponse {
        try harness.request("POST", path, token: token ?? root, body: "{}")
    }

    func testListDisableEnableRemove() throws {
        let list = try harness.request("GET", "/api/admins", token: root)
        XCTAssertEqual(list.status, 200, list.bodyText)
        let admins = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.body)) as? [[String: Any]])
        XCTAssertEqual(Set(admins.compactMap { $0["username"] as? String }), ["root", "sam", "vera"])
        XCTAssertEqual(admins.first { $0["username"] as? String == "sam" }?["role"] as? String, "support")
        XCTAssertFalse(list.bodyText.contains("pbkdf2") || list.bodyText.contains("password"), "no password hash")
        // Support staff and viewers neither read nor change the admins.
        let sam = try harness.tokens("sam").access
        XCTAssertEqual(try harness.request("GET", "/api/admins", token: sam).status, 403)
        XCTAssertEqual(try post("/api/admins/vera/disable", token: sam).status, 403)

        let vera = try harness.tokens("vera").access
        let disabled = try post("/api/admins/vera/disable")
        XCTAssertEqual(disabled.status, 200, disabled.bodyText)
        XCTAssertEqual(try harness.json(disabled)["disabled"] as? Bool, true)
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: vera).status, 401, "her sessions ended")
        XCTAssertEqual(try harness.login("vera").status, 401)
        XCTAssertEqual(try post("/api/admins/vera/enable").status, 200)
        XCTAssertEqual(try harness.login("vera").status, 200)
        XCTAssertEqual(try post("/api/admins/sam/remove").status, 204)
        XCTAssertEqual(try harness.login("sam").status, 401)
        XCTAssertTrue(try harness.auditText().contains("console:root admin.remove sam"))
    }

    func testNeverOneselfNorTheLastAdminAndHostileNames() throws {
        for verb in ["disable", "remove"] {
            let own = try post("/api/admins/root/\(verb)")
            XCTAssertEqual(own.status, 409, own.bodyText)
            XCTAssertTrue(own.bodyText.contains("you cannot \(verb) yourself from the console"), own.bodyText)
        }
        XCTAssertEqual(try harness.login("root").status, 200)
        XCTAssertEqual(try post("/api/admins/nobody/disable").status, 404)
        for bad in ["%00", "a%20b", String(repeating: "x", count: 300), "..", "%E2%80%AE"] {
            let response = try post("/api/admins/\(bad)/disable")
            XCTAssertTrue([400, 404].contains(response.status), "\(bad): \(response.status) \(response.bodyText)")
        }
    }
}
