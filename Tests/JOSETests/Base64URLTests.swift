import JOSE
import XCTest

final class Base64URLTests: XCTestCase {
    func testRFC4648Vectors() {
        // RFC 4648 §10, without padding.
        let vectors: [(String, String)] = [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64URL.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64URL.decode(encoded), Array(plain.utf8))
        }
    }

    func testURLSafeAlphabet() {
        XCTAssertEqual(Base64URL.encode([0xFB, 0xFF, 0xBF]), "-_-_")
        XCTAssertEqual(Base64URL.decode("-_-_"), [0xFB, 0xFF, 0xBF])
        XCTAssertEqual(Base64.encode([0xFB, 0xFF, 0xBF]), "+/+/")
    }

    func testRoundTripsEveryLength() throws {
        for length in 0..<70 {
            let bytes = try SecureRandom.bytes(length)
            XCTAssertEqual(Base64URL.decode(Base64URL.encode(bytes)), bytes)
            XCTAssertEqual(Base64.decode(Base64.encode(bytes)), bytes)
        }
    }

    func testRejectsPadding() {
        XCTAssertNil(Base64URL.decode("Zg=="))
        XCTAssertNil(Base64URL.decode("Zm8="))
        XCTAssertNil(Base64URL.decode("Zg="))
    }

    func testRejectsCharactersOutsideTheAlphabet() {
        XCTAssertNil(Base64URL.decode("Zm9v+g"))
        XCTAssertNil(Base64URL.decode("Zm9v/g"))
        XCTAssertNil(Base64URL.decode("Zm 9v"))
        XCTAssertNil(Base64URL.decode("Zm9v\n"))
        XCTAssertNil(Base64URL.decode("Zm9.v"))
        XCTAssertNil(Base64URL.decode("Zm9vé"))
    }

    func testRejectsImpossibleLengths() {
        XCTAssertNil(Base64URL.decode("Z"))
        XCTAssertNil(Base64URL.decode("Zm9vY"))
    }

    func testRejectsNonCanonicalTrailingBits() {
        // "Zg" is canonical for "f"; "Zh" carries a set bit that no encoder writes.
        XCTAssertNil(Base64URL.decode("Zh"))
        XCTAssertNil(Base64URL.decode("Zm9"))  // canonical is "Zm8"
        XCTAssertEqual(Base64URL.decode("Zm8"), Array("fo".utf8))
    }

    func testStandardBase64IsStrictToo() {
        XCTAssertEqual(Base64.decode("Zm9vYg=="), Array("foob".utf8))
        XCTAssertNil(Base64.decode("Zm9vYg"))  // PEM bodies are padded
        XCTAssertNil(Base64.decode("Zm9vYg=a"))
        XCTAssertNil(Base64.decode("Zg=a"))
        XCTAssertNil(Base64.decode("Z==="))
        XCTAssertNil(Base64.decode("Zm9v-_=="))
        XCTAssertNil(Base64.decode("Zh=="))
    }
}
