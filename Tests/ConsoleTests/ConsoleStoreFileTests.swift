import Foundation
import XCTest
@testable import Console
import Gatehouse
import HTTPTestSupport

/// The store file removed or replaced under a running console: writes are refused (503), nothing is
/// written anywhere, `/api/health` says so, and all is served again once the file is back.
final class ConsoleStoreFileTests: XCTestCase {
    var harness: ConsoleHarness!
    override func setUpWithError() throws { harness = try ConsoleHarness(users: 3) }
    override func tearDown() { harness = nil }

    var files: FileManager { FileManager.default }

    func auditCount(_ path: String) throws -> Int64 {
        try Store.open(path: path).db.scalar("SELECT count(*) FROM gatehouse_audit").int64 ?? -1
    }

    func assertRefused(_ response: RawResponse, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(response.status, 503, response.bodyText, file: file, line: line)
        XCTAssertEqual(harness.errorCode(response), "store_replaced", file: file, line: line)
        XCTAssertTrue(response.bodyText.contains("restart the console"), response.bodyText, file: file, line: line)
        XCTAssertFalse(response.bodyText.contains(harness.directory.path), "no path: \(response.bodyText)", file: file, line: line)
    }

    func testARemovedStoreRefusesWritesUntilItIsBack() throws {
        let token = try harness.tokens("root").access
        let store = harness.storePath
        let kept = harness.directory.appendingPathComponent("kept.sqlite").path
        // A second name for the same file, so the test can look at it after `rm`.
        try files.linkItem(atPath: store, toPath: kept)
        let before = try auditCount(store)
        try files.removeItem(atPath: store)

        try assertRefused(try harness.login("root"))
        try assertRefused(try harness.request("POST", "/api/auth/logout", token: token))
        try assertRefused(try harness.request("GET", "/api/health", token: token))
        XCTAssertFalse(files.fileExists(atPath: store), "no new store file was created")
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: token).status, 200, "reads still answer")

        // The same file back at its path (its -wal file never moved): nothing was written meanwhile, and it is served again.
        try files.moveItem(atPath: kept, toPath: store)
        XCTAssertEqual(try auditCount(store), before, "nothing was written into the removed file")
        XCTAssertEqual(try harness.request("GET", "/api/health", token: token).status, 200)
        XCTAssertEqual(try harness.request("POST", "/api/auth/logout", token: token).status, 200)
        XCTAssertEqual(try auditCount(store), before + 1, "the logout is in the store")
    }

    func testAStoreReplacedByAnotherFileRefusesWrites() throws {
        let token = try harness.tokens("vera").access
        let store = harness.storePath
        let original = harness.directory.appendingPathComponent("original.sqlite").path
        let other = harness.directory.appendingPathComponent("other.sqlite").path
        _ = try Store.initialize(path: other, actor: Actor("tester"))
        let otherBefore = try auditCount(other)
        let originalBefore = try auditCount(store)
        try files.linkItem(atPath: store, toPath: original)
        // `mv other.sqlite console.sqlite`: rename(2) over the open store.
        XCTAssertEqual(rename(other, store), 0)

        try assertRefused(try harness.login("vera"))
        try assertRefused(try harness.request("GET", "/api/health", token: token))
        XCTAssertEqual(try harness.get("/index.html").status, 200, "the console still serves its pages")
        // Each file read under its own name (the -wal beside console.sqlite belongs to the original).
        XCTAssertEqual(rename(store, other), 0)
        XCTAssertEqual(try auditCount(other), otherBefore, "nothing was written into the new file")
        XCTAssertEqual(rename(original, store), 0)
        XCTAssertEqual(try auditCount(store), originalBefore, "nothing was written into the replaced file")
    }
}
