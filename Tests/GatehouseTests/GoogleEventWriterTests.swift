@testable import Gatehouse
import XCTest

/// The receiver's queue is bounded: while the store is held by another process, verified events wait up to
/// `GoogleEventWriter.capacity` and refusals to half of it; past that, a delivery is told at once to come back
/// (the receiver answers 503 with Retry-After), and memory does not grow with a flood.
final class GoogleEventWriterTests: XCTestCase {
    func testTheQueueIsBoundedWhileTheStoreIsHeld() throws {
        let scratch = try Scratch()
        let path = scratch.path("s.sqlite")
        let holder = try Store.initialize(path: path, actor: tester).0
        try holder.db.execute("BEGIN EXCLUSIVE")
        let writer = GoogleEventWriter(pool: try StorePool(path: path, size: 1), keys: GoogleRISCKeys(baseURL: "http://127.0.0.1:1"))
        let refusal = GoogleRISCRefusal("forged", reason: .signature)
        for _ in 0..<GoogleEventWriter.capacity { writer.count(refusal, transport: .listener, source: "192.0.2.1") }
        XCTAssertLessThanOrEqual(writer.queued, GoogleEventWriter.capacity / 2, "refusals take at most half the queue")
        let started = Date()
        for index in 0..<(GoogleEventWriter.capacity + 500) {
            let event = GoogleSecurityEvent(kind: .sessionsRevoked, jti: "j-\(index)", issuedAt: nil, sub: "g-\(index)", token: nil, reason: nil, state: nil)
            XCTAssertNil(try writer.record(event, fingerprint: "f", transport: .listener, wait: 0))
        }
        XCTAssertEqual(writer.queued, GoogleEventWriter.capacity, "however many arrive, while the writer waits for the store")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "a full queue answers at once")

        // Once the store is free, the writer records what waited.
        try holder.db.execute("ROLLBACK")
        let deadline = Date().addingTimeInterval(60)
        while writer.queued > 0 && Date() < deadline { usleep(50_000) }
        XCTAssertEqual(writer.queued, 0)
        writer.stop()
        usleep(100_000)
        XCTAssertGreaterThan(try holder.db.scalar("SELECT count(*) FROM gatehouse_google_refusals").int64 ?? 0, 0)
    }
}
