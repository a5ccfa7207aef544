@testable import D1Engine
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// How a statement goes to D1's API (values as literals or string parameters) and how its answers are read, checked
/// against the rules of the API reference: params are strings, at most 100 a statement; numbers come back as
/// JavaScript prints them.
final class D1StatementTests: XCTestCase {
    func testTextIsAParameterAndEveryOtherValueItsLiteral() throws {
        let statement = try D1Statement("SELECT ?, ?, ?, ?, ?, ?", [.text("it's"), .integer(-5), .real(1.5), .null, .blob([0, 0xAB]), .integer(.min)])
        XCTAssertEqual(statement.sql, "SELECT ?, (-5), 1.5, NULL, X'00AB', (-9223372036854775807-1)")
        XCTAssertEqual(statement.params, ["it's"])
    }

    func testPlaceholdersInLiteralsNamesAndCommentsAreLeftAlone() throws {
        let sql = "SELECT '?', \"a?\", `b?`, [c?] -- ?\n, ? /* ? */"
        let statement = try D1Statement(sql, [.integer(7)])
        XCTAssertEqual(statement.sql, "SELECT '?', \"a?\", `b?`, [c?] -- ?\n, 7 /* ? */")
    }

    func testNumberedPlaceholdersTakeTheirValue() throws {
        let statement = try D1Statement("SELECT ?2, ?1, ?2", [.text("one"), .integer(2)])
        XCTAssertEqual(statement.sql, "SELECT 2, ?, 2")
        XCTAssertEqual(statement.params, ["one"])
    }

    func testPastAHundredParametersTextIsAnEscapedLiteral() throws {
        let values = (0..<102).map { SQLValue.text("v'\($0)") } + [.text("a\0b")]
        let statement = try D1Statement("VALUES (" + Array(repeating: "?", count: values.count).joined(separator: ", ") + ")", values)
        XCTAssertEqual(statement.params.count, 100)
        XCTAssertTrue(statement.sql.hasSuffix("'v''100', 'v''101', ('a' || char(0) || 'b'))"), statement.sql)
    }

    func testTooFewValuesIsAnErrorNotATrap() {
        XCTAssertThrowsError(try D1Statement("SELECT ?, ?", [.integer(1)]))
    }

    func testWhatAStatementWritesAndReads() {
        XCTAssertTrue(D1Statement.isRead("  select 1"))
        XCTAssertTrue(D1Statement.isRead("PRAGMA table_info(\"user\")"))
        XCTAssertFalse(D1Statement.isRead("PRAGMA defer_foreign_keys = ON"))
        XCTAssertFalse(D1Statement.isRead("WITH x AS (SELECT 1) DELETE FROM t"))
        XCTAssertEqual(D1Statement.writtenTable("INSERT INTO \"gatehouse_audit\" (id) VALUES (1)"), "gatehouse_audit")
        XCTAssertEqual(D1Statement.writtenTable("UPDATE OR IGNORE account SET x = 1"), "account")
        XCTAssertEqual(D1Statement.writtenTable("DELETE FROM session WHERE 1"), "session")
        XCTAssertTrue(D1Statement.mentions("SELECT * FROM \"session\"", table: "session"))
        XCTAssertFalse(D1Statement.mentions("SELECT * FROM sessions", table: "session"))
        XCTAssertTrue(D1Statement.returnsRows("INSERT INTO t VALUES (1) returning id"))
    }

    func testAGuardNamesItselfWhenItFails() {
        let check = D1Guard.changed(1, number: 7)
        XCTAssertTrue(check.sql.contains("'gatehouse guard 7'"), check.sql)
        XCTAssertEqual(D1Guard.failed(in: "JSON path error near 'gatehouse guard 7': SQLITE_ERROR"), 7)
        XCTAssertEqual(D1Guard.failed(in: "bad JSON path: 'gatehouse guard 12'"), 12)
        XCTAssertNil(D1Guard.failed(in: "UNIQUE constraint failed: user.email"))
    }

    func testRowGuardsStayUnderTheStatementLimit() {
        let read = D1Statement(sql: "SELECT id, token FROM session WHERE userId = ?", params: ["u1"])
        let rows = (0..<2_000).map { [SQLValue.text("session-\($0)"), .text(String(repeating: "t", count: 80))] }
        let guards = D1Guard.sameRows(read, rows: rows, width: 2, firstNumber: 1)
        XCTAssertGreaterThan(guards.count, 2)
        XCTAssertTrue(guards.allSatisfy { $0.sql.utf8.count <= D1Statement.maxBytes && $0.params == ["u1"] })
    }

    func testAnswersAreReadExactlyOrRefused() throws {
        let json = try D1JSON.parse(Array(#"{"a": [1, -2.5e3, "x\u00e9\ud83d\ude00", null, true], "b": {}}"#.utf8))
        XCTAssertEqual(json["a"]?.array?.count, 5)
        XCTAssertEqual(json["a"]?.array?[2].string, "xé😀")
        XCTAssertEqual(json["a"]?.array?[1], .number("-2.5e3"))
        // A lone surrogate reads as U+FFFD, as JavaScript would print it replaced.
        XCTAssertEqual(try D1JSON.parse(Array(#""\ud800x""#.utf8)).string, "\u{FFFD}x")
        // A BLOB's bytes are kept as bytes, and read as the numbers they were; anything else in an array is a value.
        XCTAssertEqual(try D1JSON.parse(Array("[0, 171,255 ]".utf8)), .bytes([0, 171, 255]))
        XCTAssertEqual(try D1JSON.parse(Array("[0,171,255]".utf8)).array, [.number("0"), .number("171"), .number("255")])
        for mixed in ["[1,256]", "[1,-1]", "[1,1.5]", "[1,1e2]", "[1,\"a\"]", "[1,[2]]", "[]", "[1,null]"] {
            let parsed = try D1JSON.parse(Array(mixed.utf8))
            guard case .array = parsed else { return XCTFail("\(mixed): \(parsed)") }
        }
        XCTAssertEqual(try D1JSON.parse(Array(#"{"a":[[1,2],[3,"x"]],"b":[[]]}"#.utf8))["a"]?.array?.map { $0.array?.count }, [2, 2])
        for hostile in ["", "{", "[1,]", "[1,", "[1 2]", "[01]", "[1,01]", "01", "1.", "-", "\"\u{01}\"", String(repeating: "[", count: 100) + String(repeating: "]", count: 100), "nul"] {
            XCTAssertThrowsError(try D1JSON.parse(Array(hostile.utf8)), hostile)
        }
    }
}
