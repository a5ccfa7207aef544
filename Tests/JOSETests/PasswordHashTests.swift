import Foundation
import JOSE
import XCTest

final class PasswordHashTests: XCTestCase {
    func testRightAndWrongPasswords() throws {
        let encoded = try PasswordHash.make(password: "correct horse battery staple")
        XCTAssertTrue(PasswordHash.verify(password: "correct horse battery staple", encoded: encoded))
        XCTAssertFalse(PasswordHash.verify(password: "correct horse battery stapl", encoded: encoded))
        XCTAssertFalse(PasswordHash.verify(password: "", encoded: encoded))
        XCTAssertFalse(PasswordHash.needsRehash(encoded))
    }

    func testEncodedFormat() throws {
        let encoded = try PasswordHash.make(password: "pw")
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(fields.count, 6)
        XCTAssertEqual(Array(fields[0..<4]), ["scrypt", "32768", "8", "1"])
        XCTAssertEqual(Base64.decode(fields[4])?.count, 16)
        XCTAssertEqual(Base64.decode(fields[5])?.count, 32)
        XCTAssertNotEqual(try PasswordHash.make(password: "pw"), encoded, "salts must differ")
    }

    func testEmptyAndUnicodePasswords() throws {
        let empty = try PasswordHash.make(password: "")
        XCTAssertTrue(PasswordHash.verify(password: "", encoded: empty))
        XCTAssertFalse(PasswordHash.verify(password: " ", encoded: empty))
        let unicode = try PasswordHash.make(password: "pässwörd 🔑")
        XCTAssertTrue(PasswordHash.verify(password: "pässwörd 🔑", encoded: unicode))
    }

    func testMalformedOrHostileEncodingsAreFalse() throws {
        let encoded = try PasswordHash.make(password: "pw")
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        func with(_ index: Int, _ value: String) -> String {
            var copy = fields
            copy[index] = value
            return copy.joined(separator: "$")
        }
        for bad in ["", "pw", "scrypt$", with(0, "bcrypt"), with(1, "1073741824"), with(1, "30000"), with(2, "0"),
                    with(3, "100"), with(4, "***"), with(5, "AAAA"), encoded + "$extra"] {
            XCTAssertFalse(PasswordHash.verify(password: "pw", encoded: bad), bad)
        }
        XCTAssertTrue(PasswordHash.needsRehash(with(1, "16384")))
    }

    func testAHashFromPythonHashlibVerifies() throws {
        let output = try TestPython.run("""
            import base64, hashlib, os
            salt = os.urandom(16)
            key = hashlib.scrypt("admin password ✓".encode(), salt=salt, n=32768, r=8, p=1, maxmem=64 * 1024 * 1024,
                                 dklen=32)
            print("scrypt$32768$8$1$" + base64.b64encode(salt).decode() + "$" + base64.b64encode(key).decode())
            """)
        XCTAssertTrue(PasswordHash.verify(password: "admin password ✓", encoded: output))
        XCTAssertFalse(PasswordHash.verify(password: "admin password", encoded: output))
    }

    func testPythonHashlibAgreesWithAGatehouseHash() throws {
        let encoded = try PasswordHash.make(password: "from swift")
        let output = try TestPython.run("""
            import base64, hashlib, hmac, sys
            _, n, r, p, salt, key = sys.argv[1].split("$")
            derived = hashlib.scrypt(b"from swift", salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                                     maxmem=64 * 1024 * 1024, dklen=len(base64.b64decode(key)))
            print(hmac.compare_digest(derived, base64.b64decode(key)))
            """, [encoded])
        XCTAssertEqual(output, "True")
    }
}
