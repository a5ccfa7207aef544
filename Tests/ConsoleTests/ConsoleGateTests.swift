@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The gate API over a real socket: the board, declaring requirements, enabling and disabling with
/// Guideline 4.8 refusals in the service's words, history and export; roles; hostile input.
final class ConsoleGateTests: XCTestCase {
    var harness: ConsoleHarness!
    var admin: String!
    var viewer: String!

    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 10)
        admin = try harness.tokens("root").access
        viewer = try harness.tokens("vera").access
    }
    override func tearDown() { harness = nil }

    /// The gate routes and their minimum roles.
    static let routes: [(method: String, path: String, role: AdminRole)] = [
        ("GET", "/api/gates", .viewer),
        ("POST", "/api/gates/requirements", .admin),
        ("POST", "/api/gates/enable", .admin),
        ("POST", "/api/gates/disable", .admin),
        ("GET", "/api/gates/history", .viewer),
        ("GET", "/api/gates/export", .viewer),
    ]

    func post(_ path: String, _ object: [String: Any], token: String? = nil) throws -> RawResponse {
        try harness.request("POST", path, token: token ?? admin, body: try harness.body(object))
    }

    func get(_ path: String) throws -> [String: Any] {
        let response = try harness.request("GET", path, token: viewer)
        XCTAssertEqual(response.status, 200, response.bodyText)
        return try harness.json(response)
    }

    func gate(_ board: [String: Any], _ provider: String, _ platform: String) -> [String: Any]? {
        (board["gates"] as? [[String: Any]])?.first { $0["provider"] as? String == provider && $0["platform"] as? String == platform }
    }

    /// A Google client id for ios, so google/ios is ready (its only requirement is derived from it).
    func configureGoogleOnIOS() throws {
        let store = try Store.open(path: harness.storePath)
        try ProviderConfiguration(store: store).setGoogle([.ios: "1-ios.apps.googleusercontent.com"], actor: Actor("tester"), now: harness.clock.now)
    }

    func testTheBoardForAViewer() throws {
        let answer = try get("/api/gates")
        let board = try XCTUnwrap(answer["board"] as? [String: Any])
        XCTAssertEqual((board["gates"] as? [Any])?.count, 6)
        XCTAssertEqual(gate(board, "apple", "ios")?["state"] as? String, "blocked")
        XCTAssertTrue((gate(board, "apple", "ios")?["unmet"] as? [String])?.contains("membership") ?? false)
        let verdict = try XCTUnwrap(board["guideline48"] as? [String: Any])
        XCTAssertEqual(verdict["breached"] as? Bool, false)
        XCTAssertTrue((answer["rule"] as? String)?.contains("Guideline 4.8") ?? false)
        let requirements = try XCTUnwrap(answer["requirements"] as? [[String: Any]])
        XCTAssertEqual(Set(requirements.compactMap { $0["requirement"] as? String }), ["membership", "app_id", "services_id", "return_urls"],
                       "only operator requirements are offered")
        let fixes = (gate(board, "apple", "ios")?["requirements"] as? [[String: Any]])?.compactMap { $0["fix"] as? String } ?? []
        XCTAssertTrue(fixes.contains { $0.contains("the Gates page's requirement form (apple membership met") }, "each unmet requirement says how to meet it, in the console's words: \(fixes)")
        XCTAssertFalse(fixes.contains { $0.contains("gatehouse") || $0.contains("--") }, "no command line on a page: \(fixes)")
        XCTAssertNotNil(try get("/api/gates/export")["offer"] as? [String: Any])
        let history = try harness.request("GET", "/api/gates/history", token: viewer)
        XCTAssertEqual(history.status, 200)
        XCTAssertEqual(history.bodyText, "[]")
    }

    func testDeclareEnableAndTheGuideline48Refusal() throws {
        try configureGoogleOnIOS()
        let declared = try post("/api/gates/requirements", ["provider": "apple", "requirement": "membership", "met": true,
                                                            "evidence": "order W123456, team TEAMID1234", "expires": "2027-09-01"])
        XCTAssertEqual(declared.status, 200, declared.bodyText)
        let result = try harness.json(declared)
        XCTAssertEqual(result["platform"] as? String, "all")
        XCTAssertEqual(result["met"] as? Bool, true)
        let membership = try XCTUnwrap((try get("/api/gates")["board"] as? [String: Any])?["membership"] as? [String: Any])
        XCTAssertTrue((membership["message"] as? String)?.contains("2027-09-01") ?? false)

        // Google on ios is ready, Apple on ios is blocked: Guideline 4.8 refuses, in the service's words.
        let refused = try post("/api/gates/enable", ["provider": "google", "platform": "ios", "reason": "iOS 2.0"])
        XCTAssertEqual(refused.status, 409, refused.bodyText)
        XCTAssertEqual(harness.errorCode(refused), "guideline_4_8")
        let error = try XCTUnwrap(try harness.json(refused)["error"] as? [String: Any])
        XCTAssertTrue((error["message"] as? String)?.contains("refusing to enable google on ios: apple is blocked on ios") ?? false, refused.bodyText)
        XCTAssertTrue((error["message"] as? String)?.contains(Guideline48.rule) ?? false)
        XCTAssertTrue((error["fix"] as? String)?.contains("make Apple live on ios first") ?? false)

        // A blocked gate is refused as a conflict; Google on desktop has no client id.
        let blocked = try post("/api/gates/enable", ["provider": "google", "platform": "desktop", "reason": "desktop 1.0"])
        XCTAssertEqual(blocked.status, 409, blocked.bodyText)
        XCTAssertTrue(blocked.bodyText.contains("refusing to enable google on desktop"))

        // Disabling a disabled gate changes nothing.
        let disabled = try post("/api/gates/disable", ["provider": "google", "platform": "ios", "reason": "not yet"])
        XCTAssertEqual(disabled.status, 200, disabled.bodyText)
        XCTAssertEqual(try harness.json(disabled)["changed"] as? Bool, false)

        let history = try harness.request("GET", "/api/gates/history?limit=10", token: viewer)
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(history.body)) as? [[String: Any]])
        XCTAssertEqual(entries.count, 1, "refusals and no-ops leave no history")
        XCTAssertEqual(entries.first?["requirement"] as? String, "membership")
        XCTAssertEqual(entries.first?["actor"] as? String, "console:root")
        XCTAssertTrue(try harness.auditText().contains("gates.set"))
    }

    func testEnableThenDisableAReadyGate() throws {
        let store = try Store.open(path: harness.storePath)
        try ProviderConfiguration(store: store).setGoogle([.web: "1-web.apps.googleusercontent.com"], actor: Actor("tester"), now: harness.clock.now)
        let enabled = try post("/api/gates/enable", ["provider": "google", "platform": "web", "reason": "web launch"])
        XCTAssertEqual(enabled.status, 200, enabled.bodyText)
        XCTAssertEqual((try harness.json(enabled)["gate"] as? [String: Any])?["state"] as? String, "live")
        XCTAssertEqual((try get("/api/gates/export")["offer"] as? [String: Any])?["web"] as? [String], ["google"])
        let disabled = try post("/api/gates/disable", ["provider": "google", "platform": "web", "reason": "rollback"])
        XCTAssertEqual(disabled.status, 200, disabled.bodyText)
        XCTAssertEqual((try harness.json(disabled)["gate"] as? [String: Any])?["state"] as? String, "ready")
    }

    func testRolesAreEnforced() throws {
        var router = Router()
        APIRoutes.register(on: &router)
        let support = try harness.tokens("sam").access
        for route in Self.routes {
            XCTAssertTrue(router.table.contains("\(route.method) \(route.path) (\(route.role.rawValue))"), "\(route.method) \(route.path)")
            let body = route.method == "POST" ? "{}" : nil
            XCTAssertEqual(try harness.request(route.method, route.path, body: body).status, 401, "\(route.path) without a token")
            for token in [viewer!, support] where route.role == .admin {
                let refused = try harness.request(route.method, route.path, token: token, body: body)
                XCTAssertEqual(refused.status, 403, "\(route.method) \(route.path)")
                XCTAssertEqual(harness.errorCode(refused), "forbidden_role")
            }
        }
        let refused = try post("/api/gates/requirements", ["provider": "apple", "requirement": "app_id", "met": true, "evidence": "x"], token: support)
        XCTAssertEqual(refused.status, 403)
        XCTAssertEqual(try harness.request("GET", "/api/gates/history", token: viewer).bodyText, "[]", "nothing was declared")
    }

    func testHostileInput() throws {
        func refused(_ object: [String: Any], _ path: String = "/api/gates/requirements", _ status: Int = 400, code: String = "invalid",
                     file: StaticString = #filePath, line: UInt = #line) throws -> String {
            let response = try post(path, object)
            XCTAssertEqual(response.status, status, response.bodyText, file: file, line: line)
            XCTAssertEqual(harness.errorCode(response), code, response.bodyText, file: file, line: line)
            return response.bodyText
        }
        let base: [String: Any] = ["provider": "apple", "requirement": "app_id", "met": true, "evidence": "portal checked"]
        func with(_ changes: [String: Any]) -> [String: Any] { base.merging(changes) { $1 } }
        _ = try refused(with(["provider": "microsoft"]))
        _ = try refused(with(["requirement": "oauth_client"]))
        let derived = try refused(with(["requirement": "p8_key"]), code: "derived")
        XCTAssertTrue(derived.contains("cannot be set by hand"))
        _ = try refused(with(["platform": "android"]))
        _ = try refused(with(["platform": "web"]), code: "invalid")
        _ = try refused(with(["evidence": "   "]))
        let huge = try refused(with(["evidence": String(repeating: "e", count: 5000)]))
        XCTAssertFalse(huge.contains(String(repeating: "e", count: 100)), "the evidence is not echoed")
        _ = try refused(with(["evidence": "a\u{0}b"]))
        _ = try refused(["provider": "apple", "requirement": "membership", "met": true, "evidence": "x"])
        let past = try refused(["provider": "apple", "requirement": "membership", "met": true, "evidence": "x", "expires": "2020-01-01"])
        XCTAssertTrue(past.contains("in the past"))
        _ = try refused(["provider": "apple", "requirement": "membership", "met": true, "evidence": "x", "expires": "2027-02-30"])
        _ = try refused(["provider": "apple", "requirement": "membership", "met": true, "evidence": "x", "expires": "tomorrow'; DROP TABLE x"])
        _ = try refused(with(["met": "yes"]))
        _ = try refused(["provider": "apple"])
        _ = try refused(["provider": "apple", "platform": "ios", "reason": ""], "/api/gates/enable")
        _ = try refused(["provider": "apple", "platform": "moon", "reason": "r"], "/api/gates/enable")
        let form = try harness.request("POST", "/api/gates/enable", token: admin, body: "provider=apple", contentType: "text/plain")
        XCTAssertEqual(form.status, 415)
        XCTAssertEqual(try harness.request("POST", "/api/gates/enable", token: admin, body: "{\"provider\":").status, 400)
        XCTAssertEqual(try harness.request("GET", "/api/gates/history?limit=0", token: viewer).status, 400)

        // SQL metacharacters are kept as text.
        let sneaky = "'); DROP TABLE gatehouse_gates; -- \"x\""
        let accepted = try post("/api/gates/requirements", with(["evidence": sneaky]))
        XCTAssertEqual(accepted.status, 200, accepted.bodyText)
        let history = try harness.request("GET", "/api/gates/history", token: viewer)
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(history.body)) as? [[String: Any]])
        XCTAssertEqual(entries.first?["text"] as? String, sneaky)
        XCTAssertEqual(try get("/api/gates")["requirements"].map { _ in true }, true, "the board still answers")
    }
}
