@testable import D1Engine
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// `?` and `?NNN` become `$n` for Postgres; a `?` in a literal, an identifier or a comment stays as it is.
final class PostgresPlaceholderTests: XCTestCase {
    func testPlaceholdersAreNumberedOutsideLiteralsIdentifiersAndComments() {
        let cases: [(String, String)] = [
            ("SELECT ?", "SELECT $1"),
            ("SELECT ?, ?, ?", "SELECT $1, $2, $3"),
            ("WHERE a < ?1 AND (b IS NULL OR b < ?1) LIMIT ?2", "WHERE a < $1 AND (b IS NULL OR b < $1) LIMIT $2"),
            ("SELECT '?', 'it''s ?', ?", "SELECT '?', 'it''s ?', $1"),
            (#"SELECT "odd?name", "a""?" FROM t WHERE x = ?"#, #"SELECT "odd?name", "a""?" FROM t WHERE x = $1"#),
            ("SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"),
            ("SELECT /* ? */ ?", "SELECT /* ? */ $1"),
            ("SELECT $1, $2", "SELECT $1, $2"),
            ("SELECT 'unterminated ?", "SELECT 'unterminated ?"),
            ("SELECT ?10", "SELECT $10"),
            ("SELECT 'é?' || ?", "SELECT 'é?' || $1"),
        ]
        for (sql, expected) in cases {
            XCTAssertEqual(PostgresPlaceholders.numbered(sql), expected, sql)
        }
    }

    func testNumberedPlaceholdersBindOnTheServer() throws {
        let db = try TestPostgres.connect()
        XCTAssertEqual(try db.row("SELECT ?1 AS a, ?2 AS b, ?1 AS c", ["x", 7]).map { [$0["a"], $0["b"], $0["c"]] },
                       [.text("x"), .integer(7), .text("x")])
        XCTAssertEqual(try db.scalar("SELECT '?' || ?", ["!"]), .text("?!"))
    }
}
