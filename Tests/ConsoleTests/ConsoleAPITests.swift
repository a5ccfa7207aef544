@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// Request bodies and the policy and audit APIs, over a real socket.
final class ConsoleAPITests: XCTestCase {
    var harness: ConsoleHarness!
    var admin: String!
    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 10)
        admin = try harness.tokens("root").access
    }
    override func tearDown() { harness = nil }

    func testBodiesMustBeJSON() throws {
        let login = #"{"username":"root","password":"correct horse battery staple"}"#
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonp"] {
            let response = try harness.request("POST", "/api/auth/login", body: login, contentType: type)
            XCTAssertEqual(response.status, 415, type)
            XCTAssertEqual(harness.errorCode(response), "unsupported_media_type")
        }
        XCTAssertEqual(try harness.request("POST", "/api/auth/login", body: login, contentType: nil).status, 415)
        XCTAssertEqual(try harness.request("POST", "/api/auth/login", body: login, contentType: "application/json; charset=utf-8").status, 200)
        // An authenticated route checks the token first, then the body.
        XCTAssertEqual(try harness.request("POST", "/api/policy", token: admin, body: "key=x", contentType: "text/plain").status, 415)
    }

    func testMalformedJSONIs400AndNamesTheFieldNotTheValue() throws {
        for body in ["{", "[]", "null", #"{"username": 5, "password": "hunter2-very-secret"}"#, "\u{0}"] {
            let response = try harness.request("POST", "/api/auth/login", body: body)
            XCTAssertEqual(response.status, 400, body)
            XCTAssertFalse(response.bodyText.contains("hunter2"), response.bodyText)
        }
        let missing = try harness.request("POST", "/api/auth/login", body: #"{"username":"root"}"#)
        XCTAssertEqual(missing.status, 400)
        XCTAssertTrue(missing.bodyText.contains(#"lacks \"password\""#), missing.bodyText)
    }

    func testOversizedBodiesAre413() throws {
        let big = "{\"username\":\"" + String(repeating: "a", count: 1 << 20) + "\",\"password\":\"x\"}"
        // The body cap is the HTTP server's own: over the socket.
        XCTAssertEqual(try harness.request("POST", "/api/auth/login", body: big, over: .socket).status, 413)
    }

    func testPolicySetHistoryAndErrors() throws {
        let set = try harness.request("POST", "/api/policy", token: admin, body: try harness.body([
            "key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-7 window", "for": "2h", "ifVersion": 0,
        ]))
        XCTAssertEqual(set.status, 200, set.bodyText)
        let result = try harness.json(set)
        XCTAssertEqual(result["version"] as? Int, 1)
        XCTAssertEqual(result["revertsAt"] as? String, harness.clock.now.adding(seconds: 7200).iso8601)
        let history = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try harness.request("GET", "/api/policy/history", token: admin).body)) as? [[String: Any]])
        XCTAssertEqual(history.first?["actor"] as? String, "console:root")
        XCTAssertEqual(history.first?["reason"] as? String, "SUP-7 window")
        // Stale version, takeover risk, bad key, bad value, bad duration: each refused with its own code.
        let stale = try harness.request("POST", "/api/policy", token: admin, body: try harness.body(["key": "linkSocial.allowDifferentEmails", "value": false, "reason": "x", "ifVersion": 0]))
        XCTAssertEqual(stale.status, 409)
        let risky = try harness.request("POST", "/api/policy", token: admin, body: try harness.body(["key": "autoLink.allowDifferentEmails", "value": true, "reason": "x"]))
        XCTAssertEqual(risky.status, 422)
        XCTAssertEqual(harness.errorCode(risky), "takeover_risk")
        for body in [["key": "nope", "value": true, "reason": "x"], ["key": "linkSocial.allowDifferentEmails", "value": "maybe", "reason": "x"],
                     ["key": "linkSocial.allowDifferentEmails", "value": true, "reason": " "],
                     ["key": "linkSocial.allowDifferentEmails", "value": true, "reason": "x", "for": "forever"]] as [[String: Any]] {
            let response = try harness.request("POST", "/api/policy", token: admin, body: try harness.body(body))
            XCTAssertEqual(response.status, 400, "\(body): \(response.bodyText)")
        }
        let providers = try harness.request("POST", "/api/policy", token: admin, body: try harness.body(["key": "accountLinking.trustedProviders", "value": ["google"], "reason": "apple not live"]))
        XCTAssertEqual(providers.status, 200, providers.bodyText)
        let snapshot = try harness.json(try harness.request("GET", "/api/policy", token: admin))
        XCTAssertEqual(snapshot["version"] as? Int, 2)
    }

    func testSimulatorAnswersWithBetterAuthsCodes() throws {
        let store = try Store.open(path: harness.storePath)
        let user = try XCTUnwrap(try store.db.scalar("SELECT id FROM \(store.schema.user.sql) LIMIT 1").string)
        let link = try harness.request("POST", "/api/policy/simulate", token: admin, body: try harness.body([
            "flow": "link", "user": user, "provider": "google", "email": "someone-else@gmail.com", "emailVerified": true,
            "with": ["linkSocial.allowDifferentEmails": false],
        ]))
        XCTAssertEqual(link.status, 200, link.bodyText)
        XCTAssertEqual(try harness.json(link)["errorCode"] as? String, "LINKING_DIFFERENT_EMAILS_NOT_ALLOWED")
        let noUser = try harness.request("POST", "/api/policy/simulate", token: admin, body: try harness.body(["flow": "link", "provider": "google", "email": "a@b.c"]))
        XCTAssertEqual(noUser.status, 400)
        let badFlow = try harness.request("POST", "/api/policy/simulate", token: admin, body: try harness.body(["flow": "x", "provider": "google", "email": "a@b.c"]))
        XCTAssertEqual(badFlow.status, 400)
    }

    func testAuditFiltersAndVerify() throws {
        let entries = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try harness.request("GET", "/api/audit?action=console.*&limit=5", token: admin).body)) as? [[String: Any]])
        XCTAssertEqual(entries.map { $0["action"] as? String }, ["console.login"])
        XCTAssertEqual(entries.first?["actor"] as? String, "console:root")
        let byActor = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try harness.request("GET", "/api/audit?actor=tester", token: admin).body)) as? [[String: Any]])
        XCTAssertEqual(Set(byActor.compactMap { $0["action"] as? String }), ["admin.add", "store.init"])
        XCTAssertEqual(try harness.request("GET", "/api/audit?since=yesterday", token: admin).status, 400)
        XCTAssertEqual(try harness.request("GET", "/api/audit?limit=0", token: admin).status, 400)
        XCTAssertEqual(try harness.request("GET", "/api/audit?since=24h", token: admin).status, 200)
        let verify = try harness.json(try harness.request("GET", "/api/audit/verify", token: admin))
        XCTAssertEqual((verify["problems"] as? [Any])?.count, 0)
    }

    func testErrorBodiesNeverCarryTokensOrPasswords() throws {
        let tokens = try harness.tokens("root")
        var bodies: [String] = []
        bodies.append(try harness.refresh(tokens.refresh).bodyText)
        bodies.append(try harness.refresh(tokens.refresh).bodyText)
        bodies.append(try harness.request("GET", "/api/auth/me", token: tokens.access).bodyText)
        bodies.append(try harness.login("root", "s3cret-typo-password").bodyText)
        for body in bodies {
            for secret in [tokens.access, tokens.refresh, "s3cret-typo-password", ConsoleHarness.password] {
                XCTAssertFalse(body.contains(secret), body)
            }
        }
    }
}
