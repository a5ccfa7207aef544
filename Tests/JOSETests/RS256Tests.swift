import JOSE
import XCTest

/// RS256 against RFC 7515 appendix A.2.
final class RS256Tests: XCTestCase {
    static let n = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4"
        + "qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2j"
        + "Z47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7W"
        + "TBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK"
        + "-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let e = "AQAB"
    static let signingInput = "eyJhbGciOiJSUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    static let signature = "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm"
        + "4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--"
        + "f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383Lc"
        + "OLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUi"
        + "pUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"

    func testRFC7515AppendixA2Verifies() throws {
        let key = try RSAPublicKey(jwkN: Self.n, e: Self.e)
        XCTAssertEqual(key.bits, 2048)
        let signature = try XCTUnwrap(Base64URL.decode(Self.signature))
        XCTAssertTrue(key.isValidSignature(signature, for: Array(Self.signingInput.utf8)))
        let token = try JWT.verify("\(Self.signingInput).\(Self.signature)", key: key)
        XCTAssertEqual(token.algorithm, "RS256")
        XCTAssertEqual(token.payload["iss"], "joe")
    }

    func testJWKRoundTrip() throws {
        let key = try RSAPublicKey(jwkN: Self.n, e: Self.e)
        XCTAssertEqual(key.jwk["n"]?.stringValue, Self.n)
        XCTAssertEqual(key.jwk["e"]?.stringValue, Self.e)
        XCTAssertEqual(try RSAPublicKey(derRepresentation: key.derRepresentation), key)
    }

    func testTamperedIsRejected() throws {
        let key = try RSAPublicKey(jwkN: Self.n, e: Self.e)
        var signature = try XCTUnwrap(Base64URL.decode(Self.signature))
        var data = Array(Self.signingInput.utf8)
        data[data.count - 2] ^= 0x01
        XCTAssertFalse(key.isValidSignature(signature, for: data))
        data = Array(Self.signingInput.utf8)
        signature[10] ^= 0x01
        XCTAssertFalse(key.isValidSignature(signature, for: data))
        XCTAssertFalse(key.isValidSignature(Array(signature.dropLast()), for: data))
        XCTAssertFalse(key.isValidSignature([], for: data))
    }

    func testSmallKeysAreRefused() throws {
        let directory = try TemporaryDirectory()
        try OpenSSLCLI.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", "k.pem"],
                           in: directory)
        try OpenSSLCLI.run(["pkey", "-in", "k.pem", "-pubout", "-outform", "DER", "-out", "k.der"], in: directory)
        let der = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.path("k.der"))))
        XCTAssertThrowsError(try RSAPublicKey(derRepresentation: der)) { error in
            XCTAssertEqual(error as? JWKError, .keyTooSmall(bits: 1024, minimum: 2048))
        }
        // The same refusal from a JWK: a 1024-bit modulus.
        let modulus = [UInt8](repeating: 0xC5, count: 128)
        XCTAssertThrowsError(try RSAPublicKey(jwkN: Base64URL.encode(modulus), e: "AQAB")) { error in
            XCTAssertEqual(error as? JWKError, .keyTooSmall(bits: 1024, minimum: 2048))
        }
    }

    func testBadExponentIsRefused() {
        XCTAssertThrowsError(try RSAPublicKey(jwkN: Self.n, e: "AQAA"))  // even
        XCTAssertThrowsError(try RSAPublicKey(jwkN: Self.n, e: ""))
        XCTAssertThrowsError(try RSAPublicKey(jwkN: Self.n + "=", e: "AQAB"))
    }
}
