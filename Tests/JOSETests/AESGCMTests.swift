import Foundation
import JOSE
import XCTest

final class AESGCMTests: XCTestCase {
    let key = try! SecureRandom.bytes(32)
    let associatedData = Array("gatehouse_apple_keys:ABC123DEFG".utf8)
    let plaintext = Array("-----BEGIN PRIVATE KEY-----\nnot really a key\n-----END PRIVATE KEY-----\n".utf8)

    func testRoundTrip() throws {
        let box = try AESGCM.seal(plaintext, key: key, associatedData: associatedData)
        XCTAssertEqual(box.count, plaintext.count + AESGCM.overhead)
        XCTAssertEqual(box[0], 1)
        XCTAssertEqual(try AESGCM.open(box, key: key, associatedData: associatedData), plaintext)
    }

    func testEmptyPlaintextAndEmptyAssociatedData() throws {
        let box = try AESGCM.seal([], key: key, associatedData: [])
        XCTAssertEqual(box.count, AESGCM.overhead)
        XCTAssertEqual(try AESGCM.open(box, key: key, associatedData: []), [])
    }

    func testNoncesAreFresh() throws {
        let first = try AESGCM.seal(plaintext, key: key, associatedData: associatedData)
        let second = try AESGCM.seal(plaintext, key: key, associatedData: associatedData)
        XCTAssertNotEqual(first[1..<13], second[1..<13])
        XCTAssertNotEqual(first, second)
    }

    func testWrongKeyFails() throws {
        let box = try AESGCM.seal(plaintext, key: key, associatedData: associatedData)
        XCTAssertThrowsError(try AESGCM.open(box, key: SecureRandom.bytes(32), associatedData: associatedData)) {
            XCTAssertEqual($0 as? AESGCM.Error, .authenticationFailed)
        }
    }

    func testEveryFlippedBitFails() throws {
        let box = try AESGCM.seal(Array(plaintext.prefix(8)), key: key, associatedData: associatedData)
        for index in 1..<box.count {
            for bit in [0, 7] {
                var altered = box
                altered[index] ^= 1 << bit
                XCTAssertThrowsError(try AESGCM.open(altered, key: key, associatedData: associatedData)) {
                    XCTAssertEqual($0 as? AESGCM.Error, .authenticationFailed, "byte \(index) bit \(bit)")
                }
            }
        }
    }

    func testWrongAssociatedDataFails() throws {
        let box = try AESGCM.seal(plaintext, key: key, associatedData: associatedData)
        XCTAssertThrowsError(try AESGCM.open(box, key: key, associatedData: Array("elsewhere".utf8))) {
            XCTAssertEqual($0 as? AESGCM.Error, .authenticationFailed)
        }
        XCTAssertThrowsError(try AESGCM.open(box, key: key, associatedData: []))
    }

    func testShortTruncatedAndVersionedBoxes() throws {
        let box = try AESGCM.seal(plaintext, key: key, associatedData: associatedData)
        XCTAssertThrowsError(try AESGCM.open(Array(box.prefix(AESGCM.overhead - 1)), key: key,
                                             associatedData: associatedData)) {
            XCTAssertEqual($0 as? AESGCM.Error, .boxTooShort)
        }
        XCTAssertThrowsError(try AESGCM.open([], key: key, associatedData: associatedData)) {
            XCTAssertEqual($0 as? AESGCM.Error, .boxTooShort)
        }
        XCTAssertThrowsError(try AESGCM.open(Array(box.dropLast()), key: key, associatedData: associatedData)) {
            XCTAssertEqual($0 as? AESGCM.Error, .authenticationFailed)
        }
        var future = box
        future[0] = 2
        XCTAssertThrowsError(try AESGCM.open(future, key: key, associatedData: associatedData)) {
            XCTAssertEqual($0 as? AESGCM.Error, .unsupportedVersion(2))
        }
    }

    func testKeySizeIsChecked() {
        XCTAssertThrowsError(try AESGCM.seal(plaintext, key: Array(key.prefix(16)), associatedData: [])) {
            XCTAssertEqual($0 as? AESGCM.Error, .invalidKeySize(16))
        }
        XCTAssertThrowsError(try AESGCM.open([1] + [UInt8](repeating: 0, count: 40), key: [], associatedData: []))
    }

    func testErrorsNeverShowContent() {
        let all: [AESGCM.Error] = [.invalidKeySize(16), .boxTooShort, .unsupportedVersion(9), .authenticationFailed]
        for error in all {
            XCTAssertFalse(error.description.contains("PRIVATE KEY"))
        }
    }

    func testPythonCryptographyOpensAGatehouseBoxAndViceVersa() throws {
        let directory = try TemporaryDirectory()
        let box = try AESGCM.seal(plaintext, key: key, associatedData: associatedData)
        let boxPath = try directory.write("box", bytes: box)
        let keyPath = try directory.write("key", bytes: key)
        let adPath = try directory.write("ad", bytes: associatedData)
        let pythonBoxPath = directory.path("python-box")
        let output = try TestPython.run("""
            import os, sys
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            box, key, ad = (open(p, "rb").read() for p in sys.argv[1:4])
            assert box[0] == 1
            nonce, sealed = box[1:13], box[13:]   # cryptography wants ciphertext || tag
            print(AESGCM(key).decrypt(nonce, sealed, ad).hex())
            nonce = os.urandom(12)
            with open(sys.argv[4], "wb") as f:
                f.write(bytes([1]) + nonce + AESGCM(key).encrypt(nonce, b"sealed by python", ad))
            """, [boxPath, keyPath, adPath, pythonBoxPath])
        XCTAssertEqual(output, Hex.encode(plaintext))
        let pythonBox = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pythonBoxPath)))
        XCTAssertEqual(try AESGCM.open(pythonBox, key: key, associatedData: associatedData),
                       Array("sealed by python".utf8))
    }
}
