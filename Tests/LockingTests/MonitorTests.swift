import Foundation
import XCTest
import Locking

final class MonitorTests: XCTestCase {
    /// A waiter wakes for the change it waits for, whichever thread makes it, and takes it under the same lock.
    func testAWaiterTakesWhatAnotherThreadPuts() {
        let queue = Monitor([Int]())
        let consumer = Thread {
            for expected in 0..<1000 {
                let got = queue.wait(until: { !$0.isEmpty }) { $0.removeFirst() }
                XCTAssertEqual(got, expected)
            }
        }
        consumer.start()
        for value in 0..<1000 { queue.update { $0.append(value) } }
        let deadline = Date().addingTimeInterval(10)
        while !consumer.isFinished && Date() < deadline { usleep(1000) }
        XCTAssertTrue(consumer.isFinished)
        XCTAssertEqual(queue.value, [])
    }

    /// A deadline that passes gives nil and leaves the state alone; a condition that already holds never waits.
    func testADeadlineEndsTheWaitWithoutRunningTheBody() {
        let flag = Monitor(false)
        let started = Date()
        let result = flag.wait(until: { $0 }, deadline: Date().addingTimeInterval(0.2)) { $0 = false; return 1 }
        XCTAssertNil(result)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.19)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        flag.update { $0 = true }
        XCTAssertEqual(flag.wait(until: { $0 }, deadline: Date()) { _ in 2 }, 2)
    }
}
