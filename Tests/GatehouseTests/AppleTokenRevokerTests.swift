@testable import D1Engine
import Foundation
@testable import Gatehouse
import HTTPClient
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// `AppleTokenRevoker` as the deletion work calls it: `init(store:baseURL:now:)` and `revoke(userID:dryRun:)`. Apple's
/// answers are tested end to end against Tests/Fixtures/apple_server.py (AppleRevokeTests); here, what needs no
/// network: the client id chosen per account, the token kind, no token, and an unknown user.
final class AppleTokenRevokerTests: XCTestCase {
    func testDryRunChoosesClientIDAndTokenPerAccountAndSendsNothing() throws {
        let scratch = try Scratch()
        let store = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester).0
        try ProviderConfiguration(store: store).setApple(AppleProviderChange(servicesID: "com.example.web", bundleID: "com.example.app"),
                                                         actor: tester, now: .now())
        // A native sign-in's id token is audienced to the bundle id: the access token goes back to that client.
        let nativeIDToken = "eyJhbGciOiJSUzI1NiJ9." + Base64URLText.encode(#"{"aud":"com.example.app","sub":"002.apple"}"#) + ".c2ln"
        let t = "2026-01-01T00:00:00.000Z"
        try store.db.write {
            try store.db.execute("INSERT INTO \"user\" (id, name, email, emailVerified, createdAt, updatedAt) VALUES ('u1', 'A', 'a@example.com', 1, ?, ?)", [t, t])
            for (id, sub, refresh, access, idToken) in [("acc1", "001.apple", "r1", nil, nil), ("acc2", "002.apple", nil, "a2", nativeIDToken),
                                                          ("acc3", "003.apple", nil, nil, nil)] as [(String, String, String?, String?, String?)] {
                try store.db.execute("""
                    INSERT INTO account (id, issuer, accountId, providerId, userId, refreshToken, accessToken, idToken, createdAt, updatedAt)
                    VALUES (?, 'https://appleid.apple.com', ?, 'apple', 'u1', ?, ?, ?, ?, ?)
                    """, [id, sub, refresh, access, idToken, t, t])
            }
        }
        let outcomes = try AppleTokenRevoker(store: store, baseURL: "http://127.0.0.1:1", now: .now()).revoke(userID: "u1", dryRun: true)
        XCTAssertEqual(outcomes.map(\.accountID), ["acc1", "acc2", "acc3"])
        XCTAssertEqual(outcomes.map(\.outcome), [.wouldRevoke, .wouldRevoke, .noToken])
        XCTAssertEqual(outcomes.map(\.clientID), ["com.example.web", "com.example.app", nil])
        XCTAssertEqual(outcomes.map(\.tokenTypeHint), ["refresh_token", "access_token", nil])
        XCTAssertTrue(outcomes[2].message.contains("TN3194"))
        XCTAssertTrue(outcomes.allSatisfy(\.succeeded))
        XCTAssertFalse(try JSONEncoder().encode(outcomes).isEmpty, "Codable")
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_audit WHERE action = 'apple.token.revoke'").int64, 0, "a dry run changes nothing")

        XCTAssertThrowsError(try AppleTokenRevoker(store: store, baseURL: nil, now: .now()).revoke(userID: "nobody", dryRun: true)) { error in
            XCTAssertEqual((error as? GatehouseError)?.code, .notFound)
        }
    }

    /// The client secret, the user's token and Apple's key set travel only over https, or plain http to this machine
    /// (the tests' server): any other base is refused before a connection is tried, with the variable named and no
    /// credentials shown. Both `/auth/revoke` and `/auth/keys` go through `AppleHTTPClient`.
    func testTheAppleBaseURLIsHTTPSOrLoopbackOnly() {
        let started = Date()
        for (base, words) in [("http://192.0.2.2:9", "not this machine"), ("http://appleid.apple.com", "not this machine"),
                              ("http://[::ffff:192.0.2.2]:9", "not this machine"), ("http://localhost:1@192.0.2.2:9", "user name or password"),
                              ("https://user:hunter2@appleid.apple.com", "user name or password")] {
            let client = AppleHTTPClient(baseURL: base, timeout: 5)
            for call in [{ _ = try client.get("/auth/keys") }, { _ = try client.post("/auth/revoke", form: [("token", "t")]) }] {
                XCTAssertThrowsError(try call(), base) { error in
                    guard let failure = error as? AppleHTTPClient.Failure, case .unreachable(let why) = failure else { return XCTFail("\(base): \(error)") }
                    XCTAssertTrue(why.contains(AppleHTTPClient.baseURLVariable) && why.contains(words), why)
                    XCTAssertFalse(why.contains("hunter2") || why.contains("localhost:1@"), why)
                }
            }
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "refused before any connection")
    }
}

/// Unpadded base64url of UTF-8 text, for hand-made tokens.
enum Base64URLText {
    static func encode(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
