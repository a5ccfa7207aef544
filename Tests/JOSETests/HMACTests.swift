import JOSE
import XCTest

final class HMACTests: XCTestCase {
    func testRFC4231Case1() {
        let mac = HMAC.sha256(key: [UInt8](repeating: 0x0B, count: 20), data: Array("Hi There".utf8))
        XCTAssertEqual(Hex.encode(mac), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    func testRFC4231Case2() {
        let mac = HMAC.sha256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(Hex.encode(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testEmptyKeyAndMessageMatchPython() throws {
        let mac = HMAC.sha256(key: [], data: [])
        let python = try TestPython.run("import hmac, hashlib; print(hmac.new(b'', b'', hashlib.sha256).hexdigest())")
        XCTAssertEqual(Hex.encode(mac), python)
    }

    func testConstantTimeEquals() {
        XCTAssertTrue(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(constantTimeEquals([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(constantTimeEquals([1, 2, 3], [1, 2]))
        XCTAssertTrue(constantTimeEquals([UInt8](), []))
        XCTAssertTrue(constantTimeEquals("token", "token"))
        XCTAssertFalse(constantTimeEquals("token", "tokeN"))
    }
}
