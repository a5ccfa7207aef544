@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

final class NamedChoiceTests: XCTestCase {
    enum Format: String, CaseIterable { case env, json }
    enum Kind: String, CaseIterable { case email, name, id, sub }
    enum Requirement: String, CaseIterable { case program_membership, services_id }

    func testExactFoldedAndDashedNamesParse() throws {
        XCTAssertEqual(try NamedChoice.parse("json", as: Format.self), .json)
        XCTAssertEqual(try NamedChoice.parse("JSON", as: Format.self), .json)
        XCTAssertEqual(try NamedChoice.parse("program-membership", as: Requirement.self), .program_membership)
    }

    func testRefusalsListTheChoicesInEachFrontEndsSpelling() {
        XCTAssertThrowsError(try NamedChoice.parse("yaml", as: Format.self)) { error in
            let refusal = error as! NamedChoice.Refusal
            XCTAssertEqual(refusal.message(field: "--format", echo: true), "--format must be env or json, got \"yaml\"")
            XCTAssertEqual(refusal.message(field: "\"format\"", echo: false), "\"format\" must be env or json")
        }
        XCTAssertThrowsError(try NamedChoice.parse("emial", as: Kind.self)) { error in
            let refusal = error as! NamedChoice.Refusal
            XCTAssertEqual(refusal.message(field: "?by", echo: false), "?by must be one of email, name, id, sub; did you mean email?")
            XCTAssertEqual(refusal.suggestion, "email")
        }
    }

    func testHostileGivenTextIsShortenedAndEscaped() {
        XCTAssertThrowsError(try NamedChoice.parse("\u{1B}[2J" + String(repeating: "x", count: 500), as: Format.self)) { error in
            let message = (error as! NamedChoice.Refusal).message(field: "--format", echo: true)
            XCTAssertFalse(message.unicodeScalars.contains("\u{1B}"), message)
            XCTAssertLessThan(message.count, 120, message)
        }
        XCTAssertThrowsError(try NamedChoice.parse("", as: Format.self))
    }
}

final class StoreFailureTests: XCTestCase {
    func testEachStoragePredicateGetsItsOwnWordsAndCode() {
        let cases: [(Int32, GatehouseError.Code, String)] = [
            (5, .busy, "stayed locked"), (6, .busy, "stayed locked"), (8, .readOnly, "read-only"),
            (11, .notADatabase, "not a SQLite database"), (26, .notADatabase, "not a SQLite database"),
            (13, .diskFull, "is full"), (14, .cannotOpen, "cannot open"), (1, .storeError, "answered"),
        ]
        for (code, expected, words) in cases {
            let error = GatehouseError(storeFailure: DatabaseError(code: code, message: "m", sql: "SELECT secret FROM t WHERE x = 'hunter2'", path: "/s.sqlite"))
            XCTAssertEqual(error.code, expected, "\(code)")
            XCTAssertTrue(error.message.contains(words) && error.message.contains("/s.sqlite"), error.message)
            XCTAssertFalse(error.description.contains("hunter2") || error.description.contains("SELECT"), error.description)
        }
    }

    /// A lock wait that ran out and a deadlock the server broke are both `busy`, each said in its own words.
    func testPostgresLockTimeoutsAndDeadlocksAreBusyInTheirOwnWords() {
        let cases: [(String, String)] = [("55P03", "stayed locked by another session"), ("40P01", "to break a deadlock")]
        for (state, words) in cases {
            let error = GatehouseError(storeFailure: PostgresError(kind: .statement, sqlState: state, message: "m", sql: "SELECT 'hunter2'", store: "postgresql://h/db"),
                                       storePath: "postgresql://h/db")
            XCTAssertEqual(error.code, .busy, state)
            XCTAssertTrue(error.message.contains(words), error.message)
            XCTAssertFalse(error.description.contains("hunter2"), error.description)
        }
    }

    func testOperatorFacingPassesGatehouseErrorsAndLeavesOthers() {
        struct Other: Error {}
        XCTAssertEqual(GatehouseError.operatorFacing(GatehouseError.invalid("x")), .invalid("x"))
        XCTAssertNil(GatehouseError.operatorFacing(Other()))
        XCTAssertEqual(GatehouseError.operatorFacing(DatabaseError(code: 5, message: "busy"), storePath: "a.sqlite")?.code, .busy)
    }
}
