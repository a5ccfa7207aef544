@testable import Console
import Foundation
import Gatehouse
import HTTPTestSupport
import TestEngines
import XCTest

/// The provider settings changed in the console (`PUT /api/providers/apple`, `PUT /api/providers/google`) over a real
/// socket: validated as `providers set` validates them, audited, admin only, and hostile bodies refused.
final class ConsoleProviderSettingsTests: XCTestCase {
    var harness: ConsoleHarness!
    var admin: String!
    var viewer: String!

    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 5)
        admin = try harness.tokens("root").access
        viewer = try harness.tokens("vera").access
    }
    override func tearDown() { harness = nil }

    func put(_ path: String, _ object: [String: Any], token: String? = nil) throws -> RawResponse {
        try harness.request("PUT", path, token: token ?? admin, body: try harness.body(object))
    }

    func report() throws -> [String: Any] {
        let answer = try harness.request("GET", "/api/providers", token: viewer)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
    }

    func testAnAdminSetsAppleAndGoogleAndEachChangeIsAudited() throws {
        let apple = try put("/api/providers/apple", ["teamId": "TEAM123456", "servicesId": "com.example.web", "bundleId": "com.example.app",
                                                      "audience": ["com.example.app", "com.example.web"]])
        XCTAssertEqual(apple.status, 200, apple.bodyText)
        let settings = (try report()["apple"] as? [String: Any])?["settings"] as? [String: Any]
        XCTAssertEqual(settings?["teamID"] as? String, "TEAM123456")
        XCTAssertEqual(settings?["bundleID"] as? String, "com.example.app")
        XCTAssertEqual(settings?["audience"] as? [String], ["com.example.app", "com.example.web"])
        // Only what is given changes; "" clears an id.
        XCTAssertEqual(try put("/api/providers/apple", ["servicesId": ""]).status, 200)
        let after = (try report()["apple"] as? [String: Any])?["settings"] as? [String: Any]
        XCTAssertNil(after?["servicesID"] as? String)
        XCTAssertEqual(after?["teamID"] as? String, "TEAM123456")

        XCTAssertEqual(try put("/api/providers/google", ["clientIds": ["web": "1234-web.apps.googleusercontent.com", "ios": "1234-ios.apps.googleusercontent.com"]]).status, 200)
        XCTAssertEqual(try put("/api/providers/google", ["clientIds": ["ios": ""]]).status, 200)
        let google = (try report()["google"] as? [String: Any])?["settings"] as? [String: Any]
        XCTAssertEqual(google?["clientIDs"] as? [String: String], ["web": "1234-web.apps.googleusercontent.com"])

        let store = try Store.open(path: harness.storePath)
        let entries = try store.audit.entries(store.db, .init(action: "providers.set"))
        XCTAssertEqual(entries.count, 4)
        XCTAssertTrue(entries.allSatisfy { $0.actor.hasPrefix("console:") }, "\(entries.map(\.actor))")
    }

    func testInvalidValuesAreRefusedAsTheCLIRefusesThemAndChangeNothing() throws {
        for (path, body, words) in [
            ("/api/providers/apple", ["teamId": "team-1"] as [String: Any], "Team ID"),
            ("/api/providers/apple", ["bundleId": "com example app"], "bundle id"),
            ("/api/providers/apple", ["audience": ["ok.id", "bad id"]], "audience"),
            ("/api/providers/apple", [:], "nothing to set"),
            ("/api/providers/apple", ["audience": (0..<40).map { "id\($0)" }], "at most 32"),
            ("/api/providers/google", ["clientIds": ["android": "x"]], "unknown platform"),
            ("/api/providers/google", ["clientIds": [:] as [String: String]], "nothing to set"),
            ("/api/providers/google", ["clientIds": ["web": "id\u{7}bell"]], "not a valid"),
        ] {
            let answer = try put(path, body)
            XCTAssertEqual(answer.status, 400, "\(body): \(answer.bodyText)")
            XCTAssertTrue(answer.bodyText.contains(words), "\(body): \(answer.bodyText)")
        }
        let notJSON = try harness.request("PUT", "/api/providers/apple", token: admin, body: "teamId=X")
        XCTAssertEqual(notJSON.status, 400, notJSON.bodyText)
        let store = try Store.open(path: harness.storePath)
        XCTAssertEqual(try store.audit.entries(store.db, .init(action: "providers.set")).count, 0, "nothing was changed")
    }

    func testAViewerCannotChangeThem() throws {
        let answer = try put("/api/providers/apple", ["teamId": "TEAM123456"], token: viewer)
        XCTAssertEqual(answer.status, 403, answer.bodyText)
        XCTAssertEqual(try put("/api/providers/google", ["clientIds": ["web": "x.apps.googleusercontent.com"]], token: viewer).status, 403)
    }
}
