@testable import D1Engine
import Foundation
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// A `SnapshotPrelude` is answered by the next snapshot, from the same snapshot, with the snapshot's own results
/// unchanged; it is taken once; a snapshot that fails leaves it unanswered. On SQLite and, under ops/test, Postgres.
final class SnapshotPreludeTests: XCTestCase {
    func databases() throws -> [(String, SQLDatabase, () -> Void)] {
        let path = NSTemporaryDirectory() + "prelude-\(UUID().uuidString).sqlite"
        var all: [(String, SQLDatabase, () -> Void)] = [("sqlite", try SQLiteDatabase(path: path, options: .init(create: true)), { try? FileManager.default.removeItem(atPath: path) })]
        if let uri = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"], !uri.isEmpty {
            let connection = try PostgresConnection(uri: uri)
            all.append(("postgres", connection, {}))
        }
        return all
    }

    func testTheNextSnapshotAnswersThePreludeAndKeepsItsOwnResults() throws {
        for (engine, db, cleanUp) in try databases() {
            defer { cleanUp() }
            var answered: [String] = []
            let prelude = SnapshotPrelude(SQLStatement("SELECT 'check ' || ?", ["one"])) { rows in answered = rows.map { $0[0].string ?? "" } }
            db.prelude = prelude
            let results = try db.snapshot([SQLStatement("SELECT 1 + ?", [1]), SQLStatement("SELECT 'b'")])
            XCTAssertTrue(prelude.isAnswered, engine)
            XCTAssertEqual(answered, ["check one"], engine)
            XCTAssertEqual(results.count, 2, engine)
            XCTAssertEqual(results[0].first?[0].int64, 2, engine)
            XCTAssertEqual(results[1].first?[0].string, "b", engine)
            XCTAssertNil(db.prelude, "\(engine): taken once")
            _ = try db.snapshot([SQLStatement("SELECT 1"), SQLStatement("SELECT 2")])
            XCTAssertEqual(answered, ["check one"], engine)

            // A snapshot that fails takes the prelude without answering it; the connection still works.
            let unanswered = SnapshotPrelude(SQLStatement("SELECT 1")) { _ in XCTFail("\(engine): answered by a failed snapshot") }
            db.prelude = unanswered
            XCTAssertThrowsError(try db.snapshot([SQLStatement("SELECT * FROM no_such_table"), SQLStatement("SELECT 1")]), engine)
            XCTAssertFalse(unanswered.isAnswered, engine)
            XCTAssertNil(db.prelude, engine)
            XCTAssertEqual(try db.scalar("SELECT 7").int64, 7, engine)
        }
    }
}
