@testable import Gatehouse
import Storage
import TestEngines
import XCTest

/// The tests' in-memory engine behaves as a store: what one connection writes, another opened by name reads; it ends
/// when dropped; and a name nobody created is refused, not made.
final class MemoryStoreEngineTests: XCTestCase {
    func testAStoreOpenedByNameSeesWhatInitAndItsWritesLeft() throws {
        let name = "memory-\(UInt32.random(in: .min ... .max))"
        defer { MemoryStores.drop(name) }
        let (made, report) = try Store.initialize(path: "memory:" + name, actor: Actor("tester"))
        XCTAssertFalse(report.applied.isEmpty)
        _ = try PolicyStore(store: made).set(PolicyChange(key: .linkSocialAllowDifferentEmails, value: .bool(true), reason: "SUP-1"),
                                             actor: Actor("ops"), now: .now())
        let opened = try PolicyStore.open(path: "memory:" + name)
        XCTAssertEqual(try opened.snapshot(now: .now()).version, 1)
        XCTAssertEqual(opened.store.path, "memory:" + name)
    }

    func testADroppedOrUnknownStoreIsRefused() throws {
        let name = "memory-\(UInt32.random(in: .min ... .max))"
        _ = try Store.initialize(path: "memory:" + name, actor: Actor("tester"))
        MemoryStores.drop(name)
        XCTAssertThrowsError(try Store.open(path: "memory:" + name)) { error in
            XCTAssertEqual((error as? GatehouseError)?.code, .notFound, "\(error)")
        }
        XCTAssertThrowsError(try StoreLocation("memory:not a name")) { error in
            XCTAssertEqual((error as? GatehouseError)?.code, .invalid, "\(error)")
        }
    }
}
