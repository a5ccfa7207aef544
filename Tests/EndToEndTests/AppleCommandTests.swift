import Foundation
import XCTest

/// `gatehouse apple` and `gatehouse providers` through the built binary, cross-checked with openssl and PyJWT;
/// every output and the whole audit log are searched for the private key and the tokens.
final class AppleCommandTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!
    /// Everything every command printed, except `export --reveal`.
    var transcript = ""

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
    }

    @discardableResult
    func gh(_ arguments: [String], stdin: String? = nil, status expected: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> CLI.Result {
        let result = try cli.run(arguments + ["--store", store], stdin: stdin)
        XCTAssertEqual(result.status, expected, "\(arguments.joined(separator: " ").prefix(200)): \(result.all.prefix(2000))", file: file, line: line)
        if !arguments.contains("--reveal") { transcript += result.all }
        return result
    }

    func keyRows() throws -> String { try sqlite3(store, "SELECT count(*) FROM gatehouse_apple_keys;") }

    func testKeyRingSecretsAndExportEndToEnd() throws {
        let dir = scratch.url.path
        let key = try AppleTools.p256Key("ABCDEFGHIJ", in: dir)
        let key2 = try AppleTools.p256Key("KLMNOPQRST", in: dir)
        try gh(["providers", "set", "apple", "--team-id", "TEAM123456", "--services-id", "com.example.web", "--bundle-id", "com.example.app"])

        // Import refusals: bad ids, missing Key ID, each leaving no row.
        XCTAssertTrue(try gh(["apple", "key", "import", key, "--team-id", "team12"], status: 1).stderr.contains("Team ID \"team12\" has 6 characters"))
        XCTAssertTrue(try gh(["apple", "key", "import", key, "--key-id", "abc"], status: 1).stderr.contains("Key ID \"abc\""))
        try AppleTools.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "AuthKey_RSAKEYRSA1.p8"], in: dir)
        XCTAssertTrue(try gh(["apple", "key", "import", dir + "/AuthKey_RSAKEYRSA1.p8"], status: 1).stderr.contains("AuthKey_RSAKEYRSA1.p8 is an RSA key; Apple Sign in keys are"))
        try AppleTools.openssl(["ec", "-in", key, "-out", "AuthKey_SEC1SEC1SE.p8"], in: dir)
        XCTAssertTrue(try gh(["apple", "key", "import", dir + "/AuthKey_SEC1SEC1SE.p8"], status: 1).stderr.contains("SEC1 EC PRIVATE KEY"))
        XCTAssertEqual(try keyRows(), "0")
        XCTAssertEqual(try gh(["apple", "key", "import"], status: 2).status, 2)

        // Import, duplicate, activate, list.
        let imported = try gh(["apple", "key", "import", key, "--json"])
        let fingerprint = try (JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as! [String: Any])["key"].map { ($0 as! [String: Any])["fingerprint"] as! String }!
        try AppleTools.openssl(["pkey", "-in", key, "-pubout", "-outform", "DER", "-out", "pub.der"], in: dir)
        XCTAssertEqual(fingerprint, try AppleTools.python("import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],'rb').read()).hexdigest())", [dir + "/pub.der"]))
        XCTAssertTrue(try gh(["apple", "key", "import", key], status: 1).stderr.contains("AuthKey_ABCDEFGHIJ.p8 is already in the ring as key ABCDEFGHIJ"))
        XCTAssertEqual(try keyRows(), "1")
        XCTAssertTrue(try gh(["apple", "secret", "mint"], status: 1).stderr.contains("no key is active"))
        XCTAssertTrue(try gh(["apple", "key", "activate", "ABCDEFGHIJ"]).stdout.contains("self-test of ABCDEFGHIJ passed"))
        XCTAssertTrue(try gh(["apple", "key", "activate", "NOSUCHKEY1"], status: 1).stderr.contains("no key NOSUCHKEY1 in the ring"))
        try gh(["apple", "key", "import", key2])
        XCTAssertTrue(try gh(["apple", "key", "activate", "KLMNOPQRST"]).stdout.contains("ABCDEFGHIJ is now retired"))
        XCTAssertTrue(try gh(["apple", "key", "rollback"]).stdout.contains("rolled back to ABCDEFGHIJ"))
        try gh(["apple", "key", "revoke", "KLMNOPQRST"])
        XCTAssertTrue(try gh(["apple", "key", "activate", "KLMNOPQRST"], status: 1).stderr.contains("can never be activated again"))
        let list = try JSONSerialization.jsonObject(with: Data(try gh(["apple", "key", "list", "--json"]).stdout.utf8)) as! [String: Any]
        XCTAssertEqual((list["keys"] as! [[String: Any]]).map { "\($0["keyID"]!)=\($0["state"]!)" }.sorted(), ["ABCDEFGHIJ=active", "KLMNOPQRST=revoked"])
        XCTAssertTrue(try gh(["apple", "key", "selftest"]).stdout.contains("passed"))

        // Minting: ttl bounds and garbage; PyJWT verifies with the exported public key.
        XCTAssertTrue(try gh(["apple", "secret", "mint", "--ttl", "15777001"], status: 1).stderr.contains("15,777,000"))
        XCTAssertTrue(try gh(["apple", "secret", "mint", "--ttl", "0"], status: 1).stderr.contains("positive"))
        XCTAssertTrue(try gh(["apple", "secret", "mint", "--ttl", "soon"], status: 2).stderr.contains("--ttl: \"soon\" is not a duration"))
        let token = try gh(["apple", "secret", "mint", "--ttl", "2h"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let claims = try AppleTools.python("""
            import jwt, sys, json
            pub = open(sys.argv[2]).read()
            header = jwt.get_unverified_header(sys.argv[1])
            claims = jwt.decode(sys.argv[1], pub, algorithms=["ES256"], audience="https://appleid.apple.com", issuer="TEAM123456")
            assert header == {"alg": "ES256", "kid": "ABCDEFGHIJ"}, header
            assert claims["exp"] - claims["iat"] == 7200, claims
            print(claims["sub"])
            """, [token, try pubPEM(key)])
        XCTAssertEqual(claims, "com.example.web")
        XCTAssertTrue(try gh(["apple", "secret", "inspect", "-"], stdin: token + "\n").stdout.hasPrefix("Apple should accept this client secret"))
        // A DER-signed secret made by Python's cryptography, and a PyJWT one with a long lifetime.
        let der = try AppleTools.python("""
            import sys, json, base64, time
            from cryptography.hazmat.primitives import serialization, hashes
            from cryptography.hazmat.primitives.asymmetric import ec
            key = serialization.load_pem_private_key(open(sys.argv[1],'rb').read(), None)
            b = lambda d: base64.urlsafe_b64encode(d).rstrip(b'=').decode()
            now = int(time.time())
            inp = b(json.dumps({"alg":"ES256","kid":"ABCDEFGHIJ"}).encode()) + "." + b(json.dumps({"iss":"TEAM123456","iat":now,"exp":now+3600,"aud":"https://appleid.apple.com","sub":"com.example.web"}).encode())
            print(inp + "." + b(key.sign(inp.encode(), ec.ECDSA(hashes.SHA256()))))
            """, [key])
        let derReport = try gh(["apple", "secret", "inspect", der], status: 1)
        XCTAssertTrue(derReport.stdout.contains("bytes of DER"), derReport.stdout)
        XCTAssertTrue(derReport.stdout.contains("only its encoding is wrong"), derReport.stdout)
        let long = try AppleTools.python("""
            import jwt, sys, time
            now = int(time.time())
            print(jwt.encode({"iss":"TEAM123456","iat":now,"exp":now+15777000+3600,"aud":"https://appleid.apple.com","sub":"com.example.app"}, open(sys.argv[1]).read(), algorithm="ES256", headers={"kid":"KLMNOPQRST"}))
            """, [key2])
        let longReport = try gh(["apple", "secret", "inspect", long, "--json"], status: 1).stdout
        for code in ["lifetime_over_cap", "revoked_key"] { XCTAssertTrue(longReport.contains("\"\(code)\""), longReport) }
        // Malformed input.
        let parts = token.split(separator: ".")
        for bad in [String(parts[0] + "." + parts[1]), String(parts[0]) + ".!!!." + String(parts[2]), String(repeating: "x", count: 1 << 20)] {
            XCTAssertEqual(try gh(["apple", "secret", "inspect", "-"], stdin: bad, status: 1).status, 1)
        }
        XCTAssertEqual(try gh(["apple", "secret", "inspect", "-"], stdin: String(decoding: (0..<256).map { UInt8($0) }, as: UTF8.self), status: 1).status, 1)

        // Track: expiry and fingerprint only.
        let ninety = try gh(["apple", "secret", "mint", "--ttl", "90d"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(try gh(["apple", "secret", "track", "-"], stdin: ninety).stdout.contains("tracking the client secret for com.example.web"))
        XCTAssertTrue(try gh(["apple", "secret", "track", ninety], status: 1).stderr.contains("already tracked"))
        XCTAssertTrue(try gh(["apple", "secret", "list"]).stdout.contains("com.example.web"))

        // Export: refused without --reveal, audited with it, the only place the key is printed.
        XCTAssertTrue(try gh(["apple", "export"], status: 1).stderr.contains("without --reveal"))
        let env = try gh(["apple", "export", "--format", "env", "--reveal"]).stdout
        XCTAssertTrue(env.hasPrefix("APPLE_TEAM_ID='TEAM123456'\nAPPLE_KEY_ID='ABCDEFGHIJ'\nAPPLE_CLIENT_ID='com.example.web'\nAPPLE_APP_BUNDLE_IDENTIFIER='com.example.app'\nAPPLE_PRIVATE_KEY='-----BEGIN PRIVATE KEY-----\n"), env)
        let exported = try gh(["apple", "export", "--format", "json", "--reveal"]).stdout
        let pem = (try JSONSerialization.jsonObject(with: Data(exported.utf8)) as! [String: String])["APPLE_PRIVATE_KEY"]!
        XCTAssertEqual(try AppleTools.python("""
            import sys
            from cryptography.hazmat.primitives import serialization
            a = serialization.load_pem_private_key(sys.argv[1].encode(), None).private_numbers().private_value
            b = serialization.load_pem_private_key(open(sys.argv[2],'rb').read(), None).private_numbers().private_value
            print(a == b)
            """, [pem, key]), "True")
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_audit WHERE action = 'apple.export.reveal';"), "2")
        XCTAssertEqual(try gh(["apple", "export", "--format", "yaml", "--reveal"], status: 2).status, 2)

        // Nothing secret anywhere else: outputs, the audit log, the whole store as sqlite3 dumps it.
        let dump = try sqlite3(store, ".dump")
        for line in try AppleTools.secretLines(key) + AppleTools.secretLines(key2) where line.count > 8 {
            XCTAssertFalse(transcript.contains(line), "a key line leaked into output")
            XCTAssertFalse(dump.contains(line), "a key line is in the store in clear")
        }
        let audit = try sqlite3(store, "SELECT * FROM gatehouse_audit;")
        for secret in [token, ninety, der, long] {
            XCTAssertFalse(audit.contains(secret))
            XCTAssertFalse(dump.contains(secret), "a token is stored")
            XCTAssertFalse(audit.contains(String(secret.split(separator: ".")[2])))
        }
    }

    func testProvidersShowAndSet() throws {
        try gh(["providers", "set", "apple", "--services-id", "com.example.web", "--bundle-id", "com.example.app"])
        let shown = try gh(["providers", "show"]).stdout
        XCTAssertTrue(shown.contains("Better Auth accepts aud: com.example.app (from appBundleIdentifier)"), shown)
        XCTAssertTrue(shown.contains(#"reported as: JWTClaimValidationFailed: unexpected "aud" claim value"#), shown)
        XCTAssertTrue(shown.contains("gatehouse providers set apple --audience com.example.web --audience com.example.app"), shown)
        try gh(["providers", "set", "apple", "--audience", "com.example.web,com.example.app"])
        let json = try JSONSerialization.jsonObject(with: Data(try gh(["providers", "show", "--json"]).stdout.utf8)) as! [String: Any]
        let apple = json["apple"] as! [String: Any]
        XCTAssertEqual(apple["acceptedAudiences"] as? [String], ["com.example.web", "com.example.app"])
        XCTAssertEqual(apple["nativeTokensAccepted"] as? Bool, true)
        XCTAssertEqual(apple["desktopTokensAccepted"] as? Bool, true)
        try gh(["providers", "set", "google", "--client-id", "ios=1-ios.apps.googleusercontent.com", "--client-id", "desktop=1-d.apps.googleusercontent.com"])
        XCTAssertTrue(try gh(["providers", "set", "google", "--client-id", "ipad=x"], status: 1).stderr.contains("unknown platform"))
        XCTAssertEqual(try gh(["providers", "set", "apple", "--clear-audience", "--audience", "x"], status: 2).status, 2)
        XCTAssertTrue(try gh(["providers", "set", "apple", "--team-id", "TEAM12345"], status: 1).stderr.contains("9 characters"))
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_audit WHERE action = 'providers.set';"), "3")
    }

    func pubPEM(_ key: String) throws -> String {
        try AppleTools.openssl(["pkey", "-in", key, "-pubout", "-out", "pub.pem"], in: scratch.url.path)
        return scratch.path("pub.pem")
    }

    /// Without its master key file, what `apple key import` suggests is a command that works: `init` on a ring with
    /// no sealed keys (it makes the key file), restoring the file on one that has them (where `init` refuses).
    func testAMissingMasterKeyIsAnsweredWithACommandThatWorks() throws {
        let dir = scratch.url.path
        let first = try AppleTools.p256Key("ABCDEFGHIJ", in: dir)
        let second = try AppleTools.p256Key("KLMNOPQRST", in: dir)
        let keyFile = store + ".key"
        let saved = scratch.path("saved.key")
        try FileManager.default.moveItem(atPath: keyFile, toPath: saved)
        let empty = try gh(["apple", "key", "import", first, "--team-id", "TEAM123456"], status: 1)
        XCTAssertTrue(empty.stderr.contains("run `gatehouse init --store \(store!)`"), empty.stderr)
        try gh(["init"])
        try gh(["apple", "key", "import", first, "--team-id", "TEAM123456"])

        try FileManager.default.removeItem(atPath: keyFile)
        let sealed = try gh(["apple", "key", "import", second, "--team-id", "TEAM123456"], status: 1)
        XCTAssertFalse(sealed.stderr.contains("gatehouse init"), "init refuses here: \(sealed.stderr)")
        XCTAssertTrue(sealed.stderr.contains("the store holds 1 sealed Apple key(s) but its master key file \(keyFile) is missing"), sealed.stderr)
        XCTAssertTrue(sealed.stderr.contains("restore \(keyFile) from the backup"), sealed.stderr)
        let initialise = try gh(["init"], status: 1)
        XCTAssertTrue(initialise.stderr.contains("is missing"), initialise.stderr)
        XCTAssertEqual(try keyRows(), "1")
    }
}
