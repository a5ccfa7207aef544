@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// `JavaScriptString` against answers JavaScript itself gave (Tests/Fixtures/js-strings/js-strings.json, made by
/// generate.js beside it with Debian's nodejs): every code point whose toLowerCase is not itself, context-dependent
/// strings, and the email comparisons Better Auth makes.
final class JavaScriptStringTests: XCTestCase {
    struct Table: Decodable {
        struct Lowered: Decodable { let input: [UInt16]; let lower: [UInt16] }
        struct Comparison: Decodable { let a: [UInt16]; let b: [UInt16]; let equal: Bool }
        let node: String
        let unicode: String
        let mappings: [[JSONNumberOrUnits]]
        let lowered: [Lowered]
        let comparisons: [Comparison]
    }

    /// A mapping row is `[codePoint, [units…]]`.
    enum JSONNumberOrUnits: Decodable {
        case number(UInt32), units([UInt16])
        init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(UInt32.self) { self = .number(n) } else { self = .units(try c.decode([UInt16].self)) }
        }
    }

    static let table: Table = {
        let url = Fixtures.directory.appendingPathComponent("js-strings/js-strings.json")
        return try! JSONDecoder().decode(Table.self, from: Data(contentsOf: url))
    }()

    func string(_ units: [UInt16]) -> String { String(decoding: units, as: UTF16.self) }
    func units(_ text: String) -> [UInt16] { Array(text.utf16) }

    /// Code points assigned after the Unicode version of the node that made the table would differ only in Swift's
    /// newer tables; none may differ among the ones node knows.
    func testEveryCodePointLowercasesAsJavaScriptDoes() throws {
        let table = Self.table
        var expected: [UInt32: [UInt16]] = [:]
        for row in table.mappings {
            guard case .number(let cp)? = row.first, case .units(let lower)? = row.last else { return XCTFail("bad row") }
            expected[cp] = lower
        }
        XCTAssertGreaterThan(expected.count, 1400)
        var mismatches: [String] = []
        for cp in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(cp) else { continue }
            let text = String(Character(scalar))
            let ours = units(JavaScriptString.toLowerCase(text))
            let theirs = expected[cp] ?? units(text)
            if ours != theirs {
                // Swift's tables may be newer than node's ICU: a letter node does not know it leaves as it is.
                if expected[cp] == nil, let age = scalar.properties.age, "\(age.major).\(age.minor)".compare(table.unicode, options: .numeric) == .orderedDescending { continue }
                mismatches.append(String(format: "U+%04X", cp))
            }
        }
        XCTAssertEqual(mismatches, [], "node \(table.node), Unicode \(table.unicode)")
    }

    func testContextDependentStringsLowercaseAsJavaScriptDoes() {
        for row in Self.table.lowered {
            XCTAssertEqual(units(JavaScriptString.toLowerCase(string(row.input))), row.lower, string(row.input))
        }
        // Spot checks of the table's rows, readable: final sigma; İ keeps its dot as U+0307.
        XCTAssertEqual(JavaScriptString.toLowerCase("ΟΔΟΣ@example.gr"), "οδος@example.gr")
        XCTAssertEqual(JavaScriptString.toLowerCase("ΣΑΣ"), "σας")
        XCTAssertEqual(Array(JavaScriptString.toLowerCase("\u{130}").unicodeScalars), ["i", "\u{307}"])
        XCTAssertNotEqual("ΟΔΟΣ".lowercased(), "οδος", "Swift's own lowercased() is not JavaScript's")
    }

    func testEmailComparisonsAgreeWithJavaScript() {
        for row in Self.table.comparisons {
            XCTAssertEqual(JavaScriptString.sameEmail(string(row.a), string(row.b)), row.equal, "\(string(row.a)) vs \(string(row.b))")
        }
        // Composed vs decomposed: one Character to Swift, two emails to Better Auth.
        XCTAssertTrue("jos\u{E9}@example.com" == "jose\u{301}@example.com")
        XCTAssertFalse(JavaScriptString.sameEmail("jos\u{E9}@example.com", "jose\u{301}@example.com"))
        XCTAssertTrue(JavaScriptString.differOnlyByNormalisation("Jos\u{E9}@example.com", "jose\u{301}@example.com"))
        XCTAssertTrue(JavaScriptString.sameEmail("\u{212A}ate@example.com", "kate@example.com"), "the Kelvin sign lowercases to ASCII k")
        XCTAssertFalse(JavaScriptString.sameEmail("STRASSE@example.de", "straße@example.de"))
        XCTAssertFalse(JavaScriptString.sameEmail("Inci@example.com", "\u{131}nci@example.com"), "no Turkish locale rules")
        XCTAssertFalse(JavaScriptString.sameEmail("\u{FF21}na@example.com", "ana@example.com"), "full-width letters stay full-width")
    }
}
