import XCTest
import JOSE


/// SHA256.Portable (the migration checksum) is SHA-256 in plain Swift: checked against FIPS 180-2's published examples and
/// against OpenSSL (through JOSE), including at every length around the padding boundaries.
final class SHA256PortableTests: XCTestCase {
    func testPublishedVectors() {
        XCTAssertEqual(SHA256.Portable.hex([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.Portable.hex(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.Portable.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(SHA256.Portable.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testAgreesWithOpenSSLAtEveryLengthUpToThreeBlocks() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            XCTAssertEqual(SHA256.Portable.hex(bytes), SHA256.hex(bytes), "length \(length)")
        }
    }
}
