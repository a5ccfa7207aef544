@testable import D1Engine
import Foundation
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// `recordingReads` and `offer` on a D1 database of the local D1 API server ops/test starts (skipped without it): an
/// offered answer serves only the next write, where its guard sends the write round again when the row moved.
final class D1OfferedAnswersTests: XCTestCase {
    func database() throws -> D1Connection {
        let environment = ProcessInfo.processInfo.environment
        guard let control = environment["GATEHOUSE_TEST_D1_CONTROL"], let account = environment["GATEHOUSE_TEST_D1_ACCOUNT"],
              let base = environment["GATEHOUSE_TEST_D1_URL"], let url = URL(string: control + "/databases") else {
            throw XCTSkip("no D1 test server (ops/test starts one)")
        }
        // A new database of the server's account (its control endpoint), asked with curl.
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-sf", "-X", "POST", "-H", "Content-Type: application/json", "-d", "{}", url.absoluteString]
        let output = Pipe()
        curl.standardOutput = output
        try curl.run()
        let made: Data? = output.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        let answer = try XCTUnwrap(try JSONSerialization.jsonObject(with: XCTUnwrap(made)) as? [String: Any])
        let id = try XCTUnwrap(answer["database"] as? String)
        var settings = environment
        settings[D1Location.baseURLVariable] = base
        return D1Connection(location: try D1Location(uri: "d1://\(account)/\(id)", environment: settings))
    }

    func testAnOfferedAnswerServesOnlyTheNextWriteAndItsGuardCatchesAMovedRow() throws {
        let db = try database()
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        try db.execute("INSERT INTO t (id, v) VALUES (1, 'a')")
        _ = try db.tableNames()
        let (read, record) = try db.recordingReads { try db.scalar("SELECT v FROM t WHERE id = ?", [1]).string }
        XCTAssertEqual(read, "a")
        let offered = try XCTUnwrap(record, "D1 records its reads")
        XCTAssertEqual(D1ReadRecord(offered)?.entries.map(\.sql), ["SELECT v FROM t WHERE id = 1"])

        // The row moves after the record.
        try db.execute("UPDATE t SET v = 'b' WHERE id = 1")
        // Outside a write, an offer answers nothing: the read sees the row as it is.
        db.offer(offered)
        XCTAssertEqual(try db.scalar("SELECT v FROM t WHERE id = ?", [1]).string, "b")
        // Inside the next write it is the first answer; its guard fails the write's request, and the body runs again
        // on a fresh read.
        db.offer(offered)
        var seen: [String] = []
        try db.write {
            seen.append(try db.scalar("SELECT v FROM t WHERE id = ?", [1]).string ?? "?")
            try db.execute("UPDATE t SET v = v || '!' WHERE id = 1")
        }
        XCTAssertEqual(seen, ["a", "b"])
        XCTAssertEqual(try db.scalar("SELECT v FROM t WHERE id = ?", [1]).string, "b!")
        // An offer made against another schema is not taken.
        try db.execute("ALTER TABLE t ADD COLUMN w TEXT")
        _ = try db.tableNames()
        db.offer(offered)
        seen = []
        try db.write {
            seen.append(try db.scalar("SELECT v FROM t WHERE id = ?", [1]).string ?? "?")
            try db.execute("UPDATE t SET w = 'x' WHERE id = 1")
        }
        XCTAssertEqual(seen, ["b!"])
    }
}
