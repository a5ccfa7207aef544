@testable import Console
import Foundation
@testable import Gatehouse
import HTTPTestSupport
import XCTest

/// `GET /api/security/events`, `GET /api/security/refusals` and `POST /api/security/events/google/:id/undo`: Apple's
/// and Google's events in one list for viewers, filtered by provider, event type and date (a bad filter answered
/// 400), the refused tokens' counters apart, the user's page showing the flag a Google event set, and the undo for
/// admins only. Events end to end: GoogleRISCTests.
final class ConsoleSecurityEventsTests: XCTestCase {
    func testTheInboxListsBothProvidersFiltersAndUndoes() throws {
        let harness = try ConsoleHarness(users: 20)
        let store = try Store.open(path: harness.storePath)
        let google = try XCTUnwrap(try store.db.row(#"SELECT "accountId" AS sub, "userId" AS user_id FROM "account" WHERE "providerId" = 'google' ORDER BY "id" LIMIT 1"#))
        let sub = try XCTUnwrap(google.optionalString("sub")), userID = try XCTUnwrap(google.optionalString("user_id"))
        let inbox = GoogleSecurityInbox(store: store, keys: GoogleRISCKeys(baseURL: "http://127.0.0.1:1"))
        func event(_ kind: GoogleSecurityEvent.Kind, _ jti: String) -> GoogleSecurityEvent {
            GoogleSecurityEvent(kind: kind, jti: jti, issuedAt: nil, sub: sub, token: nil, reason: nil, state: nil)
        }
        let revoked = try XCTUnwrap(try inbox.record(event(.sessionsRevoked, "j-1"), fingerprint: "f1", transport: .ingest, now: .now()).id)
        let disabled = try XCTUnwrap(try inbox.record(event(.accountDisabled, "j-2"), fingerprint: "f2", transport: .ingest, now: .now()).id)
        try store.db.write {
            try store.db.execute("""
                INSERT INTO gatehouse_apple_notifications (received_at, transport, outcome, jti, sub, type, event_time, aud, action, token_sha256)
                VALUES ('2026-12-01T00:00:00.000Z', 'listener', 'unknown_sub', 'a1', '001.apple', 'consent-revoked', '2026-12-01T00:00:00.000Z',
                        'com.example.web', 'no Apple account has this sub; nothing changed', 'aa')
                """)
        }
        let viewer = try harness.tokens("vera").access
        func list(_ query: String, file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
            let answer = try harness.request("GET", "/api/security/events\(query)", token: viewer)
            XCTAssertEqual(answer.status, 200, answer.bodyText, file: file, line: line)
            return (try JSONSerialization.jsonObject(with: Data(answer.body)) as? [[String: Any]]) ?? []
        }
        let all = try list("")
        XCTAssertEqual(all.map { "\($0["provider"] ?? ""):\($0["event"] ?? "")" },
                       ["google:account-disabled", "google:sessions-revoked", "apple:consent-revoked"], "newest first, both providers")
        XCTAssertEqual(all.first?["userId"] as? String, userID)
        let email = try store.db.scalar(#"SELECT "email" FROM "user" WHERE "id" = ?"#, [userID]).string
        XCTAssertEqual(all.first?["userEmail"] as? String, try XCTUnwrap(email), "the user named by email, as the page shows them")
        XCTAssertNil(all.last?["userEmail"], "an event that named no user has no email")
        XCTAssertEqual(all.first?["undoable"] as? Bool, true)
        XCTAssertEqual(all[1]["undoable"] as? Bool, false, "ended sessions cannot be given back")
        XCTAssertEqual(try list("?provider=apple").map { $0["event"] as? String }, ["consent-revoked"])
        XCTAssertEqual(try list("?provider=google").count, 2)
        XCTAssertEqual(try list("?event=account-disabled").map { $0["id"] as? Int }, [Int(disabled)])
        XCTAssertEqual(try list("?event=consent-revoked&provider=google").count, 0)
        XCTAssertEqual(try list("?since=2026-12-02").count, 2, "a date: Apple's of 1 December is left out")
        XCTAssertEqual(try list("?since=2099-01-01").count, 0)
        for bad in ["?provider=microsoft", "?since=yesterday", "?event=%3Cscript%3E"] {
            let answer = try harness.request("GET", "/api/security/events\(bad)", token: viewer)
            XCTAssertEqual(answer.status, 400, "\(bad): \(answer.bodyText)")
        }
        XCTAssertEqual(try harness.request("GET", "/api/security/events").status, 401)

        // Refused tokens are no events: their counters are listed apart, both providers', the latest first.
        _ = try inbox.receive(token: "not-a-token", transport: .listener, source: "192.0.2.7", now: .now())
        try store.db.write {
            try store.db.execute("""
                INSERT INTO gatehouse_apple_refusals (reason, source, transport, count, first_seen, last_seen, last_detail)
                VALUES ('signature', 'listener 198.51.100.1', 'listener', 4, '2026-11-30T00:00:00.000Z', '2026-12-01T00:00:00.000Z', 'forged')
                """)
        }
        let refused = try harness.request("GET", "/api/security/refusals", token: viewer)
        XCTAssertEqual(refused.status, 200, refused.bodyText)
        let counters = (try JSONSerialization.jsonObject(with: Data(refused.body)) as? [[String: Any]]) ?? []
        XCTAssertEqual(counters.map { "\($0["provider"] ?? ""):\($0["reason"] ?? ""):\($0["source"] ?? ""):\($0["count"] ?? "")" },
                       ["google:not_a_token:listener 192.0.2.7:1", "apple:signature:listener 198.51.100.1:4"], refused.bodyText)
        let googles = try harness.request("GET", "/api/security/refusals?provider=google", token: viewer)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(googles.body)) as? [[String: Any]])?.count, 1, googles.bodyText)
        XCTAssertEqual(try harness.request("GET", "/api/security/refusals?provider=x", token: viewer).status, 400)
        XCTAssertEqual(try list("").count, 3, "a refusal is no event")

        // The user's page shows the flag; the undo is an admin's.
        let page = try harness.request("GET", "/api/users/\(userID)", token: viewer)
        XCTAssertTrue(page.bodyText.contains("google_account_disabled") && page.bodyText.contains("Google account disabled"), page.bodyText)
        let path = "/api/security/events/google/\(disabled)/undo"
        XCTAssertEqual(try harness.request("POST", path, token: viewer, body: try harness.body(["reason": "SUP-3"])).status, 403)
        let admin = try harness.tokens("root").access
        let undone = try harness.request("POST", path, token: admin, body: try harness.body(["reason": "SUP-3: confirmed with the user"]))
        XCTAssertEqual(undone.status, 200, undone.bodyText)
        XCTAssertFalse(try harness.request("GET", "/api/users/\(userID)", token: viewer).bodyText.contains("google_account_disabled"))
        XCTAssertNotNil(try list("?event=account-disabled").first?["undoneAt"] as? String)
        let nothing = try harness.request("POST", "/api/security/events/google/\(revoked)/undo", token: admin, body: try harness.body(["reason": "SUP-3"]))
        XCTAssertEqual(nothing.status, 400, nothing.bodyText)
        XCTAssertTrue(try harness.auditText().contains("google.risc.undo"))
    }
}
