@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The parts of notification handling that need no signed token: Apple's body shape, its event-type spellings, and
/// the `Cache-Control` reading that decides how long Apple's keys are kept. Signed notifications are tested end to
/// end against Tests/Fixtures/apple_server.py (AppleNotificationsTests).
final class AppleNotificationParsingTests: XCTestCase {
    func testBodyMustBeApplesShape() throws {
        XCTAssertEqual(try AppleNotificationVerifier.payload(of: Array(#"{"payload": "a.b.c"}"#.utf8)), "a.b.c")
        for body in ["", "garbage", "[]", #"{"payload": 1}"#, #"{"payload": ""}"#, #"{"signedPayload": "a.b.c"}"#] {
            XCTAssertThrowsError(try AppleNotificationVerifier.payload(of: Array(body.utf8)), body) { error in
                XCTAssertTrue((error as? AppleNotificationRefusal)?.malformedBody == true, body)
            }
        }
    }

    func testEventTypesIncludeBothSpellingsOfAccountDelete() {
        XCTAssertEqual(AppleNotification.EventType(apple: "account-delete"), .accountDelete)
        XCTAssertEqual(AppleNotification.EventType(apple: "account-deleted"), .accountDelete)
        XCTAssertEqual(AppleNotification.EventType(apple: "email-disabled"), .emailDisabled)
        XCTAssertNil(AppleNotification.EventType(apple: "EMAIL-DISABLED"))
    }

    func testCacheControlMaxAge() {
        XCTAssertEqual(AppleKeySource.maxAge("max-age=3600"), 3600)
        XCTAssertEqual(AppleKeySource.maxAge("public, max-age=\"600\""), 600)
        XCTAssertEqual(AppleKeySource.maxAge("Max-Age = 60 , public"), 60)
        XCTAssertNil(AppleKeySource.maxAge("no-store, max-age=3600"))
        XCTAssertNil(AppleKeySource.maxAge("no-cache"))
        XCTAssertNil(AppleKeySource.maxAge(nil))
        XCTAssertEqual(AppleKeySource.maxAge("max-age=-5"), 0)
    }

    func testFormEncodingEscapesEverythingButUnreserved() {
        XCTAssertEqual(AppleHTTPClient.formEncode([("client_id", "com.example.web"), ("token", "a+b/c=d&e f")]),
                       "client_id=com.example.web&token=a%2Bb%2Fc%3Dd%26e%20f")
    }

    /// A refusal's source: an IPv4 peer as it is, an IPv6 peer by its /64 (one sender holds a whole /64), an
    /// IPv4-mapped one as its IPv4 address, the ingest transport alone.
    func testRefusalsAreCountedUnderTheSendersNetwork() {
        typealias Source = AppleNotificationInbox.RefusalSource
        XCTAssertEqual(Source(transport: .listener, address: "192.0.2.7").key, "listener 192.0.2.7")
        XCTAssertEqual(Source(transport: .listener, address: "2001:db8:1:2:aaaa:bbbb:cccc:dddd").key, "listener 2001:db8:1:2::/64")
        XCTAssertEqual(Source(transport: .listener, address: "2001:db8:1:2::ffff").key, "listener 2001:db8:1:2::/64")
        XCTAssertEqual(Source(transport: .listener, address: "::ffff:192.0.2.9").key, "listener 192.0.2.9")
        XCTAssertEqual(Source(transport: .ingest, address: nil).key, "ingest")
        XCTAssertEqual(Source(transport: .listener, address: "x" + String(repeating: "y", count: 500)).key.count, "listener ".count + 64)
    }

    /// However many senders, the counters stay bounded: past `maxRefusalCounters`, a new source is counted under one
    /// shared row; a known one keeps counting on its own.
    func testRefusalCountersAreUpsertedAndBounded() throws {
        let scratch = try Scratch()
        let store = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester).0
        // Apple's keys are never asked for: a payload that is not a JWS is refused first.
        let inbox = AppleNotificationInbox(store: store, keys: AppleKeySource(baseURL: "http://127.0.0.1:9"))
        let body = Array(#"{"payload": "not-a-token"}"#.utf8)
        for second in 0..<3 {
            let receipt = try inbox.receive(body: body, transport: .listener, source: "192.0.2.1", now: Timestamp(seconds: 1_800_000_000 + Int64(second)))
            XCTAssertEqual(receipt.outcome, .refused)
            XCTAssertEqual(receipt.refusal, .notAToken)
            XCTAssertEqual(receipt.refusals, Int64(second + 1))
        }
        let row = try XCTUnwrap(try store.db.row("SELECT count, first_seen, last_seen FROM gatehouse_apple_refusals WHERE source = 'listener 192.0.2.1'"))
        XCTAssertEqual(row["count"].int64, 3)
        XCTAssertEqual(row["first_seen"].string, Timestamp(seconds: 1_800_000_000).iso8601)
        XCTAssertEqual(row["last_seen"].string, Timestamp(seconds: 1_800_000_002).iso8601)
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_apple_notifications").int64, 0)

        try RefusalCounterTests.fillToTheBound("gatehouse_apple_refusals", in: store)
        for index in 0..<5 {
            _ = try inbox.receive(body: body, transport: .listener, source: "203.0.113.\(index)", now: .now())
        }
        _ = try inbox.receive(body: body, transport: .listener, source: "192.0.2.1", now: .now())
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_apple_refusals").int64, Int64(AppleNotificationInbox.maxRefusalCounters) + 1)
        XCTAssertEqual(try store.db.scalar("SELECT count FROM gatehouse_apple_refusals WHERE source = 'listener (other sources)'").int64, 5)
        XCTAssertEqual(try store.db.scalar("SELECT count FROM gatehouse_apple_refusals WHERE source = 'listener 192.0.2.1'").int64, 4)
    }

    /// A refresh forced by an unknown kid fetches at most once a minute: within it, the refresh's failure is answered
    /// again without a fetch; after it, the next forced refresh fetches.
    func testForcedKeyRefreshesAreAtMostOneAMinute() throws {
        let keys = AppleKeySource(baseURL: "http://127.0.0.1:1", timeout: 2)
        let start = Timestamp(seconds: 1_800_000_000)
        XCTAssertThrowsError(try keys.keys(store: nil, now: start, fresh: true)) { XCTAssertTrue($0 is AppleKeySource.Unavailable, "\($0)") }
        XCTAssertEqual(keys.fetchAttempts.value, 1)
        for seconds: Int64 in [0, 1, 30, 59] {
            XCTAssertThrowsError(try keys.keys(store: nil, now: start.adding(seconds: seconds), fresh: true)) {
                XCTAssertTrue("\($0)".contains("could not be fetched"), "\($0)")
            }
        }
        XCTAssertEqual(keys.fetchAttempts.value, 1, "no fetch within the minute")
        XCTAssertThrowsError(try keys.keys(store: nil, now: start.adding(seconds: 60), fresh: true))
        XCTAssertEqual(keys.fetchAttempts.value, 2, "the next minute's forced refresh fetches")
        // A fetch that is not forced is not limited (the cache is empty, so each one asks).
        XCTAssertThrowsError(try keys.keys(store: nil, now: start.adding(seconds: 61)))
        XCTAssertEqual(keys.fetchAttempts.value, 3)
    }
}
