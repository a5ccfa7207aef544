import Foundation
import JOSE
import XCTest

/// Gatehouse against an independent implementation: Python's PyJWT on top of `cryptography`.
final class PyJWTInteropTests: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    /// Parses the JSON object a Python script printed.
    func object(_ text: String) throws -> [String: JSONValue] {
        try JSONValue.parseObject(Array(text.utf8))
    }

    // (a) PyJWT verifies what Gatehouse mints.
    func testPyJWTVerifiesAGatehouseClientSecret() throws {
        let key = try P256.PrivateKey.generate()
        let now = Int(Date().timeIntervalSince1970)
        let token = try JWT.sign(
            header: ["kid": "ABC123DEFG"],
            claims: ["iss": "TEAM123456", "iat": .integer(now), "exp": .integer(now + 3600),
                     "aud": "https://appleid.apple.com", "sub": "com.example.web"],
            key: key)
        let tokenPath = try directory.write("token", token)
        let keyPath = try directory.write("pub.pem", key.publicKey.pemRepresentation)
        let output = try TestPython.run("""
            import json, sys, jwt
            token = open(sys.argv[1]).read()
            key = open(sys.argv[2]).read()
            claims = jwt.decode(token, key, algorithms=["ES256"], audience="https://appleid.apple.com",
                                issuer="TEAM123456")
            header = jwt.get_unverified_header(token)
            print(json.dumps({"claims": claims, "header": header,
                              "iat_is_int": isinstance(claims["iat"], int)}))
            """, [tokenPath, keyPath])
        let result = try object(output)
        XCTAssertEqual(result["header"]?["kid"], "ABC123DEFG")
        XCTAssertEqual(result["header"]?["alg"], "ES256")
        XCTAssertEqual(result["claims"]?["sub"], "com.example.web")
        XCTAssertEqual(result["claims"]?["exp"]?.intValue, now + 3600)
        XCTAssertEqual(result["iat_is_int"], true)
    }

    func testPyJWTRejectsAGatehouseTokenUnderAnotherKey() throws {
        let token = try JWT.sign(header: [:], claims: ["sub": "x"], key: P256.PrivateKey.generate())
        let tokenPath = try directory.write("token", token)
        let keyPath = try directory.write("pub.pem", P256.PrivateKey.generate().publicKey.pemRepresentation)
        let output = try TestPython.run("""
            import sys, jwt
            try:
                jwt.decode(open(sys.argv[1]).read(), open(sys.argv[2]).read(), algorithms=["ES256"])
                print("accepted")
            except jwt.InvalidSignatureError:
                print("rejected")
            """, [tokenPath, keyPath])
        XCTAssertEqual(output, "rejected")
    }

    // (b) Gatehouse verifies what PyJWT makes, and rejects the broken variants.
    func testGatehouseVerifiesPyJWTES256AndRejectsBrokenVariants() throws {
        let output = try TestPython.run("""
            import json, base64, jwt
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
            from cryptography.hazmat.primitives import serialization

            def b64(data): return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
            def unb64(text): return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

            key = ec.generate_private_key(ec.SECP256R1())
            claims = {"iss": "https://appleid.apple.com", "sub": "001234.abcdef", "aud": "com.example.app",
                      "iat": 1700000000, "exp": 1700003600, "email_verified": "true"}
            good = jwt.encode(claims, key, algorithm="ES256", headers={"kid": "K1"})
            header, payload, signature = good.split(".")
            raw = unb64(signature)
            der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
            other_payload = b64(json.dumps(dict(claims, sub="999999.mallory")).encode())
            jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
            jwk.update({"kid": "K1", "use": "sig"})
            print(json.dumps({
                "good": good,
                "der": header + "." + payload + "." + b64(der),
                "wrong_kid": jwt.encode(claims, key, algorithm="ES256", headers={"kid": "K2"}),
                "none": jwt.encode(claims, None, algorithm="none"),
                "tampered": header + "." + other_payload + "." + signature,
                "truncated": header + "." + payload + "." + b64(raw[:63]),
                "truncated_text": header + "." + payload + "." + signature[:-4],
                "jwks": {"keys": [jwk]},
                "pem": key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo).decode(),
            }))
            """)
        let result = try object(output)
        let jwks = try JWKS(json: JSONValue.encode(object: try XCTUnwrap(result["jwks"]?.objectValue)))
        let pem = try P256.PublicKey(pemRepresentation: XCTUnwrap(result["pem"]?.stringValue))
        func token(_ name: String) throws -> String { try XCTUnwrap(result[name]?.stringValue) }

        let verified = try JWT.verify(token("good"), keySet: jwks)
        XCTAssertEqual(verified.payload["sub"], "001234.abcdef")
        XCTAssertEqual(verified.payload["email_verified"], "true")
        XCTAssertEqual(verified.payload["iat"]?.intValue, 1_700_000_000)
        XCTAssertNoThrow(try JWT.verify(token("good"), key: pem))

        XCTAssertThrowsError(try JWT.verify(token("der"), keySet: jwks)) {
            XCTAssertEqual($0 as? JWTError, .invalidSignature)
        }
        XCTAssertThrowsError(try JWT.verify(token("wrong_kid"), keySet: jwks)) {
            XCTAssertEqual($0 as? JWKError, .keyNotFound(kid: "K2", available: ["K1"]))
        }
        XCTAssertThrowsError(try JWT.verify(token("none"), key: pem)) {
            XCTAssertEqual($0 as? JWTError, .unsecured)
        }
        XCTAssertThrowsError(try JWT.verify(token("none"), keySet: jwks)) {
            XCTAssertEqual($0 as? JWTError, .unsecured)
        }
        XCTAssertThrowsError(try JWT.verify(token("tampered"), keySet: jwks)) {
            XCTAssertEqual($0 as? JWTError, .invalidSignature)
        }
        XCTAssertThrowsError(try JWT.verify(token("truncated"), keySet: jwks)) {
            XCTAssertEqual($0 as? JWTError, .invalidSignature)
        }
        // Cutting characters rather than bytes usually leaves set trailing bits (refused before any key is
        // used); one time in sixteen the bits happen to be zero and the 61-byte signature fails to verify.
        XCTAssertThrowsError(try JWT.verify(token("truncated_text"), keySet: jwks)) {
            XCTAssertTrue([.invalidBase64URL(.signature), .invalidSignature].contains($0 as? JWTError), "\($0)")
        }
    }

    // (c) RS256, the shape of Apple's and Google's identity tokens.
    func testGatehouseVerifiesPyJWTRS256ByJWKAndJWKSFile() throws {
        let jwksPath = directory.path("jwks.json")
        let output = try TestPython.run("""
            import json, sys, jwt
            from cryptography.hazmat.primitives.asymmetric import rsa
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            claims = {"iss": "https://appleid.apple.com", "sub": "001234.abcdef", "aud": "com.example.app",
                      "iat": 1700000000, "exp": 1700003600, "is_private_email": True}
            good = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "R1"})
            h, p, s = good.split(".")
            forged = jwt.encode(dict(claims, sub="999999.mallory"), key, algorithm="RS256").split(".")[1]
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            jwk.update({"kid": "R1", "alg": "RS256", "use": "sig"})
            other = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(
                rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()))
            other.update({"kid": "R0", "alg": "RS256", "use": "sig"})
            with open(sys.argv[1], "w") as f:
                json.dump({"keys": [other, {"kty": "oct", "kid": "H1", "k": "c2VjcmV0"}, jwk]}, f)
            print(json.dumps({"good": good, "tampered": h + "." + forged + "." + s,
                              "bitflip": h + "." + p + "." + ("A" if s[0] != "A" else "B") + s[1:],
                              "n": jwk["n"], "e": jwk["e"]}))
            """, [jwksPath])
        let result = try object(output)
        let good = try XCTUnwrap(result["good"]?.stringValue)
        let key = try RSAPublicKey(jwkN: XCTUnwrap(result["n"]?.stringValue), e: XCTUnwrap(result["e"]?.stringValue))
        let verified = try JWT.verify(good, key: key)
        XCTAssertEqual(verified.payload["is_private_email"], true)
        XCTAssertEqual(verified.keyID, "R1")

        let jwks = try JWKS(json: [UInt8](Data(contentsOf: URL(fileURLWithPath: jwksPath))))
        XCTAssertEqual(jwks.keys.map(\.keyID), ["R0", "R1"])
        XCTAssertEqual(jwks.skipped.map(\.keyID), ["H1"])
        XCTAssertEqual(try JWT.verify(good, keySet: jwks).payload["sub"], "001234.abcdef")

        for name in ["tampered", "bitflip"] {
            let bad = try XCTUnwrap(result[name]?.stringValue)
            XCTAssertThrowsError(try JWT.verify(bad, key: key), name) {
                XCTAssertEqual($0 as? JWTError, .invalidSignature)
            }
            XCTAssertThrowsError(try JWT.verify(bad, keySet: jwks), name)
        }
        // The right token under the other key in the set fails too.
        guard case .rsa(let otherKey) = try jwks.key(withID: "R0").material else { return XCTFail("R0 not RSA") }
        XCTAssertThrowsError(try JWT.verify(good, key: otherKey))
    }
}
