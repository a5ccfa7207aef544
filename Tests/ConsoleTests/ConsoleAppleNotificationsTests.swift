@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// `GET /api/apple/notifications`: the recorded notifications for the Apple events page, read-only, for viewers,
/// with no token in the answer.
final class ConsoleAppleNotificationsTests: XCTestCase {
    func testViewersReadTheRecordedNotificationsAndNothingWrites() throws {
        let harness = try ConsoleHarness(users: 2)
        let viewer = try harness.tokens("vera").access
        let store = try Store.open(path: harness.storePath)
        try store.db.write {
            try store.db.execute("""
                INSERT INTO gatehouse_apple_notifications (received_at, transport, outcome, jti, sub, type, event_time, aud, action, token_sha256)
                VALUES ('2026-12-01T00:00:00.000Z', 'listener', 'unknown_sub', 'j1', '001.apple', 'consent-revoked', '2026-12-01T00:00:00.000Z',
                        'com.example.web', 'no Apple account has this sub; nothing changed', 'aa')
                """)
            try store.db.execute("""
                INSERT INTO gatehouse_apple_notifications (received_at, transport, outcome, reason, token_sha256)
                VALUES ('2026-12-01T00:00:01.000Z', 'ingest', 'refused', 'the token expired at 2026-11-30T00:00:00Z', 'bb')
                """)
        }
        let answer = try harness.request("GET", "/api/apple/notifications", token: viewer)
        XCTAssertEqual(answer.status, 200, answer.bodyText)
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [[String: Any]])
        XCTAssertEqual(entries.map { $0["outcome"] as? String }, ["refused", "unknown_sub"], "newest first")
        XCTAssertEqual(entries.last?["type"] as? String, "consent-revoked")
        XCTAssertFalse(answer.bodyText.contains("token_sha256") || answer.bodyText.contains("tokenSha256"))
        XCTAssertEqual(try harness.request("GET", "/api/apple/notifications").status, 401)
        XCTAssertNotEqual(try harness.request("POST", "/api/apple/notifications", token: viewer, body: "{}").status, 200, "read-only")
    }

    /// Refused notifications are counters (reason, source, count, first and last time): the Apple events API lists
    /// them beside the recorded notifications, newest first by their last refusal.
    func testRefusalCountersAreListedWithTheNotifications() throws {
        let harness = try ConsoleHarness(users: 2)
        let viewer = try harness.tokens("vera").access
        let store = try Store.open(path: harness.storePath)
        try store.db.write {
            try store.db.execute("""
                INSERT INTO gatehouse_apple_notifications (received_at, transport, outcome, jti, sub, type, event_time, aud, action, token_sha256)
                VALUES ('2026-12-01T00:00:05.000Z', 'listener', 'unknown_sub', 'j1', '001.apple', 'consent-revoked', '2026-12-01T00:00:00.000Z',
                        'com.example.web', 'no Apple account has this sub; nothing changed', 'aa')
                """)
            try store.db.execute("""
                INSERT INTO gatehouse_apple_refusals (reason, source, transport, count, first_seen, last_seen, last_detail) VALUES
                  ('unknown_key', 'listener 192.0.2.7', 'listener', 961, '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:09.000Z', 'the payload is not a token signed by Apple''s keys'),
                  ('exp', 'ingest', 'ingest', 2, '2026-11-30T00:00:00.000Z', '2026-12-01T00:00:01.000Z', 'the token expired at 2026-11-30T00:00:00Z')
                """)
        }
        let answer = try harness.request("GET", "/api/apple/notifications", token: viewer)
        XCTAssertEqual(answer.status, 200, answer.bodyText)
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [[String: Any]])
        XCTAssertEqual(entries.map { $0["outcome"] as? String }, ["refused", "unknown_sub", "refused"], "newest first: \(answer.bodyText)")
        XCTAssertEqual(entries.first?["count"] as? Int, 961)
        XCTAssertEqual(entries.first?["refusal"] as? String, "unknown_key")
        XCTAssertEqual(entries.first?["source"] as? String, "listener 192.0.2.7")
        XCTAssertEqual(entries.first?["firstSeen"] as? String, "2026-12-01T00:00:00.000Z")
        XCTAssertNil(entries[1]["count"], "a notification has no count")
        XCTAssertEqual(entries.last?["count"] as? Int, 2)
        let limited = try harness.request("GET", "/api/apple/notifications?limit=1", token: viewer)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(limited.body)) as? [[String: Any]])?.count, 1, limited.bodyText)
    }
}
