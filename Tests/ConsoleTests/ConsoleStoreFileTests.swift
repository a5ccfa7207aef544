@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

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

    /// `rm console.sqlite-wal` under a running console (over a real socket): the console's connections would go on
    /// acknowledging writes into the removed file, lost when it stops; so writes and `/api/health` answer 503.
    func testARemovedWALFileRefusesWritesAndHealth() throws {
        harness = try ConsoleHarness(users: 3, transport: .socket)
        let token = try harness.tokens("root").access
        let wal = harness.storePath + "-wal"
        XCTAssertTrue(files.fileExists(atPath: wal), "the console's store runs in WAL mode")
        XCTAssertEqual(try harness.request("GET", "/api/health", token: token).status, 200)
        try files.removeItem(atPath: wal)

        try assertRefused(try harness.login("root"))
        try assertRefused(try harness.request("POST", "/api/auth/logout", token: token))
        let health = try harness.request("GET", "/api/health", token: token)
        try assertRefused(health)
        XCTAssertTrue(health.bodyText.contains("-wal"), health.bodyText)
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: token).status, 200, "reads still answer")
        // A new, empty -wal file at the path (as another process opening the store makes one) is another file.
        XCTAssertTrue(files.createFile(atPath: wal, contents: nil))
        try assertRefused(try harness.request("POST", "/api/auth/logout", token: token))
    }

    /// What SQLite itself does to the -wal file while the console runs is no alarm: other processes writing,
    /// checkpointing it down to nothing (TRUNCATE, journal_size_limit) and closing their connections.
    func testCheckpointsAndOtherProcessesLeaveTheWALFileAlone() throws {
        harness = try ConsoleHarness(users: 3, transport: .socket)
        let token = try harness.tokens("root").access
        for _ in 0..<3 {
            let store = try Store.open(path: harness.storePath)
            try store.db.execute("PRAGMA journal_size_limit = 0")
            try store.audit.append(store.db, actor: Actor("tester"), action: "test.write")
            _ = try store.db.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        XCTAssertEqual(try harness.request("GET", "/api/health", token: token).status, 200)
        XCTAssertEqual(try harness.request("POST", "/api/auth/logout", token: token).status, 200)
    }
}
