@testable import D1Engine
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

final class MigratorTests: XCTestCase {
    var dir: TestDirectory!
    override func setUpWithError() throws { dir = try TestDirectory() }

    let one = Migration(id: 1, name: "0001_a", sql: "CREATE TABLE a (id INTEGER PRIMARY KEY);", checksum: "c1")
    let two = Migration(id: 2, name: "0002_b", sql: "CREATE TABLE b (a INTEGER REFERENCES a(id));", checksum: "c2")

    func testAppliesEachMigrationOnceInOrder() throws {
        let db = try SQLiteDatabase(path: dir.path("m.sqlite"), options: .init(create: true))
        let migrator = Migrator()
        XCTAssertEqual(try migrator.migrate(db, [two, one], now: "t").map(\.id), [1, 2])
        XCTAssertEqual(try migrator.migrate(db, [one, two], now: "t").map(\.id), [])
        XCTAssertEqual(try migrator.applied(db).map(\.checksum), ["c1", "c2"])
        XCTAssertTrue(try db.tableExists("b"))
    }

    func testEditedMigrationIsRefused() throws {
        let db = try SQLiteDatabase(path: dir.path("m.sqlite"), options: .init(create: true))
        try Migrator().migrate(db, [one], now: "t")
        let edited = Migration(id: 1, name: "0001_a", sql: "CREATE TABLE a (id INTEGER);", checksum: "changed")
        XCTAssertThrowsError(try Migrator().migrate(db, [edited, two], now: "t")) { error in
            guard case .edited(1, _, "c1", "changed") = error as? MigrationError else { return XCTFail("\(error)") }
            XCTAssertTrue("\(error)".contains("new, higher-numbered migration"))
        }
        XCTAssertFalse(try db.tableExists("b"))
    }

    func testUnknownAppliedMigrationIsRefused() throws {
        let db = try SQLiteDatabase(path: dir.path("m.sqlite"), options: .init(create: true))
        try Migrator().migrate(db, [one, two], now: "t")
        XCTAssertThrowsError(try Migrator().migrate(db, [one], now: "t")) { error in
            XCTAssertEqual(error as? MigrationError, .unknown(id: 2, name: "0002_b"))
        }
    }

    func testFailingMigrationLeavesNothingBehind() throws {
        let db = try SQLiteDatabase(path: dir.path("m.sqlite"), options: .init(create: true))
        let broken = Migration(id: 2, name: "0002_broken", sql: "CREATE TABLE c (x); CREATE TABLE oops (", checksum: "x")
        XCTAssertThrowsError(try Migrator().migrate(db, [one, broken], now: "t"))
        XCTAssertTrue(try db.tableExists("a"))
        XCTAssertFalse(try db.tableExists("c"))
        XCTAssertEqual(try Migrator().applied(db).map(\.id), [1])
    }

    func testSkippedMigrationIsRecordedWithoutRunning() throws {
        let db = try SQLiteDatabase(path: dir.path("m.sqlite"), options: .init(create: true))
        try Migrator().migrate(db, [one, two], now: "t") { migration, _ in migration.id != 2 }
        XCTAssertFalse(try db.tableExists("b"))
        XCTAssertEqual(try Migrator().applied(db).map(\.ran), [true, false])
    }

    /// Rows that broke their foreign keys before a migration are not held against it; rows it adds are.
    func testOnlyViolationsAMigrationAddsAreRefused() throws {
        let db = try SQLiteDatabase(path: dir.path("dirty.sqlite"), options: .init(create: true))
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.executeScript("CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (p INTEGER REFERENCES parent(id)); INSERT INTO child VALUES (7);")
        try db.execute("PRAGMA foreign_keys = ON")
        let unrelated = Migration(id: 1, name: "0001_more", sql: "CREATE TABLE gatehouse_x (id INTEGER PRIMARY KEY);", checksum: "x")
        XCTAssertEqual(try Migrator().migrate(db, [unrelated], now: "t").map(\.id), [1])
        // Naming the dirty table is not touching it: its one old violation is counted before and after.
        let naming = Migration(id: 2, name: "0002_view", sql: "CREATE VIEW child_view AS SELECT * FROM child;", checksum: "v")
        XCTAssertEqual(try Migrator().migrate(db, [unrelated, naming], now: "t").map(\.id), [2])
        let adding = Migration(id: 3, name: "0003_bad", sql: "PRAGMA defer_foreign_keys = ON; CREATE TABLE gatehouse_y (p INTEGER REFERENCES parent(id)); INSERT INTO gatehouse_y VALUES (9);", checksum: "y")
        XCTAssertThrowsError(try Migrator().migrate(db, [unrelated, naming, adding], now: "t")) { error in
            guard case .foreignKeyViolations(1, let sample) = error as? MigrationError else { return XCTFail("\(error)") }
            XCTAssertTrue(sample.contains("gatehouse_y"), sample)
        }
        XCTAssertFalse(try db.tableExists("gatehouse_y"))
    }

    /// A first migration that fails leaves no table of records behind (the refused store is as it was).
    func testRefusedFirstMigrationLeavesNoRecordsTable() throws {
        let db = try SQLiteDatabase(path: dir.path("fresh.sqlite"), options: .init(create: true))
        let broken = Migration(id: 1, name: "0001_broken", sql: "CREATE TABLE a (id INTEGER PRIMARY KEY); NOT SQL;", checksum: "b")
        XCTAssertThrowsError(try Migrator().migrate(db, [broken], now: "t"))
        XCTAssertEqual(try db.tableNames(), [])
    }
}
