import Foundation
import XCTest

/// `users show` checks each account's issuer against the one Better Auth 1.7.1 writes for its provider.
final class UsersShowIssuerTests: InitialisedStoreTestCase {
    func testAnIssuerBetterAuthWouldNotFindIsPointedOut() throws {
        let user = "U1issuerAAAAAAAAAAAAAAAAAAAAAAAA", at = "2026-01-01T00:00:00.000Z"
        _ = try sqlite3(store, """
            INSERT INTO "user" (id, name, email, emailVerified, createdAt, updatedAt) VALUES ('\(user)', 'Ana', 'ana@example.com', 1, '\(at)', '\(at)');
            INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES ('A1', 'local:github', '4242', 'github', '\(user)', '\(at)', '\(at)');
            INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES ('A2', 'https://accounts.google.com', '1048', 'google', '\(user)', '\(at)', '\(at)');
            """)
        let shown = try run(["users", "show", user]).stdout
        XCTAssertTrue(shown.contains("id A1, issuer local:github (Better Auth 1.7.1 writes local:oauth:github for github: it will not find this account by (issuer, accountId))"), shown)
        XCTAssertTrue(shown.contains("id A2, issuer https://accounts.google.com\n"), shown)
        let policy = try run(["policy", "show"]).stdout
        XCTAssertTrue(policy.contains("linkSocial.allowDifferentEmails applies to POST /link-social, GET /callback/:providerId, POST /callback/:providerId"), policy)
    }
}
