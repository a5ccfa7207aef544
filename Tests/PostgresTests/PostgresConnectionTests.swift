@testable import D1Engine
import Foundation
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// PostgresConnection against the real cluster ops/test starts: binding, rows, transactions and error predicates.
final class PostgresConnectionTests: XCTestCase {
    func testConnectsInUTF8AndReportsTheServer() throws {
        let db = try TestPostgres.connect()
        XCTAssertGreaterThanOrEqual(db.serverVersion, 100000)
        XCTAssertEqual(try db.scalar("SHOW client_encoding").string, "UTF8")
        XCTAssertEqual(try db.scalar("SELECT current_user").string, "gatehouse")
        XCTAssertEqual(try db.scalar("SELECT current_setting('application_name')").string, "gatehouse")
        XCTAssertFalse(db.isInTransaction)
        XCTAssertTrue(db.description.hasPrefix("Postgres connection to postgresql://gatehouse@"))
    }

    func testBindsAndReadsBackEveryValueKind() throws {
        let db = try TestPostgres.connect()
        let cases: [SQLValue] = [
            .null,
            .integer(0), .integer(-1), .integer(Int64.min), .integer(Int64.max),
            .real(0.1), .real(-0.0), .real(1e308), .real(-1e308), .real(Double.leastNonzeroMagnitude),
            .real(Double.greatestFiniteMagnitude), .real(.infinity), .real(-.infinity),
            .text(""), .text("plain"), .text("Zoë 🎉 日本語 \u{202E}rtl \u{200B}"), .text("quote ' and \" and \\ and $1"),
            .blob([]), .blob(Array(0...255)), .blob([0, 0, 0]),
        ]
        for value in cases {
            XCTAssertEqual(try db.scalar("SELECT $1 AS v", [value]), value, "\(value)")
        }
        let nan = try db.scalar("SELECT $1 AS v", [SQLValue.real(.nan)])
        guard case .real(let double) = nan else { return XCTFail("NaN came back as \(nan)") }
        XCTAssertTrue(double.isNaN)
        // -0.0 == 0.0 for Equatable: check the sign too.
        guard case .real(let zero) = try db.scalar("SELECT $1 AS v", [SQLValue.real(-0.0)]) else { return XCTFail() }
        XCTAssertEqual(zero.sign, .minus)
    }

    func testBindsIntoTypedColumnsAndReadsByName() throws {
        let db = try TestPostgres.connect()
        try db.execute("""
            CREATE TEMP TABLE kinds (id int8 PRIMARY KEY, small int4, ratio float8, name text, data bytea,
                                     flag boolean, at timestamptz, amount numeric)
            """)
        try db.execute("INSERT INTO kinds(id, small, ratio, name, data, flag, at, amount) VALUES ($1, $2, $3, $4, $5, $6::int4::boolean, $7, $8)",
                       [Int64.max, 42, 2.5, "Zoë", [UInt8]([0xde, 0xad]), true, "2026-12-01T20:00:00Z", "12.50"])
        XCTAssertEqual(db.changes, 1)
        try db.execute("INSERT INTO kinds(id) VALUES ($1)", [Int64.min])
        let rows = try db.rows("SELECT * FROM kinds ORDER BY id")
        XCTAssertEqual(rows.count, 2)
        XCTAssertEqual(rows[0]["id"], .integer(Int64.min))
        XCTAssertTrue(rows[0]["name"].isNull)
        let row = rows[1]
        XCTAssertEqual(row.columns.names, ["id", "small", "ratio", "name", "data", "flag", "at", "amount"])
        XCTAssertEqual(try row.int("small"), 42)
        XCTAssertEqual(row["ratio"], .real(2.5))
        XCTAssertEqual(try row.string("name"), "Zoë")
        XCTAssertEqual(try row.blob("data"), [0xde, 0xad])
        XCTAssertTrue(row.bool("flag"))
        XCTAssertEqual(row["at"], .text("2026-12-01 20:00:00+00"))
        XCTAssertEqual(row["amount"], .text("12.50"))
        XCTAssertTrue(row["no_such_column"].isNull)
        try db.execute("UPDATE kinds SET small = small + 1")
        XCTAssertEqual(db.changes, 2)
        var seen: [Int64] = []
        try db.forEach("SELECT id FROM kinds WHERE id > $1 ORDER BY id", [0]) { seen.append($0["id"].int64 ?? 0) }
        XCTAssertEqual(seen, [Int64.max])
        XCTAssertNil(try db.row("SELECT id FROM kinds WHERE id = $1", [7]))
    }

    func testTextWithNULIsRefusedClearly() throws {
        let db = try TestPostgres.connect()
        XCTAssertThrowsError(try db.scalar("SELECT $1::text", ["before\u{0}after"])) { error in
            guard let error = error as? PostgresError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.sqlState, PostgresSQLState.characterNotInRepertoire)
            XCTAssertTrue(error.message.contains("$1 is text with a NUL character"), error.message)
            XCTAssertTrue(error.message.contains("bytea"), error.message)
        }
        // The same bytes are fine as a blob.
        XCTAssertEqual(try db.scalar("SELECT $1 AS v", [SQLValue.blob(Array("before\u{0}after".utf8))]),
                       .blob(Array("before\u{0}after".utf8)))
    }

    func testWriteCommitsOnReturnAndRollsBackOnThrow() throws {
        let db = try TestPostgres.connect()
        try db.execute("CREATE TEMP TABLE t (v text)")
        try db.write { try db.execute("INSERT INTO t VALUES ($1)", ["kept"]) }
        struct Abort: Error {}
        XCTAssertThrowsError(try db.write {
            try db.execute("INSERT INTO t VALUES ($1)", ["dropped"])
            XCTAssertTrue(db.isInTransaction)
            throw Abort()
        }) { XCTAssertTrue($0 is Abort) }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.rows("SELECT v FROM t").map { $0["v"] }, [.text("kept")])

        // Nested calls are savepoints: the inner rollback keeps the outer work.
        try db.write {
            try db.execute("INSERT INTO t VALUES ('outer')")
            _ = try? db.write {
                try db.execute("INSERT INTO t VALUES ('inner')")
                throw Abort()
            }
            // A failed statement rolled back to its savepoint leaves the transaction usable.
            XCTAssertThrowsError(try db.write { try db.execute("INSERT INTO t VALUES (1/0)") })
            try db.execute("INSERT INTO t VALUES ('after')")
        }
        XCTAssertEqual(try db.rows("SELECT v FROM t ORDER BY v").map { $0["v"] }, [.text("after"), .text("kept"), .text("outer")])
    }

    /// `snapshot` sends its statements together (pipeline mode) and gives each one's rows back in order: typed
    /// parameters inferred as for one statement, a first use prepared on the way, an empty result empty.
    func testSnapshotGivesEachStatementsRowsInOrder() throws {
        let db = try TestPostgres.connect()
        try db.execute("CREATE TEMP TABLE t (n int8, flag boolean, label text)")
        try db.execute("INSERT INTO t VALUES (1, true, 'one'), (2, false, 'two'), (3, true, NULL)")
        for _ in 0..<2 {  // the second time every statement is already prepared
            let results = try db.snapshot([
                SQLStatement("SELECT n FROM t WHERE flag = ? ORDER BY n", [1]),
                SQLStatement("SELECT label FROM t WHERE n = ?", [2]),
                SQLStatement("SELECT n FROM t WHERE label = ?", ["none"]),
                SQLStatement("SELECT count(*) AS c FROM t WHERE label IS NULL"),
            ])
            XCTAssertEqual(results.map { $0.map(\.values) }, [[[.integer(1)], [.integer(3)]], [[.text("two")]], [], [[.integer(1)]]])
            XCTAssertFalse(db.isInTransaction, "the snapshot's own transaction is over")
        }
        // Inside the caller's transaction: its own uncommitted rows are seen, and the transaction stays open.
        try db.write {
            try db.execute("INSERT INTO t VALUES (4, true, 'four')")
            let results = try db.snapshot([SQLStatement("SELECT count(*) FROM t"), SQLStatement("SELECT label FROM t WHERE n = ?", [4])])
            XCTAssertEqual(results.map { $0.map(\.values) }, [[[.integer(4)]], [[.text("four")]]])
            XCTAssertTrue(db.isInTransaction)
        }
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM t").int64, 4)
    }

    /// A streamed scan (`forEach`, libpq's single-row mode: no rows, every row, or stopped by its body), then a
    /// snapshot in the same transaction: libpq 15 can keep single-row mode for the pipeline's first query, whose rows
    /// then arrive one result each; the snapshot still gives every statement's rows.
    func testASnapshotAfterAStreamedScanGivesEveryRow() throws {
        let db = try TestPostgres.connect()
        try db.execute("CREATE TEMP TABLE t (n int8)")
        try db.execute("INSERT INTO t VALUES (1), (2), (3)")
        try db.read {
            struct Enough: Error {}
            for (bound, stop) in [(10, false), (0, false), (0, true)] {
                var seen = 0
                do {
                    try db.forEach("SELECT n FROM t WHERE n > ?", [bound]) { _ in seen += 1; if stop { throw Enough() } }
                } catch is Enough {}
                let results = try db.snapshot([SQLStatement("SELECT n FROM t WHERE n >= ? ORDER BY n", [2]), SQLStatement("SELECT count(*) FROM t")])
                XCTAssertEqual(results.map { $0.map(\.values) }, [[[.integer(2)], [.integer(3)]], [[.integer(3)]]], "after \(seen) row(s), bound \(bound)")
            }
        }
    }

    /// A statement that fails in a snapshot is the error thrown (the ones after it are not run), its own
    /// transaction is rolled back, and the connection takes the next statement.
    func testSnapshotThrowsTheFailingStatementsErrorAndStaysUsable() throws {
        let db = try TestPostgres.connect()
        try db.execute("CREATE TEMP TABLE t (n int8)")
        try db.execute("INSERT INTO t VALUES (1)")
        XCTAssertThrowsError(try db.snapshot([
            SQLStatement("SELECT n FROM t"),
            SQLStatement("SELECT n / (n - 1) FROM t"),
            SQLStatement("SELECT n + 1 FROM t"),
        ])) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, "22012", "division by zero: \(error)")
        }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM t").int64, 1)
        // A statement the server cannot prepare fails before anything is sent.
        XCTAssertThrowsError(try db.snapshot([SQLStatement("SELECT n FROM t"), SQLStatement("SELECT nope FROM t")]))
        XCTAssertFalse(db.isInTransaction)
        // Inside the caller's transaction the failure aborts it, as any failed statement does.
        XCTAssertThrowsError(try db.write {
            _ = try db.snapshot([SQLStatement("SELECT 1"), SQLStatement("SELECT 1/0")])
        })
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.snapshot([SQLStatement("SELECT 1"), SQLStatement("SELECT 2")]).map { $0.map(\.values) }, [[[.integer(1)]], [[.integer(2)]]])
    }

    /// `batch` runs hundreds of statements a chunk per round trip with each one's changes; a failure in a later chunk
    /// stops it there, throws, and the transaction rolls back whole.
    func testBatchAcrossChunksReportsChangesAndStopsAtAFailure() throws {
        let db = try TestPostgres.connect()
        try db.execute("CREATE TEMP TABLE t (n int8 PRIMARY KEY, flag boolean)")
        let inserts = (1...300).map { SQLStatement("INSERT INTO t VALUES (?, ?)", [$0, $0 % 2]) }
        let results = try db.write { try db.batch(inserts + [SQLStatement("UPDATE t SET flag = NOT flag WHERE n <= ?", [10]),
                                                             SQLStatement("SELECT count(*) FROM t WHERE flag")]) }
        XCTAssertEqual(results.count, 302)
        XCTAssertTrue(results.prefix(300).allSatisfy { $0.changes == 1 })
        XCTAssertEqual(results[300].changes, 10)
        XCTAssertEqual(results[301].rows.first?[0], .integer(150))

        let failing = (301...600).map { SQLStatement("INSERT INTO t VALUES (?, NULL)", [$0 == 500 ? 1 : $0]) }
        XCTAssertThrowsError(try db.write { _ = try db.batch(failing) }) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, "23505", "\(error)")
        }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM t").int64, 300, "nothing of the failed batch stayed")

        // A value that cannot be sent at all (text with a NUL) is refused in the middle of the pipeline: the
        // connection leaves pipeline mode and takes the next statement; a snapshot's own transaction is rolled back.
        let unsendable = [SQLStatement("SELECT count(*) FROM t"), SQLStatement("SELECT count(*) FROM t WHERE n = ?", [7]),
                          SQLStatement("SELECT count(*) FROM t WHERE CAST(n AS text) = ?", ["a\u{0}b"])]
        XCTAssertThrowsError(try db.write { _ = try db.batch(unsendable) }) { XCTAssertTrue("\($0)".contains("NUL"), "\($0)") }
        XCTAssertThrowsError(try db.snapshot(unsendable)) { XCTAssertTrue("\($0)".contains("NUL"), "\($0)") }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM t").int64, 300)
        XCTAssertEqual(try db.snapshot([SQLStatement("SELECT 1"), SQLStatement("SELECT 2")]).map { $0.first?[0] }, [.integer(1), .integer(2)])
    }

    /// A statement the server cannot type on its own (`? IS NULL`) in a pipelined prepare: the pipeline's prepare
    /// fails inside its savepoint, and each statement is prepared alone, with its values' types; the transaction
    /// goes on.
    func testBatchWithAStatementTheServerCannotTypeFallsBack() throws {
        let db = try TestPostgres.connect()
        let checks = [SQLStatement("SELECT CAST(? AS int8) + 1 AS x", [41]), SQLStatement("SELECT ? IS NULL AS x", [SQLValue.null]),
                      SQLStatement("SELECT ? IS NULL AS x", ["text"])]
        try db.write {
            let results = try db.batch(checks)
            XCTAssertEqual(results.map { $0.rows.first?[0] }, [.integer(42), .integer(1), .integer(0)])
            XCTAssertEqual(try db.scalar("SELECT 7").int64, 7, "the transaction is still usable")
        }
        XCTAssertEqual(try db.snapshot(checks).map { $0.first?[0] }, [.integer(42), .integer(1), .integer(0)])
    }

    /// `existingTables` asks once for several names, as `tableExists` would for each.
    func testExistingTables() throws {
        let db = try TestPostgres.connect()
        let name = TestPostgres.uniqueTable("present")
        try db.execute("CREATE TEMP TABLE \(name) (n int)")
        XCTAssertEqual(try db.existingTables([name, "absent_\(name)", "Robert'); DROP TABLE x;--"]), [name])
        XCTAssertEqual(try db.existingTables([]), [])
    }

    /// The catalog for several tables at once says what it says for each table alone; a missing table is left out.
    func testCatalogOfSeveralTablesAtOnce() throws {
        let db = try TestPostgres.connect()
        let parent = TestPostgres.uniqueTable("Parent \"odd\""), child = TestPostgres.uniqueTable("child")
        try db.executeScript("""
            CREATE TEMP TABLE \(PostgresConnection.quote(parent)) (id text PRIMARY KEY, name text NOT NULL);
            CREATE TEMP TABLE \(child) (n int8 PRIMARY KEY, parent_id text REFERENCES \(PostgresConnection.quote(parent)) (id) ON DELETE CASCADE,
                                       other text REFERENCES \(PostgresConnection.quote(parent)) (id));
            """)
        let tables = [parent, child, "absent_\(child)"]
        let columns = try db.columns(ofEach: tables)
        XCTAssertEqual(columns, [parent: try db.columns(of: parent), child: try db.columns(of: child)])
        XCTAssertEqual(columns[parent]?.map(\.name), ["id", "name"])
        XCTAssertEqual(columns[child]?.map(\.primaryKeyPosition), [1, 0, 0])
        let keys = try db.foreignKeys(ofEach: tables)
        XCTAssertEqual(keys, [child: try db.foreignKeys(of: child)])
        XCTAssertEqual(keys[child]?.map(\.column).sorted(), ["other", "parent_id"])
        XCTAssertEqual(keys[child]?.first { $0.column == "parent_id" }?.onDelete, "CASCADE")
    }

    /// A second connection reading an exported snapshot sees exactly what the first sees, not a row committed since.
    func testASecondConnectionReadsTheExportedSnapshot() throws {
        let first = try TestPostgres.connect(), second = try TestPostgres.connect(), writer = try TestPostgres.connect()
        let table = TestPostgres.uniqueTable("snap")
        try writer.execute("CREATE TABLE \(table) (n int8)")
        defer { try? writer.execute("DROP TABLE \(table)") }
        try writer.execute("INSERT INTO \(table) VALUES (1)")
        try first.read {
            let id = try first.exportSnapshot()
            try writer.execute("INSERT INTO \(table) VALUES (2)")
            let seen = try second.read(snapshot: id) { try second.scalar("SELECT count(*) FROM \(table)").int64 }
            XCTAssertEqual(seen, 1, "the row committed after the export is not in the snapshot")
        }
        XCTAssertEqual(try second.scalar("SELECT count(*) FROM \(table)").int64, 2)
        for hostile in ["", "x'; DROP TABLE \(table); --", "0000-1'"] {
            XCTAssertThrowsError(try second.read(snapshot: hostile) {}, hostile)
        }
        XCTAssertFalse(second.isInTransaction)
    }

    func testCaughtStatementFailureStillRollsBackTheTransaction() throws {
        let db = try TestPostgres.connect()
        try db.execute("CREATE TEMP TABLE t (v int4)")
        XCTAssertThrowsError(try db.write {
            try db.execute("INSERT INTO t VALUES (1)")
            _ = try? db.execute("INSERT INTO t VALUES (1/0)")
        }) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, PostgresSQLState.inFailedSQLTransaction, "\(error)")
        }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM t").int64, 0)
    }

    func testUniqueViolationNamesTheConstraintNotTheValue() throws {
        let db = try TestPostgres.connect()
        try db.execute("CREATE TEMP TABLE people (email text CONSTRAINT people_email_key UNIQUE)")
        let email = "alice.secret@example.com"
        try db.execute("INSERT INTO people VALUES ($1)", [email])
        XCTAssertThrowsError(try db.write { try db.execute("INSERT INTO people VALUES ($1)", [email]) }) { error in
            guard let error = error as? PostgresError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .statement)
            XCTAssertEqual(error.sqlState, "23505")
            XCTAssertTrue(error.isUniqueViolation)
            XCTAssertTrue(error.isConstraintViolation)
            XCTAssertFalse(error.isSerializationFailure || error.isBusy || error.isReadOnly || error.isConnectionFailure)
            XCTAssertEqual(error.constraint, "people_email_key")
            XCTAssertEqual(error.table, "people")
            XCTAssertEqual(error.sql, "INSERT INTO people VALUES ($1)")
            for text in visibleTexts(of: error) { XCTAssertFalse(text.contains(email), "the bound value leaks: \(text)") }
        }
        XCTAssertThrowsError(try db.execute("INSERT INTO people VALUES (NULL), ($1)", [email])) {
            XCTAssertTrue(($0 as? PostgresError)?.isUniqueViolation ?? false)
        }
    }

    func testServerMessagesQuotingBoundValuesAreScrubbed() throws {
        let db = try TestPostgres.connect()
        let secret = "not-a-number-token-abc123"
        XCTAssertThrowsError(try db.scalar("SELECT $1::int4", [secret])) { error in
            guard let error = error as? PostgresError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.sqlState, "22P02")
            XCTAssertTrue(error.message.contains("***"), error.message)
            for text in visibleTexts(of: error) { XCTAssertFalse(text.contains(secret), "the bound value leaks: \(text)") }
        }
    }

    func testSerializationFailureBetweenTwoConnections() throws {
        let a = try TestPostgres.connect(), b = try TestPostgres.connect()
        let table = TestPostgres.uniqueTable("serial")
        try a.execute("CREATE TABLE \(table) (id int4 PRIMARY KEY, v int4)")
        defer { try? a.execute("DROP TABLE IF EXISTS \(table)") }
        try a.execute("INSERT INTO \(table) VALUES (1, 0), (2, 0)")

        // A reads, B changes the row and commits, A changes it too: A lost and must run again.
        XCTAssertThrowsError(try a.write(isolation: .serializable) {
            _ = try a.scalar("SELECT v FROM \(table) WHERE id = 1")
            try b.execute("UPDATE \(table) SET v = v + 1 WHERE id = 1")
            try a.execute("UPDATE \(table) SET v = v + 10 WHERE id = 1")
        }) { error in
            guard let error = error as? PostgresError else { return XCTFail("\(error)") }
            XCTAssertTrue(error.isSerializationFailure, "\(error)")
            XCTAssertEqual(error.sqlState, "40001")
        }
        XCTAssertFalse(a.isInTransaction)

        // Write skew: each reads both rows and changes the other's; the second to commit fails (here or at COMMIT).
        XCTAssertThrowsError(try a.write(isolation: .serializable) {
            _ = try a.scalar("SELECT sum(v) FROM \(table)")
            try b.write(isolation: .serializable) {
                _ = try b.scalar("SELECT sum(v) FROM \(table)")
                try b.execute("UPDATE \(table) SET v = v + 1 WHERE id = 2")
            }
            try a.execute("UPDATE \(table) SET v = v + 1 WHERE id = 1")
        }) { XCTAssertTrue(($0 as? PostgresError)?.isSerializationFailure ?? false, "\($0)") }
        XCTAssertEqual(try a.rows("SELECT v FROM \(table) ORDER BY id").map { $0["v"] }, [.integer(1), .integer(1)])
    }

    func testBusyAndReadOnlyPredicates() throws {
        let a = try TestPostgres.connect(), b = try TestPostgres.connect()
        let table = TestPostgres.uniqueTable("busy")
        try a.execute("CREATE TABLE \(table) (id int4 PRIMARY KEY)")
        defer { try? a.execute("DROP TABLE IF EXISTS \(table)") }
        try a.execute("INSERT INTO \(table) VALUES (1)")
        try a.write {
            _ = try a.rows("SELECT id FROM \(table) FOR UPDATE")
            XCTAssertThrowsError(try b.rows("SELECT id FROM \(table) FOR UPDATE NOWAIT")) { error in
                XCTAssertTrue((error as? PostgresError)?.isBusy ?? false, "\(error)")
            }
        }
        XCTAssertThrowsError(try b.read { try b.execute("INSERT INTO \(table) VALUES (2)") }) { error in
            guard let error = error as? PostgresError else { return XCTFail("\(error)") }
            XCTAssertTrue(error.isReadOnly, "\(error)")
            XCTAssertEqual(error.sqlState, "25006")
        }
        XCTAssertEqual(try b.read { try b.scalar("SELECT count(*) FROM \(table)").int64 }, 1)
    }

    func testConnectionFailuresAreOneClearLine() throws {
        let base = try TestPostgres.uri()
        let missingSocket = "postgresql://gatehouse:Wr0ngPassw0rd@/gatehouse_test?host=/nonexistent-gatehouse-dir"
        XCTAssertThrowsError(try PostgresConnection(uri: missingSocket)) { error in
            guard let error = error as? PostgresError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .connection)
            XCTAssertTrue(error.isConnectionFailure)
            XCTAssertTrue(error.message.contains("/nonexistent-gatehouse-dir"), error.message)
            XCTAssertEqual(error.store, "postgresql://gatehouse:***@/gatehouse_test?host=/nonexistent-gatehouse-dir")
            for text in visibleTexts(of: error) {
                XCTAssertFalse(text.contains("Wr0ngPassw0rd"))
                XCTAssertFalse(text.contains("\n"))
            }
        }
        let noDatabase = try TestPostgres.uri(user: "gatehouse", password: nil).replacingOccurrences(of: "/\(base.database ?? "")?", with: "/no_such_db?")
        XCTAssertThrowsError(try PostgresConnection(uri: noDatabase)) { error in
            XCTAssertTrue((error as? PostgresError)?.message.contains("no_such_db") ?? false, "\(error)")
        }
    }

    func testServerGoingAwayIsAConnectionFailure() throws {
        let victim = try TestPostgres.connect(), killer = try TestPostgres.connect()
        let pid = try victim.scalar("SELECT pg_backend_pid()")
        try victim.execute("CREATE TEMP TABLE t (v int4)")
        XCTAssertThrowsError(try victim.write {
            try victim.execute("INSERT INTO t VALUES (1)")
            XCTAssertEqual(try killer.scalar("SELECT pg_terminate_backend($1::int4)", [pid]), .integer(1))
            try victim.execute("INSERT INTO t VALUES (2)")
        }) { error in
            guard let error = error as? PostgresError else { return XCTFail("\(error)") }
            XCTAssertTrue(error.isConnectionFailure, "\(error)")
            XCTAssertFalse(error.description.contains("\n"))
        }
        XCTAssertFalse(victim.isInTransaction)
        XCTAssertThrowsError(try victim.scalar("SELECT 1")) { XCTAssertTrue(($0 as? PostgresError)?.isConnectionFailure ?? false, "\($0)") }
    }
}

/// `forEach` streams (libpq's single-row mode) and leaves the connection ready whatever happens mid-result.
final class PostgresStreamingTests: XCTestCase {
    func testRowsArriveInOrderAndTheConnectionIsReadyAfterAnEarlyStop() throws {
        let db = try TestPostgres.connect()
        var seen = 0
        try db.forEach("SELECT g AS n FROM generate_series(1, ?) AS g", [200_000]) { row in
            seen += 1
            XCTAssertEqual(row["n"].int64, Int64(seen))
        }
        XCTAssertEqual(seen, 200_000)

        struct Enough: Error {}
        seen = 0
        XCTAssertThrowsError(try db.forEach("SELECT g FROM generate_series(1, 100000) AS g", []) { _ in
            seen += 1
            if seen == 10 { throw Enough() }
        }) { XCTAssertTrue($0 is Enough, "\($0)") }
        XCTAssertEqual(seen, 10)
        XCTAssertEqual(try db.scalar("SELECT 41 + 1"), .integer(42))
    }

    func testAnErrorMidResultIsThrownAfterTheRowsBeforeIt() throws {
        let db = try TestPostgres.connect()
        var seen = 0
        XCTAssertThrowsError(try db.forEach("SELECT 1 / (1000 - g) AS v FROM generate_series(1, 2000) AS g", []) { _ in seen += 1 }) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, "22012", "\(error)")
        }
        XCTAssertGreaterThan(seen, 0)
        XCTAssertLessThan(seen, 1000)
        XCTAssertEqual(try db.scalar("SELECT 1"), .integer(1))
        // Inside a transaction the failure aborts it, as any failed statement does, and nothing is committed.
        let table = TestPostgres.uniqueTable("stream")
        try db.execute("CREATE TABLE \(table) (v int8)")
        defer { try? db.execute("DROP TABLE IF EXISTS \(table)") }
        XCTAssertThrowsError(try db.write {
            try db.execute("INSERT INTO \(table) VALUES (1)")
            try db.forEach("SELECT 1 / (10 - g) FROM generate_series(1, 20) AS g", []) { _ in }
        })
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM \(table)"), .integer(0))
    }
}

/// `copy(into:columns:values:)` loads rows as `INSERT` would store them, escapes included, and all or nothing.
final class PostgresCopyTests: XCTestCase {
    func testCopiedRowsReadBackAsBound() throws {
        let db = try TestPostgres.connect()
        let table = TestPostgres.uniqueTable("copy")
        try db.execute("CREATE TABLE \(table) (id int8 PRIMARY KEY, t text, b boolean, r float8, y bytea, at timestamptz)")
        defer { try? db.execute("DROP TABLE IF EXISTS \(table)") }
        let hostile = "tab\there, new\nline, cr\r, back\\slash \\N, 'quote', \"dq\", Zoë 🎉"
        let rows: [[SQLValue]] = [
            [.integer(1), .text(hostile), .integer(1), .real(0.1), .blob([0, 255, 16]), .text("2026-11-30T03:48:03.123Z")],
            [.integer(2), .null, .integer(0), .real(-1e308), .blob([]), .null],
            [.integer(3), .text(""), .null, .null, .null, .text("2025-01-01T00:00:00.000Z")],
            // Integers are written digit by digit: the extremes, zero and the powers of ten around a digit more.
            [.integer(Int64.min), .null, .null, .null, .null, .null], [.integer(Int64.max), .null, .null, .null, .null, .null],
            [.integer(0), .null, .null, .null, .null, .null], [.integer(-10), .null, .null, .null, .null, .null],
            [.integer(9), .null, .null, .null, .null, .null], [.integer(100), .null, .null, .null, .null, .null],
        ]
        XCTAssertEqual(try db.copy(into: table, columns: ["id", "t", "b", "r", "y", "at"], values: rows.flatMap { $0 }[...]), 9)
        XCTAssertEqual(try db.rows("SELECT id FROM \(table) WHERE id NOT IN (1, 2, 3) ORDER BY id").map { $0["id"] },
                       [.integer(Int64.min), .integer(-10), .integer(0), .integer(9), .integer(100), .integer(Int64.max)])
        let back = try db.rows("SELECT id, t, b, r, y, at FROM \(table) WHERE id IN (1, 2, 3) ORDER BY id")
        XCTAssertEqual(back.map { $0["t"] }, [.text(hostile), .null, .text("")])
        XCTAssertEqual(back.map { $0["b"] }, [.integer(1), .integer(0), .null])
        XCTAssertEqual(back.map { $0["r"] }, [.real(0.1), .real(-1e308), .null])
        XCTAssertEqual(back.map { $0["y"] }, [.blob([0, 255, 16]), .blob([]), .null])
        XCTAssertEqual(back[0]["at"], .text("2026-11-30 03:48:03.123+00"))
    }

    func testAFailedCopyLoadsNothingAndLeavesTheConnectionReady() throws {
        let db = try TestPostgres.connect()
        let table = TestPostgres.uniqueTable("copyfail")
        try db.execute("CREATE TABLE \(table) (id int8 PRIMARY KEY, t text)")
        defer { try? db.execute("DROP TABLE IF EXISTS \(table)") }
        // A duplicate key in the middle: the server refuses the whole COPY.
        XCTAssertThrowsError(try db.copy(into: table, columns: ["id", "t"], values: [.integer(1), .text("a"), .integer(1), .text("b")][...])) { error in
            XCTAssertTrue((error as? PostgresError)?.isUniqueViolation ?? false, "\(error)")
        }
        // A NUL in a text value: refused before the server sees it.
        XCTAssertThrowsError(try db.copy(into: table, columns: ["id", "t"], values: [.integer(2), .text("nul\u{0}here")][...])) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, "22021", "\(error)")
        }
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM \(table)"), .integer(0))
        XCTAssertEqual(try db.scalar("SELECT 1"), .integer(1))
    }
}
