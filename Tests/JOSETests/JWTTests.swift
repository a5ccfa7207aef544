import JOSE
import XCTest

final class JWTTests: XCTestCase {
    var key: P256.PrivateKey!

    override func setUpWithError() throws {
        key = try P256.PrivateKey.generate()
    }

    static func part(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }

    func testSignProducesAnAppleClientSecretShape() throws {
        let token = try JWT.sign(
            header: ["kid": "ABC123DEFG"],
            claims: ["iss": "TEAM123456", "iat": 1_700_000_000, "exp": .integer(1_700_000_000 + 15_777_000),
                     "aud": "https://appleid.apple.com", "sub": "com.example.web"],
            key: key)
        XCTAssertEqual(token.split(separator: ".").count, 3)
        let compact = try JWT.verify(token, key: key.publicKey)
        XCTAssertEqual(compact.algorithm, "ES256")
        XCTAssertEqual(compact.keyID, "ABC123DEFG")
        XCTAssertEqual(compact.signature.count, 64)
        XCTAssertEqual(String(decoding: compact.headerJSON, as: UTF8.self), #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        let payload = String(decoding: compact.payloadJSON, as: UTF8.self)
        XCTAssertTrue(payload.contains(#""iat":1700000000"#), payload)
        XCTAssertTrue(payload.contains(#""exp":1715777000"#), payload)
        XCTAssertTrue(payload.contains(#""aud":"https://appleid.apple.com""#), payload)
        XCTAssertEqual(compact.payload["exp"]?.int64Value, 1_715_777_000)
        XCTAssertEqual(Array(token.utf8.prefix(compact.signingInput.count)), compact.signingInput)
    }

    func testSignRefusesAnotherAlgorithmInTheHeader() {
        XCTAssertThrowsError(try JWT.sign(header: ["alg": "HS256"], claims: [:], key: key)) {
            XCTAssertEqual($0 as? JWTError, .headerAlgorithmConflict("HS256"))
        }
        XCTAssertNoThrow(try JWT.sign(header: ["alg": "ES256"], claims: [:], key: key))
    }

    func testDecodeIsStrict() throws {
        let good = try JWT.sign(header: [:], claims: ["sub": "x"], key: key)
        let parts = good.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func expect(_ token: String, _ error: JWTError, line: UInt = #line) {
            XCTAssertThrowsError(try JWT.decode(token), line: line) { XCTAssertEqual($0 as? JWTError, error, line: line) }
        }
        expect(parts[0] + "." + parts[1], .wrongPartCount(2))
        expect(good + ".", .wrongPartCount(4))
        expect("", .wrongPartCount(1))
        expect(parts[0] + "=." + parts[1] + "." + parts[2], .invalidBase64URL(.header))
        expect("." + parts[1] + "." + parts[2], .invalidBase64URL(.header))
        expect(parts[0] + "." + parts[1] + "+." + parts[2], .invalidBase64URL(.payload))
        expect(parts[0] + "." + parts[1] + "." + parts[2] + "==", .invalidBase64URL(.signature))
        expect(parts[0] + "." + parts[1] + "." + parts[2] + "AAB", .invalidBase64URL(.signature))
        expect(Self.part("[1]") + "." + parts[1] + "." + parts[2], .notJSONObject(.header))
        expect(Self.part("{") + "." + parts[1] + "." + parts[2], .notJSONObject(.header))
        expect(parts[0] + "." + Self.part("\"claims\"") + "." + parts[2], .notJSONObject(.payload))
        expect(parts[0] + "." + "." + parts[2], .notJSONObject(.payload))
        expect(Self.part(#"{"typ":"JWT"}"#) + "." + parts[1] + "." + parts[2], .missingAlgorithm)
        expect(Self.part(#"{"alg":256}"#) + "." + parts[1] + "." + parts[2], .missingAlgorithm)
    }

    func testAlgNoneDecodesButNeverVerifies() throws {
        let token = Self.part(#"{"alg":"none"}"#) + "." + Self.part(#"{"sub":"x"}"#) + "."
        let compact = try JWT.decode(token)
        XCTAssertEqual(compact.algorithm, "none")
        XCTAssertTrue(compact.signature.isEmpty)
        XCTAssertThrowsError(try JWT.verify(token, key: key.publicKey)) {
            XCTAssertEqual($0 as? JWTError, .unsecured)
        }
        XCTAssertFalse(compact.isValid(with: key.publicKey))
        // A real signature pasted onto a "none" header changes nothing.
        let signed = try JWT.sign(header: [:], claims: ["sub": "x"], key: key)
        let forged = Self.part(#"{"alg":"none"}"#) + "." + Self.part(#"{"sub":"x"}"#) + "."
            + signed.split(separator: ".")[2]
        XCTAssertThrowsError(try JWT.verify(forged, key: key.publicKey))
    }

    func testHS256IsNeverAccepted() throws {
        // The classic confusion attack: an HMAC keyed with the public key's bytes.
        let signingInput = Self.part(#"{"alg":"HS256"}"#) + "." + Self.part(#"{"sub":"x"}"#)
        let mac = HMAC.sha256(key: Array(key.publicKey.pemRepresentation.utf8), data: Array(signingInput.utf8))
        let token = signingInput + "." + Base64URL.encode(mac)
        XCTAssertThrowsError(try JWT.verify(token, key: key.publicKey)) {
            XCTAssertEqual($0 as? JWTError, .algorithmNotAllowed("HS256"))
        }
    }

    func testAlgorithmMustMatchTheKey() throws {
        let es256 = try JWT.sign(header: [:], claims: ["sub": "x"], key: key)
        let rsa = try RSAPublicKey(jwkN: RS256Tests.n, e: RS256Tests.e)
        XCTAssertThrowsError(try JWT.verify(es256, key: rsa)) {
            XCTAssertEqual($0 as? JWTError, .algorithmMismatch(token: "ES256", key: "RS256 (RSA)"))
        }
        let rs256 = RS256Tests.signingInput + "." + RS256Tests.signature
        XCTAssertThrowsError(try JWT.verify(rs256, key: key.publicKey)) {
            XCTAssertEqual($0 as? JWTError, .algorithmMismatch(token: "RS256", key: "ES256 (EC P-256)"))
        }
        XCTAssertNoThrow(try JWT.verify(rs256, key: rsa))
    }

    func testTamperedPayloadAndForeignKeyFail() throws {
        let token = try JWT.sign(header: [:], claims: ["sub": "alice"], key: key)
        let parts = token.split(separator: ".").map(String.init)
        let tampered = parts[0] + "." + Self.part(#"{"sub":"mallory"}"#) + "." + parts[2]
        XCTAssertThrowsError(try JWT.verify(tampered, key: key.publicKey)) {
            XCTAssertEqual($0 as? JWTError, .invalidSignature)
        }
        XCTAssertThrowsError(try JWT.verify(token, key: P256.PrivateKey.generate().publicKey)) {
            XCTAssertEqual($0 as? JWTError, .invalidSignature)
        }
    }

    func testCriticalHeadersAreRefused() throws {
        let token = try JWT.sign(header: ["crit": ["exp"]], claims: ["sub": "x"], key: key)
        XCTAssertThrowsError(try JWT.verify(token, key: key.publicKey)) {
            XCTAssertEqual($0 as? JWTError, .unsupportedCriticalHeader)
        }
    }

    func testClaimsWithAwkwardStringsRoundTrip() throws {
        let claims: [String: JSONValue] = ["name": "Zoë \"Z\" O'Neil\\\n", "emoji": "🔑", "ctl": "\u{1}"]
        let compact = try JWT.verify(try JWT.sign(header: [:], claims: claims, key: key), key: key.publicKey)
        XCTAssertEqual(compact.payload, claims)
    }

    func testDescriptionsNeverContainTheToken() throws {
        let token = try JWT.sign(header: [:], claims: ["sub": "secret-subject"], key: key)
        let signature = String(token.split(separator: ".")[2])
        let errors: [JWTError] = [.wrongPartCount(2), .invalidBase64URL(.signature), .invalidSignature, .unsecured]
        for error in errors {
            XCTAssertFalse(error.description.contains(signature))
            XCTAssertFalse(error.description.contains("secret-subject"))
        }
    }
}
