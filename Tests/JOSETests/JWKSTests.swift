import JOSE
import XCTest

final class JWKSTests: XCTestCase {
    static let document = """
    {"keys":[
      {"kty":"RSA","kid":"rsa-1","use":"sig","alg":"RS256","n":"\(RS256Tests.n)","e":"AQAB"},
      {"kty":"EC","kid":"ec-1","crv":"P-256","x":"\(ES256Tests.x)","y":"\(ES256Tests.y)"},
      {"kty":"oct","kid":"hmac-1","k":"c2VjcmV0"},
      {"kty":"OKP","kid":"ed-1","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
      {"kty":"EC","kid":"p384-1","crv":"P-384","x":"AAAA","y":"AAAA"}
    ]}
    """

    func testParsesSupportedKeysAndSkipsTheRest() throws {
        let set = try JWKS(json: Self.document)
        XCTAssertEqual(set.keys.map(\.keyID), ["rsa-1", "ec-1"])
        XCTAssertEqual(set.skipped.map(\.keyID), ["hmac-1", "ed-1", "p384-1"])
        guard case .rsa(let rsa) = try set.key(withID: "rsa-1").material else { return XCTFail("not RSA") }
        XCTAssertEqual(rsa.bits, 2048)
        guard case .p256(let ec) = try set.key(withID: "ec-1").material else { return XCTFail("not EC") }
        XCTAssertEqual(ec, try P256.PublicKey(jwkX: ES256Tests.x, y: ES256Tests.y))
        XCTAssertEqual(try set.key(withID: "rsa-1").algorithm, "RS256")
    }

    func testLookupErrorsNameTheProblem() throws {
        let set = try JWKS(json: Self.document)
        XCTAssertThrowsError(try set.key(withID: "gone")) { error in
            XCTAssertEqual(error as? JWKError, .keyNotFound(kid: "gone", available: ["rsa-1", "ec-1"]))
            XCTAssertTrue("\(error)".contains("\"gone\""))
            XCTAssertTrue("\(error)".contains("\"rsa-1\", \"ec-1\""))
        }
        XCTAssertThrowsError(try set.key(withID: "hmac-1")) { error in
            guard case .keyUnusable(let kid, let reason) = error as? JWKError else { return XCTFail("\(error)") }
            XCTAssertEqual(kid, "hmac-1")
            XCTAssertTrue(reason.contains("\"oct\""))
        }
        XCTAssertThrowsError(try set.key(withID: "p384-1")) { error in
            XCTAssertTrue("\(error)".contains("P-384"))
        }
    }

    func testDocumentErrors() {
        XCTAssertThrowsError(try JWKS(json: "not json")) { XCTAssertEqual($0 as? JWKError, .notJSONObject) }
        XCTAssertThrowsError(try JWKS(json: "[]")) { XCTAssertEqual($0 as? JWKError, .notJSONObject) }
        XCTAssertThrowsError(try JWKS(json: #"{"key":[]}"#)) { XCTAssertEqual($0 as? JWKError, .missingKeys) }
        XCTAssertThrowsError(try JWKS(json: #"{"keys":[{"kid":"a","kty":"RSA","e":"AQAB"}]}"#)) {
            XCTAssertEqual($0 as? JWKError, .keyUnusable(kid: "a", reason: JWKError.missingMember("n").description))
        }
        XCTAssertThrowsError(try JWKS(json: #"{"keys":[{"kid":"a"}]}"#)) {
            XCTAssertTrue("\($0)".contains("\"kty\""))
        }
        XCTAssertThrowsError(try JWKS(json: #"{"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}]}"#)) {
            XCTAssertTrue("\($0)".contains("32"))
        }
    }

    func testVerifyPicksTheKeyByKid() throws {
        let key = try P256.PrivateKey.generate()
        let other = try P256.PrivateKey.generate().publicKey
        let set = JWKS(keys: [JWK(key.publicKey, keyID: "mine"), JWK(other, keyID: "other")])
        let token = try JWT.sign(header: ["kid": "mine"], claims: ["sub": "x"], key: key)
        XCTAssertEqual(try JWT.verify(token, keySet: set).payload["sub"], "x")
        let wrongKid = try JWT.sign(header: ["kid": "other"], claims: ["sub": "x"], key: key)
        XCTAssertThrowsError(try JWT.verify(wrongKid, keySet: set)) {
            XCTAssertEqual($0 as? JWTError, .invalidSignature)
        }
        let unknownKid = try JWT.sign(header: ["kid": "nope"], claims: ["sub": "x"], key: key)
        XCTAssertThrowsError(try JWT.verify(unknownKid, keySet: set)) {
            XCTAssertEqual($0 as? JWKError, .keyNotFound(kid: "nope", available: ["mine", "other"]))
        }
        let noKid = try JWT.sign(header: [:], claims: ["sub": "x"], key: key)
        XCTAssertThrowsError(try JWT.verify(noKid, keySet: set)) {
            XCTAssertEqual($0 as? JWKError, .ambiguousKey(count: 2))
        }
        XCTAssertNoThrow(try JWT.verify(noKid, keySet: JWKS(keys: [JWK(key.publicKey)])))
    }

    func testJWKAlgorithmMustMatchTheToken() throws {
        // The RFC A.3 ES256 token checked against the same key published as "alg":"RS256".
        let set = try JWKS(json: #"{"keys":[{"kty":"EC","alg":"RS256","crv":"P-256","x":"\#(ES256Tests.x)","y":"\#(ES256Tests.y)"}]}"#)
        XCTAssertThrowsError(try JWT.verify(ES256Tests.signingInput + "." + ES256Tests.signature, keySet: set))
    }

    func testEncryptionKeysDoNotVerify() throws {
        let key = try P256.PrivateKey.generate()
        var jwk = JWK(key.publicKey, keyID: "enc-1")
        jwk.use = "enc"
        let token = try JWT.sign(header: ["kid": "enc-1"], claims: [:], key: key)
        XCTAssertThrowsError(try JWT.verify(token, keySet: JWKS(keys: [jwk]))) {
            guard case .keyUnusable(let kid, _) = $0 as? JWKError else { return XCTFail("\($0)") }
            XCTAssertEqual(kid, "enc-1")
        }
    }

    func testJSONObjectRoundTrips() throws {
        let set = try JWKS(json: Self.document)
        let text = try JSONValue.encode(object: set.jsonObject())
        let again = try JWKS(json: text)
        XCTAssertEqual(again.keys, set.keys)
    }
}
