@testable import D1Engine
import Foundation
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

final class DatabaseTests: XCTestCase {
    var dir: TestDirectory!
    override func setUpWithError() throws { dir = try TestDirectory() }

    func makeDatabase() throws -> SQLiteDatabase {
        try SQLiteDatabase(path: dir.path("test.sqlite"), options: .init(create: true))
    }

    func testOpensWithWALAndForeignKeys() throws {
        let db = try makeDatabase()
        XCTAssertEqual(try db.scalar("PRAGMA journal_mode").string, "wal")
        XCTAssertEqual(try db.scalar("PRAGMA foreign_keys").int64, 1)
        XCTAssertEqual(db.busyTimeoutMilliseconds, 15_000)
    }

    /// A wait for another connection's lock ends at the operation's deadline, well before the busy timeout, and spends
    /// it: the next wait gives up at once.
    func testALockWaitEndsAtTheDeadlineAndSpendsIt() throws {
        let holder = try makeDatabase()
        let waiter = try SQLiteDatabase(path: dir.path("test.sqlite"))
        try waiter.execute("CREATE TABLE t (x INTEGER)")
        try holder.executeScript("BEGIN IMMEDIATE")
        defer { try? holder.executeScript("ROLLBACK") }
        waiter.waitDeadline = WaitDeadline(milliseconds: 300)
        var started = Date()
        XCTAssertThrowsError(try waiter.write { try waiter.execute("INSERT INTO t VALUES (1)") }) { XCTAssertTrue(($0 as? DatabaseError)?.isBusy ?? false, "\($0)") }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        XCTAssertTrue(waiter.waitDeadline?.isPast ?? false)
        started = Date()
        XCTAssertThrowsError(try waiter.write { try waiter.execute("INSERT INTO t VALUES (2)") })
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.2)
    }

    func testMissingFileIsNotCreatedWithoutCreateOption() {
        XCTAssertThrowsError(try SQLiteDatabase(path: dir.path("missing.sqlite"))) { error in
            XCTAssertEqual((error as? DatabaseError)?.code, 14) // SQLITE_CANTOPEN
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("missing.sqlite")))
    }

    func testNonDatabaseFileIsRefusedAtOpen() throws {
        let path = dir.path("notes.txt")
        try String(repeating: "this is not a database\n", count: 200).write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try SQLiteDatabase(path: path)) { error in
            XCTAssertEqual((error as? DatabaseError)?.code, 26) // SQLITE_NOTADB
        }
    }

    func testTypedBindingRoundTrips() throws {
        let db = try makeDatabase()
        try db.execute("CREATE TABLE t (a TEXT, b INTEGER, c REAL, d BLOB, e TEXT)")
        let blob: [UInt8] = [0, 1, 2, 255]
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", ["héllo 'quoted' \u{0}x", Int64.max, 1.5, blob, String?.none])
        let row = try XCTUnwrap(db.row("SELECT * FROM t"))
        XCTAssertEqual(try row.string("a"), "héllo 'quoted' \u{0}x")
        XCTAssertEqual(row["b"], .integer(Int64.max))
        XCTAssertEqual(row["c"], .real(1.5))
        XCTAssertEqual(try row.blob("d"), blob)
        XCTAssertEqual(row["e"], .null)
        XCTAssertEqual(row["no_such_column"], .null)
        XCTAssertThrowsError(try row.int("a"))
    }

    func testStatementsAreCachedAndReusable() throws {
        let db = try makeDatabase()
        try db.execute("CREATE TABLE t (n INTEGER)")
        for n in 0..<100 { try db.execute("INSERT INTO t VALUES (?)", [n]) }
        XCTAssertTrue(try db.statement("INSERT INTO t VALUES (?)") === db.statement("INSERT INTO t VALUES (?)"))
        XCTAssertEqual(try db.scalar("SELECT sum(n) FROM t").int64, 4950)
    }

    /// The same SQL run inside a `forEach` over it gets its own statement: the outer cursor walks on instead of
    /// being reset to its first row (which would loop forever).
    func testSameSQLInsideForEachDoesNotResetTheOuterCursor() throws {
        let db = try makeDatabase()
        try db.execute("CREATE TABLE t (n INTEGER)")
        for n in 1...5 { try db.execute("INSERT INTO t VALUES (?)", [n]) }
        let sql = "SELECT n FROM t WHERE n >= ? ORDER BY n"
        var outer: [Int64] = []
        var inner: [[Int64]] = []
        try db.forEach(sql, [1]) { row in
            outer.append(row[0].int64!)
            XCTAssertLessThan(outer.count, 10, "the outer cursor was reset")
            if outer.count >= 10 { return }
            inner.append(try db.rows(sql, [row[0].int64! + 3]).map { $0[0].int64! })
            _ = try db.row(sql, [5])
            _ = try db.scalar(sql, [2])
        }
        XCTAssertEqual(outer, [1, 2, 3, 4, 5])
        XCTAssertEqual(inner, [[4, 5], [5], [], [], []])
        // Afterwards the cached statement is free again and reused.
        XCTAssertTrue(try db.statement(sql) === db.statement(sql))
    }

    func testWrongArgumentCountIsAnError() throws {
        let db = try makeDatabase()
        try db.execute("CREATE TABLE t (n INTEGER)")
        XCTAssertThrowsError(try db.execute("INSERT INTO t VALUES (?)", [1, 2]))
    }

    func testWriteRollsBackWhenBodyThrows() throws {
        struct Boom: Error {}
        let db = try makeDatabase()
        try db.execute("CREATE TABLE t (n INTEGER)")
        XCTAssertThrowsError(try db.write {
            try db.execute("INSERT INTO t VALUES (1)")
            throw Boom()
        })
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM t").int64, 0)
    }

    func testNestedWriteIsASavepoint() throws {
        struct Boom: Error {}
        let db = try makeDatabase()
        try db.execute("CREATE TABLE t (n INTEGER)")
        try db.write {
            try db.execute("INSERT INTO t VALUES (1)")
            XCTAssertThrowsError(try db.write {
                try db.execute("INSERT INTO t VALUES (2)")
                throw Boom()
            })
        }
        XCTAssertEqual(try db.rows("SELECT n FROM t").map { $0["n"] }, [.integer(1)])
    }

    func testErrorsCarryCodesAndSQLButNotBoundValues() throws {
        let db = try makeDatabase()
        try db.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
        try db.execute("INSERT INTO t VALUES (?)", ["super-secret-value"])
        XCTAssertThrowsError(try db.execute("INSERT INTO t VALUES (?)", ["super-secret-value"])) { error in
            let error = error as! DatabaseError
            XCTAssertEqual(error.code, 19)
            XCTAssertTrue(error.isUniqueViolation)
            XCTAssertEqual(error.sql, "INSERT INTO t VALUES (?)")
            XCTAssertFalse(error.description.contains("super-secret-value"))
            XCTAssertTrue(error.description.contains("UNIQUE"))
        }
    }

    func testForeignKeysAreEnforced() throws {
        let db = try makeDatabase()
        try db.executeScript("CREATE TABLE p (id TEXT PRIMARY KEY); CREATE TABLE c (p TEXT REFERENCES p(id));")
        XCTAssertThrowsError(try db.execute("INSERT INTO c VALUES ('nope')")) { error in
            XCTAssertEqual((error as? DatabaseError)?.extendedCode, SQLiteCode.constraintForeignKey)
        }
        XCTAssertEqual(try db.foreignKeys(of: "c").first?.referencedTable, "p")
    }

    func testQuoteEscapesIdentifiers() {
        XCTAssertEqual(SQLiteDatabase.quote("user"), "\"user\"")
        XCTAssertEqual(SQLiteDatabase.quote("we\"ird"), "\"we\"\"ird\"")
    }

    func testPoolSerialisesEachConnectionAcrossThreads() throws {
        let path = dir.path("pool.sqlite")
        let setup = try SQLiteDatabase(path: path, options: .init(create: true))
        try setup.execute("CREATE TABLE t (n INTEGER)")
        let pool = try DatabasePool(path: path, maximumConnections: 3)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for n in 0..<50 {
                try! pool.withConnection { db in
                    try db.write { try db.execute("INSERT INTO t VALUES (?)", [worker * 1000 + n]) }
                }
            }
        }
        XCTAssertEqual(try setup.scalar("SELECT count(*) FROM t").int64, 400)
    }

    func testWriterWaitsForAnotherConnectionsLock() throws {
        let path = dir.path("lock.sqlite")
        let first = try SQLiteDatabase(path: path, options: .init(create: true))
        try first.execute("CREATE TABLE t (n INTEGER)")
        let second = try SQLiteDatabase(path: path, options: .init(busyTimeoutMilliseconds: 5_000))
        let released = expectation(description: "first writer commits")
        try first.executeScript("BEGIN IMMEDIATE; INSERT INTO t VALUES (1);")
        // The connection is handed to exactly one other thread while this one is blocked in `write`.
        nonisolated(unsafe) let holder = first
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            try! holder.executeScript("COMMIT")
            released.fulfill()
        }
        try second.write { try second.execute("INSERT INTO t VALUES (2)") }
        wait(for: [released], timeout: 5)
        XCTAssertEqual(try second.scalar("SELECT count(*) FROM t").int64, 2)
    }
}
