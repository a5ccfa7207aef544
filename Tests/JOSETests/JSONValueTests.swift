import JOSE
import XCTest

final class JSONValueTests: XCTestCase {
    func testBooleansAndNumbersStayApart() throws {
        let object = try JSONValue.parseObject(Array(#"{"t":true,"f":false,"one":1,"zero":0,"half":0.5,"n":null}"#.utf8))
        XCTAssertEqual(object["t"], .bool(true))
        XCTAssertEqual(object["f"], .bool(false))
        XCTAssertEqual(object["one"], .number(1))
        XCTAssertEqual(object["zero"], .number(0))
        XCTAssertEqual(object["half"], .number(0.5))
        XCTAssertEqual(object["n"], .null)
        XCTAssertNil(object["one"]?.boolValue)
        XCTAssertNil(object["t"]?.intValue)
    }

    func testNestedValuesAndAccessors() throws {
        let value = try JSONValue.parse(Array(#"{"a":[1,"two",{"three":3}],"s":"x"}"#.utf8))
        XCTAssertEqual(value["a"]?.arrayValue?.count, 3)
        XCTAssertEqual(value["a"]?.arrayValue?[1].stringValue, "two")
        XCTAssertEqual(value["a"]?.arrayValue?[2]["three"]?.intValue, 3)
        XCTAssertEqual(value["s"]?.stringValue, "x")
        XCTAssertNil(value["missing"])
    }

    func testParseErrors() {
        XCTAssertThrowsError(try JSONValue.parse(Array("{".utf8))) { XCTAssertEqual($0 as? JSONParseError, .notJSON) }
        XCTAssertThrowsError(try JSONValue.parseObject(Array("[1]".utf8))) {
            XCTAssertEqual($0 as? JSONParseError, .notAnObject)
        }
        XCTAssertThrowsError(try JSONValue.parseObject(Array("\"s\"".utf8)))
    }

    func testEncodingIsCompactSortedAndWritesIntegers() throws {
        let value: JSONValue = ["exp": 1_715_000_000, "iat": .integer(Int64(1_700_000_000)), "b": true, "a": nil,
                                "f": 1.5, "l": [1, "x"], "big": 12_345_678_901]
        let text = String(decoding: try value.encoded(), as: UTF8.self)
        XCTAssertEqual(text,
                       #"{"a":null,"b":true,"big":12345678901,"exp":1715000000,"f":1.5,"iat":1700000000,"l":[1,"x"]}"#)
    }

    func testStringEscapingRoundTrips() throws {
        let tricky = "quote \" backslash \\ slash / newline \n tab \t nul \u{0} bell \u{7} é 漢字 😀 \u{2028}"
        let encoded = try JSONValue.encode(object: ["s": .string(tricky)])
        XCTAssertEqual(try JSONValue.parseObject(encoded)["s"]?.stringValue, tricky)
        XCTAssertTrue(String(decoding: encoded, as: UTF8.self).contains(#"\u0000"#))
    }

    func testNonFiniteNumbersAreRefused() {
        XCTAssertThrowsError(try JSONValue.number(.nan).encoded())
        XCTAssertThrowsError(try JSONValue.number(.infinity).encoded())
    }
}
