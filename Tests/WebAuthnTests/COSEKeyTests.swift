import JOSE
import WebAuthn
@testable import WebAuthnTestSupport
import XCTest

/// COSE_Key parsing: EC2 P-256 / ES256 and RSA / RS256 become JOSE's key types; anything else is refused by name.
final class COSEKeyTests: XCTestCase {
    func ec2(_ entries: [(TestCBOR, TestCBOR)]) -> [UInt8] {
        TestCBOR.map(entries).encoded
    }

    func assertRefused(_ bytes: [UInt8], _ expected: COSEKeyError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try COSEPublicKey(cbor: bytes), file: file, line: line) { error in
            XCTAssertEqual(error as? COSEKeyError, expected, file: file, line: line)
        }
    }

    func testReadsAnES256KeyAsJOSEsP256Key() throws {
        let privateKey = try P256.PrivateKey.generate()
        let authenticator = SoftwareAuthenticator(key: .p256(privateKey))
        let key = try COSEPublicKey(cbor: authenticator.coseKey.encoded)
        XCTAssertEqual(key, .es256(privateKey.publicKey))
        XCTAssertEqual(key.algorithm, .es256)
        let data = Array("signed".utf8)
        XCTAssertTrue(key.isValidSignature(try authenticator.sign(data), for: data))
        XCTAssertFalse(key.isValidSignature(try authenticator.sign(data), for: Array("other".utf8)))
        // JOSE's raw r‖s is not WebAuthn's encoding.
        XCTAssertFalse(key.isValidSignature(try privateKey.signature(for: data), for: data))
    }

    func testReadsAnRS256KeyAsJOSEsRSAKey() throws {
        let authenticator = SoftwareAuthenticator.rs256()
        let key = try COSEPublicKey(cbor: authenticator.coseKey.encoded)
        guard case .rs256(let rsa) = key else { return XCTFail("not RSA: \(key)") }
        XCTAssertEqual(rsa.bits, 2048)
        XCTAssertEqual(key.algorithm, .rs256)
        let data = Array("signed".utf8)
        XCTAssertTrue(key.isValidSignature(try authenticator.sign(data), for: data))
        XCTAssertFalse(key.isValidSignature(try authenticator.sign(data), for: Array("other".utf8)))
    }

    func testRefusesOtherKeyTypesAlgorithmsAndCurves() throws {
        let point = try P256.PrivateKey.generate().publicKey.x963Representation
        let x = TestCBOR.bytes(Array(point[1..<33]))
        let y = TestCBOR.bytes(Array(point[33..<65]))
        // Ed25519 (kty OKP 1, alg EdDSA -8).
        assertRefused(ec2([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(6)), (.int(-2), x)]),
                      .unsupportedKeyType(1))
        // ES384 on P-384, and ES256 named on another curve.
        assertRefused(ec2([(.int(1), .int(2)), (.int(3), .int(-35)), (.int(-1), .int(2)), (.int(-2), x), (.int(-3), y)]),
                      .unsupportedAlgorithm(-35))
        assertRefused(ec2([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(2)), (.int(-2), x), (.int(-3), y)]),
                      .unsupportedCurve(2))
        // An EC2 key claiming RS256, an RSA key claiming ES256, PS256.
        assertRefused(ec2([(.int(1), .int(2)), (.int(3), .int(-257)), (.int(-1), .int(1)), (.int(-2), x), (.int(-3), y)]),
                      .unsupportedAlgorithm(-257))
        assertRefused(ec2([(.int(1), .int(3)), (.int(3), .int(-7)), (.int(-1), x), (.int(-2), .bytes([1, 0, 1]))]),
                      .unsupportedAlgorithm(-7))
        assertRefused(ec2([(.int(1), .int(3)), (.int(3), .int(-37)), (.int(-1), x), (.int(-2), .bytes([1, 0, 1]))]),
                      .unsupportedAlgorithm(-37))
        // A text kty (COSE allows "tstr" labels for private use).
        assertRefused(ec2([(.int(1), .text("EC2")), (.int(3), .int(-7))]), .unsupportedKeyType(nil))
    }

    func testRefusesMissingOrMalformedParameters() throws {
        let point = try P256.PrivateKey.generate().publicKey.x963Representation
        let x = TestCBOR.bytes(Array(point[1..<33]))
        let y = TestCBOR.bytes(Array(point[33..<65]))
        assertRefused(ec2([(.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), x), (.int(-3), y)]), .missingParameter("kty (1)"))
        assertRefused(ec2([(.int(1), .int(2)), (.int(-1), .int(1)), (.int(-2), x), (.int(-3), y)]), .missingParameter("alg (3)"))
        assertRefused(ec2([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-2), x), (.int(-3), y)]), .missingParameter("crv (-1)"))
        assertRefused(ec2([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-3), y)]), .missingParameter("x (-2)"))
        assertRefused(ec2([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), x)]), .missingParameter("y (-3)"))
        assertRefused(ec2([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Array(point[1..<32]))), (.int(-3), y)]),
                      .invalidParameter("x (-2)", "is 31 bytes; P-256 needs 32"))
        assertRefused(ec2([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), x), (.int(-3), .text("y"))]),
                      .invalidParameter("y (-3)", "is not a byte string"))
        // A point off the curve.
        var offCurve = Array(point[33..<65])
        offCurve[31] ^= 1
        assertRefused(ec2([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), x), (.int(-3), .bytes(offCurve))]),
                      .invalidKey("the point (x, y) is not on the P-256 curve"))
        // A private scalar beside the public point.
        assertRefused(ec2([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), x), (.int(-3), y), (.int(-4), x)]),
                      .privateKeyMaterial)
        // RSA: a small modulus, a missing exponent, private parts.
        let rsa = SoftwareAuthenticator.sharedRSAKey
        let n = TestCBOR.bytes(rsa.number("n")), e = TestCBOR.bytes(rsa.number("e"))
        XCTAssertThrowsError(try COSEPublicKey(cbor: ec2([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes([UInt8](repeating: 0xC1, count: 128))), (.int(-2), e)]))) {
            guard case .invalidKey = $0 as? COSEKeyError else { return XCTFail("\($0)") }
        }
        assertRefused(ec2([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), n)]), .missingParameter("e (-2)"))
        assertRefused(ec2([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), n), (.int(-2), e), (.int(-3), n)]), .privateKeyMaterial)
        // Not a map, not CBOR, trailing bytes.
        assertRefused([0x80], .notAMap)
        assertRefused([0xA1], .cbor(.lengthExceedsInput(offset: 0)))
        assertRefused([0xA1, 0x01], .cbor(.lengthExceedsInput(offset: 0)))
        assertRefused([0xA1, 0x01, 0x19], .cbor(.truncated(offset: 3)))
        assertRefused(SoftwareAuthenticator.rs256().coseKey.encoded + [0], .cbor(.trailingBytes(offset: 272)))
    }

    func testErrorsSayWhatIsAccepted() {
        XCTAssertEqual(COSEKeyError.unsupportedAlgorithm(-8).description,
                       "the COSE algorithm -8 is not supported: only ES256 (-7) with EC2 and RS256 (-257) with RSA are")
        XCTAssertEqual(COSEKeyError.unsupportedKeyType(1).description,
                       "the COSE key type 1 is not supported: only EC2 (2) and RSA (3) are")
    }
}
