import Foundation
import XCTest
@testable import Gatehouse

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
}

/// Unpadded base64url of UTF-8 text, for hand-made tokens.
enum Base64URLText {
    static func encode(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
