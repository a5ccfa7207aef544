import Foundation
import XCTest

/// `gatehouse token inspect` on ID tokens made by PyJWT, signed with an RSA key generated here and saved as JWKS.
final class TokenCommandTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!
    var jwks: String!
    var rsa: String!

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        XCTAssertEqual(try cli.run(["providers", "set", "apple", "--services-id", "com.example.web", "--bundle-id", "com.example.app", "--store", store]).status, 0)
        XCTAssertEqual(try cli.run(["providers", "set", "google", "--client-id", "ios=1-ios.apps.googleusercontent.com", "--store", store]).status, 0)
        rsa = scratch.path("rsa.pem")
        jwks = scratch.path("keys.json")
        try AppleTools.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsa], in: scratch.url.path)
        _ = try AppleTools.python("""
            import sys, json
            from jwt.algorithms import RSAAlgorithm
            from cryptography.hazmat.primitives import serialization
            key = serialization.load_pem_private_key(open(sys.argv[1],'rb').read(), None)
            jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
            jwk.update({"kid": "applekid1", "alg": "RS256", "use": "sig"})
            json.dump({"keys": [jwk]}, open(sys.argv[2], "w"))
            """, [rsa, jwks])
    }

    /// A PyJWT-made token: `claims` is a Python dict expression where `now` is the current time.
    func token(_ claims: String, kid: String = "applekid1") throws -> String {
        try AppleTools.python("""
            import jwt, sys, time, hashlib
            now = int(time.time())
            sha = lambda s: hashlib.sha256(s.encode()).hexdigest()
            print(jwt.encode(\(claims), open(sys.argv[1]).read(), algorithm="RS256", headers={"kid": sys.argv[2]}))
            """, [rsa, kid])
    }

    func inspect(_ token: String, _ extra: [String] = [], status: Int32) throws -> [String: Any] {
        let result = try cli.run(["token", "inspect", "-", "--jwks", jwks, "--json", "--store", store] + extra, stdin: token)
        XCTAssertEqual(result.status, status, result.all)
        XCTAssertFalse(result.all.contains(token), "the token is echoed")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
    }

    func decisive(_ report: [String: Any]) -> String? { (report["decisive"] as? [String: Any])?["code"] as? String }

    let apple = #"{"iss": "https://appleid.apple.com", "aud": "com.example.app", "sub": "001834.abc", "iat": now - 60, "exp": now + 600, "email": "ana@example.com", "email_verified": "true""#

    func testAppleTokensDiagnosedAsBetterAuthWould() throws {
        let good = try inspect(try token(apple + "}"), status: 0)
        XCTAssertEqual(good["signatureChecked"] as? Bool, true)
        XCTAssertTrue((good["verdict"] as! String).hasPrefix("Better Auth 1.7 would accept"))
        let claims = good["claims"] as! [String: Any]
        XCTAssertEqual(claims["emailVerifiedAsSent"] as? String, "\"true\"")
        XCTAssertEqual(claims["emailVerified"] as? Bool, true)
        // Desktop token (aud = Services ID) under appBundleIdentifier alone: rejected, with the fix.
        let desktop = try inspect(try token(apple.replacingOccurrences(of: "com.example.app", with: "com.example.web") + "}"), status: 1)
        XCTAssertEqual(decisive(desktop), "aud")
        let finding = desktop["decisive"] as! [String: Any]
        XCTAssertEqual(finding["reported"] as? String, #"JWTClaimValidationFailed: unexpected "aud" claim value"#)
        XCTAssertTrue((finding["fix"] as! String).contains("--audience com.example.web --audience com.example.app"))
        // Expired, too old, wrong key id, tampered signature.
        XCTAssertEqual(decisive(try inspect(try token(apple.replacingOccurrences(of: "now + 600", with: "now - 5") + "}"), status: 1)), "expired")
        XCTAssertEqual(decisive(try inspect(try token(apple.replacingOccurrences(of: "now - 60", with: "now - 7200").replacingOccurrences(of: "now + 600", with: "now + 60") + "}"), status: 1)), "too_old")
        XCTAssertEqual(decisive(try inspect(try token(apple + "}", kid: "otherkid"), status: 1)), "unknown_kid")
        var parts = try token(apple + "}").split(separator: ".").map(String.init)
        parts[2] = (parts[2].hasPrefix("A") ? "B" : "A") + String(parts[2].dropFirst())
        XCTAssertEqual(decisive(try inspect(parts.joined(separator: "."), status: 1)), "bad_signature")
        // Nonce: raw (desktop form) and hashed (native form) both accepted for Apple; a wrong one refused.
        XCTAssertEqual(decisive(try inspect(try token(apple + #", "nonce": "n-123"}"#), ["--nonce", "n-123"], status: 0)), nil)
        let hashed = try inspect(try token(apple + #", "nonce": sha("n-123")}"#), ["--nonce", "n-123"], status: 0)
        XCTAssertTrue(((hashed["findings"] as! [[String: Any]]).first { $0["code"] as? String == "nonce" }!["message"] as! String).contains("SHA-256"))
        XCTAssertEqual(decisive(try inspect(try token(apple + #", "nonce": "other"}"#), ["--nonce", "n-123"], status: 1)), "nonce")
        // email_verified as a boolean, a "false" string, and a relay address.
        let relay = try inspect(try token(apple.replacingOccurrences(of: "ana@example.com", with: "x7@privaterelay.appleid.com").replacingOccurrences(of: "\"true\"", with: "True") + #", "is_private_email": "true"}"#), status: 0)
        let relayClaims = relay["claims"] as! [String: Any]
        XCTAssertEqual(relayClaims["privateRelay"] as? Bool, true)
        XCTAssertEqual(relayClaims["emailVerifiedAsSent"] as? String, "true")
        let unverified = try inspect(try token(apple.replacingOccurrences(of: "\"true\"", with: "\"false\"") + "}"), status: 0)
        XCTAssertTrue((unverified["findings"] as! [[String: Any]]).contains { $0["code"] as? String == "email_unverified" })
        XCTAssertEqual(decisive(try inspect(try token(apple.replacingOccurrences(of: #", "email": "ana@example.com""#, with: "") + "}"), status: 1)), "no_email")
    }

    func testGoogleTokensAndMalformedInput() throws {
        let google = #"{"iss": "accounts.google.com", "aud": "1-ios.apps.googleusercontent.com", "sub": "1048576", "iat": now, "exp": now + 3600, "email": "ana@gmail.com", "email_verified": True"#
        XCTAssertEqual(decisive(try inspect(try token(google + "}"), status: 0)), nil)
        XCTAssertEqual(decisive(try inspect(try token(google.replacingOccurrences(of: "1-ios", with: "1-web") + "}"), status: 1)), "aud")
        // Google compares nonces exactly: the hashed form is refused.
        XCTAssertEqual(decisive(try inspect(try token(google + #", "nonce": sha("n-1")}"#), ["--nonce", "n-1"], status: 1)), "nonce_hashed")
        XCTAssertEqual(decisive(try inspect(try token(google.replacingOccurrences(of: "accounts.google.com", with: "https://evil.example") + "}"), ["--provider", "google"], status: 1)), "iss")
        // Malformed input: two parts, bad base64, 1 MB, binary garbage.
        let good = try token(google + "}")
        let parts = good.split(separator: ".")
        for (bad, code) in [(String(parts[0] + "." + parts[1]), "malformed"), (String(parts[0]) + ".@@." + String(parts[2]), "malformed"),
                            (String(repeating: "A", count: 1 << 20), "too_large"), (String(decoding: (1..<255).map { UInt8($0) }, as: UTF8.self), "not_text")] {
            XCTAssertEqual(decisive(try inspect(bad, status: 1)), code)
        }
        let noJWKS = try cli.run(["token", "inspect", good, "--store", store])
        XCTAssertEqual(noJWKS.status, 0, noJWKS.all)
        XCTAssertTrue(noJWKS.stdout.contains("the signature was not checked"), noJWKS.stdout)
        XCTAssertEqual(try cli.run(["token", "inspect", good, "--provider", "facebook", "--store", store]).status, 2)
        XCTAssertTrue(try cli.run(["token", "inspect", good, "--jwks", scratch.path("none.json"), "--store", store]).stderr.contains("cannot read the JWKS file"))
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_audit WHERE details LIKE '%" + String(parts[2].prefix(20)) + "%';"), "0")
    }
}
