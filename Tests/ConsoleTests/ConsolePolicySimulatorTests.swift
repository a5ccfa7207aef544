@testable import Console
@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// `POST /api/policy/simulate` with the inputs Better Auth branches on: the flow, a missing email, provider options.
final class ConsolePolicySimulatorTests: XCTestCase {
    var harness: ConsoleHarness!
    var admin: String!

    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 10)
        admin = try harness.tokens("root").access
    }
    override func tearDown() { harness = nil }

    func simulate(_ body: [String: Any]) throws -> (Int, [String: Any]) {
        let response = try harness.request("POST", "/api/policy/simulate", token: admin, body: try harness.body(body))
        return (response.status, response.status == 200 ? try harness.json(response) : ["body": response.bodyText])
    }

    func testBothFlowsAndProviderOptions() throws {
        let store = try Store.open(path: harness.storePath)
        let user = try XCTUnwrap(try store.db.scalar("SELECT id FROM \(store.schema.user.sql) LIMIT 1").string)
        let (status, redirect) = try simulate(["flow": "link", "via": "redirect", "user": user, "provider": "google",
                                               "email": "someone-else@gmail.com", "emailVerified": true])
        XCTAssertEqual(status, 200)
        XCTAssertEqual(redirect["errorCode"] as? String, "email_does_not_match")
        XCTAssertEqual(redirect["httpStatus"] as? Int, 302)
        XCTAssertEqual(redirect["via"] as? String, "redirect")
        XCTAssertTrue((redirect["source"] as? String ?? "").contains("api/routes/callback.ts:297"))
        let (_, noEmail) = try simulate(["flow": "signin", "provider": "apple", "emailVerified": true])
        XCTAssertEqual(noEmail["errorCode"] as? String, "USER_EMAIL_NOT_FOUND")
        let (_, github) = try simulate(["flow": "signin", "provider": "github", "email": "a@b.c"])
        XCTAssertEqual(github["errorCode"] as? String, "ID_TOKEN_NOT_SUPPORTED")
        XCTAssertEqual(github["httpStatus"] as? Int, 404)
        let (_, gated) = try simulate(["flow": "signin", "provider": "google", "email": "nobody-yet@gmail.com",
                                       "providerOptions": ["requireEmailVerification"]])
        XCTAssertEqual(gated["errorCode"] as? String, "EMAIL_NOT_VERIFIED")
        XCTAssertEqual(gated["httpStatus"] as? Int, 403)
        let (bad, _) = try simulate(["flow": "signin", "provider": "google", "email": "a@b.c", "providerOptions": ["nope"]])
        XCTAssertEqual(bad, 400)
        let (badVia, _) = try simulate(["flow": "signin", "via": "popup", "provider": "google", "email": "a@b.c"])
        XCTAssertEqual(badVia, 400)
    }

    /// The request takes the app's accountLinking.updateUserInfoOnLink and provider ids as the app spells them.
    func testUpdateUserInfoOnLinkAndProviderIDsAsSpelt() throws {
        let store = try Store.open(path: harness.storePath)
        let email = try XCTUnwrap(try store.db.scalar("SELECT email FROM \(store.schema.user.sql) ORDER BY id LIMIT 1").string)
        try store.db.execute("UPDATE \(store.schema.user.sql) SET emailVerified = 0 WHERE email = ?", [email])
        var body: [String: Any] = ["flow": "signin", "provider": "google", "email": email, "emailVerified": true,
                                   "providerOptions": ["requireEmailVerification"], "with": ["accountLinking.requireLocalEmailVerified": false]]
        let (_, stale) = try simulate(body)
        XCTAssertEqual(stale["errorCode"] as? String, "EMAIL_NOT_VERIFIED", "\(stale)")
        body["updateUserInfoOnLink"] = true
        let (status, fresh) = try simulate(body)
        XCTAssertEqual(status, 200, "\(fresh)")
        XCTAssertEqual(fresh["outcome"] as? String, "linked and signed in", "\(fresh)")

        let (trustedStatus, trusted) = try simulate(["flow": "signin", "via": "redirect", "provider": "AcmeSSO", "email": email,
                                                     "with": ["accountLinking.trustedProviders": ["AcmeSSO"], "accountLinking.requireLocalEmailVerified": false]])
        XCTAssertEqual(trustedStatus, 200, "\(trusted)")
        XCTAssertEqual(trusted["outcome"] as? String, "linked and signed in", "\(trusted)")
        let (badID, _) = try simulate(["flow": "signin", "provider": "goo\u{1B}gle", "email": "a@b.c"])
        XCTAssertEqual(badID, 400)
    }

    func testTheExportSaysWhichRequestsTheSwitchReaches() throws {
        let store = try Store.open(path: harness.storePath)
        let export = try PolicyStore(store: store).export(now: .now())
        XCTAssertEqual(export.linkSocial.appliesTo, ["POST /link-social", "GET /callback/:providerId", "POST /callback/:providerId"])
        XCTAssertTrue(export.compactJSON.contains(#""appliesTo":["POST /link-social","GET /callback/:providerId","POST /callback/:providerId"]"#), export.compactJSON)
    }
}
