@testable import D1Engine
import Foundation
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// Password logins against the test cluster's `gatehouse_pw` role (SCRAM; its password is random per ops/test run):
/// the password works from the URI and from PGPASSWORD, and appears in nothing a caller can see.
final class PostgresPasswordTests: XCTestCase {
    func testPasswordFromPGPASSWORDLogsIn() throws {
        let role = try TestPostgres.passwordRole()
        let uri = try TestPostgres.uri(user: role.user, password: nil)
        let db = try withEnvironment("PGPASSWORD", role.password) { try PostgresConnection(uri: uri) }
        XCTAssertEqual(try db.scalar("SELECT current_user").string, role.user)
        XCTAssertFalse(db.description.contains(role.password))
        XCTAssertFalse(db.uri.redacted.contains("***"), "no password in the URI, none to mask")
    }

    func testWithoutAnyPasswordTheLoginIsRefused() throws {
        let role = try TestPostgres.passwordRole()
        let uri = try TestPostgres.uri(user: role.user, password: nil)
        unsetenv("PGPASSWORD")
        // libpq would otherwise read ~/.pgpass: point it at a file that does not exist.
        try withEnvironment("PGPASSFILE", "/nonexistent-gatehouse-pgpass") {
            XCTAssertThrowsError(try PostgresConnection(uri: uri)) { error in
                guard let error = error as? PostgresError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.kind, .connection)
                XCTAssertTrue(error.message.contains("no password supplied"), error.message)
            }
        }
    }

    func testPasswordInTheURILogsInAndIsNeverShown() throws {
        let role = try TestPostgres.passwordRole()
        let uri = try TestPostgres.uri(user: role.user, password: role.password)
        let db = try PostgresConnection(uri: uri)
        XCTAssertEqual(try db.scalar("SELECT current_user").string, role.user)
        var dumped = ""
        dump(db.uri, to: &dumped)
        for text in [db.description, "\(db)", String(reflecting: db), db.uri.redacted, "\(db.uri)", String(reflecting: db.uri), dumped] {
            XCTAssertFalse(text.contains(role.password), "the password appears")
        }
        XCTAssertTrue(db.uri.redacted.hasPrefix("postgresql://\(role.user):***@/"), db.uri.redacted)

        // A failing statement on that connection names the store without the password.
        XCTAssertThrowsError(try db.execute("SELECT * FROM no_such_table_\(UInt16.random(in: 0...999))")) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, "42P01")
            for text in visibleTexts(of: error) { XCTAssertFalse(text.contains(role.password), "the password appears") }
        }
        // Neither does a statement that quotes the password as a value (the server echoes it in its message).
        XCTAssertThrowsError(try db.scalar("SELECT $1::int4", [role.password])) { error in
            for text in visibleTexts(of: error) { XCTAssertFalse(text.contains(role.password), "the password appears") }
        }
    }

    func testWrongPasswordsAreRefusedWithoutBeingEchoed() throws {
        let role = try TestPostgres.passwordRole()
        let wrong = "Wrong-\(role.password)-Wrong"
        for (uri, environment) in [(try TestPostgres.uri(user: role.user, password: wrong), nil),
                                   (try TestPostgres.uri(user: role.user, password: nil), wrong)] {
            let attempt = { try PostgresConnection(uri: uri) }
            let run: () throws -> PostgresConnection = environment.map { value in { try withEnvironment("PGPASSWORD", value, attempt) } } ?? attempt
            XCTAssertThrowsError(try run()) { error in
                guard let error = error as? PostgresError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.kind, .connection)
                XCTAssertTrue(error.isConnectionFailure)
                XCTAssertTrue(error.message.contains("password authentication failed for user \"\(role.user)\""), error.message)
                for text in visibleTexts(of: error) {
                    XCTAssertFalse(text.contains(wrong), "the wrong password appears")
                    XCTAssertFalse(text.contains(role.password), "the right password appears")
                    XCTAssertFalse(text.contains("\n"), "not one line")
                }
            }
        }
    }
}
