import Dispatch
import XCTest
import Locking

final class LockedTests: XCTestCase {
    func testConcurrentUpdatesAreNotLost() {
        let counter = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 10_000) { _ in counter.withLock { $0 += 1 } }
        XCTAssertEqual(counter.value, 10_000)
    }

    func testTryWithLockDoesNotWaitForAHeldLock() {
        let shared = Locked([Int]())
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            shared.withLock { value in
                value.append(1)
                held.signal()
                release.wait()
            }
            done.signal()
        }
        held.wait()
        XCTAssertNil(shared.tryWithLock { $0.append(2) }, "the lock is held elsewhere: the body must not run")
        release.signal()
        done.wait()
        XCTAssertEqual(shared.tryWithLock { $0.append(3); return $0.count }, 2)
        XCTAssertEqual(shared.value, [1, 3])
    }

    func testAThrowingBodyReleasesTheLock() {
        struct Refused: Error {}
        let shared = Locked(1)
        XCTAssertThrowsError(try shared.withLock { _ in throw Refused() })
        XCTAssertEqual(shared.tryWithLock { $0 }, 1)
    }
}
