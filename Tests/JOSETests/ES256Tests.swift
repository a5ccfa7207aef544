import JOSE
import XCTest

/// ES256 against RFC 7515 appendix A.3 and against signatures built to be invalid (in the style of Wycheproof).
final class ES256Tests: XCTestCase {
    // RFC 7515 A.3: the example key and JWS.
    static let x = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    static let y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    static let signingInput = "eyJhbGciOiJFUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    static let signature = "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
    static let order = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"

    var key: P256.PublicKey!
    var raw: [UInt8]!
    var data: [UInt8] { Array(Self.signingInput.utf8) }

    override func setUpWithError() throws {
        key = try P256.PublicKey(jwkX: Self.x, y: Self.y)
        raw = try XCTUnwrap(Base64URL.decode(Self.signature))
    }

    func testRFC7515AppendixA3Verifies() throws {
        XCTAssertEqual(raw.count, 64)
        XCTAssertTrue(key.isValidSignature(raw, for: data))
        let token = try JWT.verify("\(Self.signingInput).\(Self.signature)", key: key)
        XCTAssertEqual(token.payload["iss"], "joe")
        XCTAssertEqual(token.payload["exp"]?.intValue, 1_300_819_380)
        XCTAssertEqual(token.payload["http://example.com/is_root"], true)
    }

    func testJWKRoundTrip() throws {
        XCTAssertEqual(key.jwk["x"]?.stringValue, Self.x)
        XCTAssertEqual(key.jwk["y"]?.stringValue, Self.y)
        XCTAssertEqual(key.jwk["kty"], "EC")
        XCTAssertEqual(key.jwk["crv"], "P-256")
        XCTAssertEqual(key.derRepresentation.count, 91)
        XCTAssertEqual(try P256.PublicKey(derRepresentation: key.derRepresentation), key)
        XCTAssertEqual(try P256.PublicKey(pemRepresentation: key.pemRepresentation), key)
        XCTAssertEqual(key.fingerprint, SHA256.hex(key.derRepresentation))
        XCTAssertEqual(key.fingerprint.count, 64)
    }

    func testDEREncodedSignatureIsRejected() {
        let der = Self.derSignature(r: Array(raw[0..<32]), s: Array(raw[32..<64]))
        XCTAssertFalse(key.isValidSignature(der, for: data))
    }

    func testWrongLengthsAreRejected() {
        XCTAssertFalse(key.isValidSignature(Array(raw.prefix(63)), for: data))
        XCTAssertFalse(key.isValidSignature(Array(raw.dropFirst()), for: data))
        XCTAssertFalse(key.isValidSignature(raw + [0], for: data))
        XCTAssertFalse(key.isValidSignature([0] + raw, for: data))
        XCTAssertFalse(key.isValidSignature([], for: data))
        XCTAssertFalse(key.isValidSignature(Array(raw.prefix(32)), for: data))
    }

    func testOutOfRangeScalarsAreRejected() {
        let zero = [UInt8](repeating: 0, count: 32)
        let n = Hex.decode(Self.order)!
        var nPlusOne = n
        nPlusOne[31] += 1
        let allOnes = [UInt8](repeating: 0xFF, count: 32)
        let r = Array(raw[0..<32]), s = Array(raw[32..<64])
        XCTAssertFalse(key.isValidSignature(zero + s, for: data), "r = 0")
        XCTAssertFalse(key.isValidSignature(r + zero, for: data), "s = 0")
        XCTAssertFalse(key.isValidSignature(zero + zero, for: data), "r = s = 0")
        XCTAssertFalse(key.isValidSignature(n + s, for: data), "r = n")
        XCTAssertFalse(key.isValidSignature(r + n, for: data), "s = n")
        XCTAssertFalse(key.isValidSignature(r + nPlusOne, for: data), "s = n + 1")
        XCTAssertFalse(key.isValidSignature(allOnes + s, for: data), "r = 2^256 - 1")
    }

    func testTamperingIsRejected() {
        var tamperedData = data
        tamperedData[tamperedData.count - 1] ^= 0x01
        XCTAssertFalse(key.isValidSignature(raw, for: tamperedData))
        for index in [0, 31, 32, 63] {
            var flipped = raw!
            flipped[index] ^= 0x80
            XCTAssertFalse(key.isValidSignature(flipped, for: data), "bit flipped in byte \(index)")
        }
        let swapped = Array(raw[32..<64]) + Array(raw[0..<32])
        XCTAssertFalse(key.isValidSignature(swapped, for: data))
    }

    func testOtherKeyIsRejected() throws {
        let other = try P256.PrivateKey.generate().publicKey
        XCTAssertFalse(other.isValidSignature(raw, for: data))
    }

    func testPointNotOnCurveIsRefused() throws {
        // y of the RFC key with its last bit flipped is not on the curve.
        var y = try XCTUnwrap(Base64URL.decode(Self.y))
        y[31] ^= 0x01
        XCTAssertThrowsError(try P256.PublicKey(jwkX: Self.x, y: Base64URL.encode(y)))
        XCTAssertThrowsError(try P256.PublicKey(jwkX: Self.x, y: "AAAA"))
        XCTAssertThrowsError(try P256.PublicKey(jwkX: Self.x + "=", y: Self.y))
    }

    func testSignThenVerifyAndCheckWithOpenSSLCLI() throws {
        let privateKey = try P256.PrivateKey.generate()
        let message = Array("the signing input".utf8)
        let signature = try privateKey.signature(for: message)
        XCTAssertEqual(signature.count, 64)
        XCTAssertTrue(privateKey.publicKey.isValidSignature(signature, for: message))

        // The openssl CLI verifies the same signature once it is put in DER, the form it expects.
        let directory = try TemporaryDirectory()
        _ = try directory.write("pub.pem", privateKey.publicKey.pemRepresentation)
        _ = try directory.write("message", bytes: message)
        let der = Self.derSignature(r: Array(signature[0..<32]), s: Array(signature[32..<64]))
        _ = try directory.write("sig.der", bytes: der)
        let output = try OpenSSLCLI.run(
            ["dgst", "-sha256", "-verify", "pub.pem", "-signature", "sig.der", "message"], in: directory)
        XCTAssertTrue(output.contains("Verified OK"))
    }

    func testSignaturesAreAlways64BytesAcrossManySigns() throws {
        // r or s with a leading zero byte (1 in 128 signatures) must still be left-padded to 32 bytes.
        let privateKey = try P256.PrivateKey.generate()
        for index in 0..<300 {
            let message = Array("message \(index)".utf8)
            let signature = try privateKey.signature(for: message)
            XCTAssertEqual(signature.count, 64)
            XCTAssertTrue(privateKey.publicKey.isValidSignature(signature, for: message))
        }
    }

    func testConcurrentSigningIsSafe() throws {
        let privateKey = try P256.PrivateKey.generate()
        let failures = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let message = Array("concurrent \(index)".utf8)
            guard let signature = try? privateKey.signature(for: message),
                  privateKey.publicKey.isValidSignature(signature, for: message)
            else {
                failures.increment()
                return
            }
        }
        XCTAssertEqual(failures.value, 0)
    }

    /// DER `ECDSA-Sig-Value` from 32-byte r and s, written by hand to stay independent of the code under test.
    static func derSignature(r: [UInt8], s: [UInt8]) -> [UInt8] {
        func integer(_ bytes: [UInt8]) -> [UInt8] {
            var value = Array(bytes.drop(while: { $0 == 0 }))
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(r) + integer(s)
        return [0x30, UInt8(body.count)] + body
    }
}

final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
