@testable import Gatehouse
import XCTest

/// Google's refused security event tokens are counted as Apple's notifications are (`RefusalCounter`): one row per
/// reason and source, an IPv6 sender by its /64, and past `maxCounters` a new source under one shared row
/// (Apple's side: AppleNotificationParsingTests).
final class RefusalCounterTests: XCTestCase {
    func testGoogleRefusalsAreCountedPerReasonAndSourceAndBounded() throws {
        let scratch = try Scratch()
        let store = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester).0
        // Google's keys are never asked for: a body that is not a JWS is refused first.
        let inbox = GoogleSecurityInbox(store: store, keys: GoogleRISCKeys(baseURL: "http://127.0.0.1:1", timeout: 2))
        for second in 0..<3 {
            let receipt = try inbox.receive(token: "not-a-token", transport: .listener, source: "2001:db8:1:2::\(second + 7)",
                                            now: Timestamp(seconds: 1_800_000_000 + Int64(second)))
            XCTAssertEqual(receipt.outcome, .refused)
            XCTAssertEqual(receipt.refusal, .notAToken)
            XCTAssertEqual(receipt.setError, "invalid_request")
        }
        let row = try XCTUnwrap(try store.db.row("SELECT count, first_seen, last_seen, transport FROM gatehouse_google_refusals WHERE source = 'listener 2001:db8:1:2::/64'"))
        XCTAssertEqual(row["count"].int64, 3, "one sender's /64 is one counter")
        XCTAssertEqual(row["first_seen"].string, Timestamp(seconds: 1_800_000_000).iso8601)
        XCTAssertEqual(row["last_seen"].string, Timestamp(seconds: 1_800_000_002).iso8601)
        XCTAssertEqual(row["transport"].string, "listener")
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_google_events").int64, 0, "a refusal is no event")

        try Self.fillToTheBound("gatehouse_google_refusals", in: store)
        for index in 0..<5 {
            _ = try inbox.receive(token: "not-a-token", transport: .listener, source: "203.0.113.\(index)", now: .now())
        }
        _ = try inbox.receive(token: "not-a-token", transport: .listener, source: "2001:db8:1:2::99", now: .now())
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_google_refusals").int64, Int64(RefusalCounter.maxCounters) + 1)
        XCTAssertEqual(try store.db.scalar("SELECT count FROM gatehouse_google_refusals WHERE source = 'listener (other sources)'").int64, 5)
        XCTAssertEqual(try store.db.scalar("SELECT count FROM gatehouse_google_refusals WHERE source = 'listener 2001:db8:1:2::/64'").int64, 4)
    }

    /// Fills `table` with counters from other senders up to one short of `RefusalCounter.maxCounters`.
    static func fillToTheBound(_ table: String, in store: Store) throws {
        try store.db.write {
            for index in 1..<RefusalCounter.maxCounters {
                try store.db.execute("""
                    INSERT INTO \(table) (reason, source, transport, count, first_seen, last_seen, last_detail)
                    VALUES ('signature', ?, 'listener', 1, '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', 'x')
                    """, ["listener 198.51.\(index / 256).\(index % 256)"])
            }
        }
    }
}
