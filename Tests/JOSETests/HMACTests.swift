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

    /// RFC 2202 §3, test cases 1, 2 and 6 (a key longer than a block).
    func testHMACSHA1RFC2202() {
        XCTAssertEqual(Hex.encode(HMAC.sha1(key: [UInt8](repeating: 0x0B, count: 20), data: Array("Hi There".utf8))),
                       "b617318655057264e28bc0b6fb378c8ef146be00")
        XCTAssertEqual(Hex.encode(HMAC.sha1(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))),
                       "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        XCTAssertEqual(Hex.encode(HMAC.sha1(key: [UInt8](repeating: 0xAA, count: 80), data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))),
                       "aa4ae5e15272d00e95705637ce8a3b55ed402112")
    }

    func testHMACSHA1MatchesPython() throws {
        let key = Array("gatehouse totp key".utf8), data: [UInt8] = [0, 0, 0, 0, 3, 0x2a, 0xbc, 0xde]
        let python = try TestPython.run("import hmac, hashlib, sys; print(hmac.new(bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), hashlib.sha1).hexdigest())",
                                        [Hex.encode(key), Hex.encode(data)])
        XCTAssertEqual(Hex.encode(HMAC.sha1(key: key, data: data)), python)
        XCTAssertEqual(HMAC.sha1(key: [], data: []).count, 20)
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
