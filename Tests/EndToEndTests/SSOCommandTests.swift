import Foundation
import XCTest

/// `gatehouse sso set | show | disable` as an operator meets them: the built binary, hostile input included, and the
/// client secret never in any output, the audit log or the store in clear.
final class SSOCommandTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!
    let secret = "sso-client-secret-Zq81xV"

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        try (secret + "\n").write(toFile: scratch.path("secret"), atomically: true, encoding: .utf8)
    }

    func set(_ extra: [String], issuer: String = "https://login.example.com", secretFile: String? = nil) throws -> CLI.Result {
        try cli.run(["sso", "set", "--store", store, "--issuer", issuer, "--client-id", "gatehouse",
                     "--client-secret-file", secretFile ?? scratch.path("secret")] + extra)
    }

    func testSetShowDisableKeepTheSecretSealedAndNeverPrintIt() throws {
        let set = try set(["--admin-group", "ops-admins", "--support-group", "ops-support", "--viewer-group", "staff",
                           "--allowed-domain", "Example.COM", "--password-login", "off", "--redirect-uri", "https://gh.example.com/api/auth/sso/callback"])
        XCTAssertEqual(set.status, 0, set.all)
        XCTAssertTrue(set.stdout.contains("Set single sign-on through https://login.example.com (client gatehouse)"), set.stdout)
        let show = try cli.run(["sso", "show", "--store", store, "--json"])
        XCTAssertEqual(show.status, 0, show.all)
        let shown = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(shown["enabled"] as? Bool, true)
        let sso = try XCTUnwrap(shown["sso"] as? [String: Any])
        XCTAssertEqual(sso["issuer"] as? String, "https://login.example.com")
        XCTAssertEqual(sso["adminGroup"] as? String, "ops-admins")
        XCTAssertEqual(sso["supportGroup"] as? String, "ops-support")
        XCTAssertEqual(sso["viewerGroup"] as? String, "staff")
        XCTAssertEqual(sso["allowedDomain"] as? String, "example.com", "a domain is kept lowercase")
        XCTAssertEqual(sso["passwordLogin"] as? Bool, false)
        XCTAssertEqual(sso["groupsClaim"] as? String, "groups")
        let table = try cli.run(["sso", "show", "--store", store])
        XCTAssertTrue(table.stdout.contains("client secret   (sealed)"), table.stdout)
        // Replaced as a whole.
        let again = try self.set(["--viewer-group", "staff"])
        XCTAssertEqual(again.status, 0, again.all)
        XCTAssertTrue(again.stdout.hasPrefix("Replaced single sign-on"), again.stdout)
        XCTAssertTrue(try cli.run(["sso", "show", "--store", store]).stdout.contains("password login  on"))
        let audit = try cli.run(["audit", "--store", store, "--json"])
        XCTAssertTrue(audit.stdout.contains("sso.set"))
        // The secret: in no output, no audit entry, and not in clear anywhere in the store's file.
        for output in [set.all, show.all, table.all, again.all, audit.all] { XCTAssertFalse(output.contains(secret)) }
        XCTAssertNil(try Data(contentsOf: URL(fileURLWithPath: store)).range(of: Data(secret.utf8)))
        XCTAssertEqual(try sqlite3(store, "SELECT length(sealed_client_secret) > \(secret.utf8.count) FROM gatehouse_sso_config"), "1")
        let disable = try cli.run(["sso", "disable", "--store", store])
        XCTAssertEqual(disable.status, 0, disable.all)
        XCTAssertTrue(disable.stdout.contains("Single sign-on is off"), disable.stdout)
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_sso_config"), "0")
        XCTAssertTrue(try cli.run(["sso", "disable", "--store", store]).stdout.contains("was not set; nothing to do"))
        XCTAssertTrue(try cli.run(["sso", "show", "--store", store]).stdout.contains("Single sign-on is off"))
    }

    func testHostileInputIsRefusedAndChangesNothing() throws {
        let refusals: [(args: [String], issuer: String, secretFile: String?, words: String)] = [
            (["--admin-group", "ops"], "http://login.example.com", nil, "plain http:// to a host that is not this machine"),
            (["--admin-group", "ops"], "ftp://login.example.com", nil, "is not an http:// or https:// URL"),
            (["--admin-group", "ops"], "https://user:pw@login.example.com", nil, "user name or password"),
            (["--admin-group", "ops"], "https://login.example.com/?a=b", nil, "must not have a query"),
            (["--admin-group", "ops"], "https://login.example.com/#frag", nil, "fragment"),
            (["--admin-group", "ops"], "login.example.com", nil, "is not an http:// or https:// URL"),
            (["--admin-group", "ops"], "https://login.example.com", "/nonexistent/secret", "cannot read --client-secret-file"),
            ([], "https://login.example.com", nil, "no group gives access"),
            (["--admin-group", "ops", "--redirect-uri", "https://gh.example.com/elsewhere"], "https://login.example.com", nil, "must end in /api/auth/sso/callback"),
            (["--admin-group", "ops", "--redirect-uri", "http://gh.example.com/api/auth/sso/callback"], "https://login.example.com", nil, "plain http://"),
            (["--admin-group", "ops", "--allowed-domain", "not a domain"], "https://login.example.com", nil, "is not a domain name"),
            (["--admin-group", "ops\u{7}bell"], "https://login.example.com", nil, "white space or control characters"),
            (["--admin-group", "ops", "--password-login", "maybe"], "https://login.example.com", nil, "--password-login takes on or off"),
        ]
        for refusal in refusals {
            let result = try set(refusal.args, issuer: refusal.issuer, secretFile: refusal.secretFile)
            XCTAssertNotEqual(result.status, 0, "\(refusal): \(result.all)")
            XCTAssertTrue(result.stderr.contains(refusal.words), "\(refusal.words): \(result.stderr)")
            XCTAssertFalse(result.all.contains(secret))
            XCTAssertFalse(result.all.contains("pw@"), "a URL's password is not echoed")
        }
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_sso_config"), "0")
        // An empty secret file, and one with a second line holding something else: only the first line is the secret.
        try "\n".write(toFile: scratch.path("empty"), atomically: true, encoding: .utf8)
        let empty = try set(["--admin-group", "ops"], secretFile: scratch.path("empty"))
        XCTAssertEqual(empty.status, 1)
        XCTAssertTrue(empty.stderr.contains("is empty"), empty.stderr)
        // Plain http to this machine is allowed (a provider on loopback, as in the tests).
        let loopback = try set(["--admin-group", "ops"], issuer: "http://127.0.0.1:9/realms/x")
        XCTAssertEqual(loopback.status, 0, loopback.all)
    }

    func testSetShowDisableOnEveryEngine() throws {
        for engine in TestStore.engines {
            let cli = CLI(environment: TestStore.environment)
            let testStore = try TestStore.make(engine, in: scratch, name: "sso-\(engine)")
            defer { testStore.drop() }
            XCTAssertEqual(try cli.run(["init", "--store", testStore.location]).status, 0, "\(engine)")
            let set = try cli.run(["sso", "set", "--store", testStore.location, "--issuer", "https://login.example.com", "--client-id", "gatehouse",
                                   "--client-secret-file", scratch.path("secret"), "--support-group", "ops", "--password-login", "off"])
            XCTAssertEqual(set.status, 0, "\(engine): \(set.all)")
            let show = try cli.run(["sso", "show", "--store", testStore.location, "--json"])
            XCTAssertTrue(show.stdout.contains("\"supportGroup\" : \"ops\""), "\(engine): \(show.all)")
            XCTAssertTrue(show.stdout.contains("\"passwordLogin\" : false"), "\(engine): \(show.all)")
            XCTAssertEqual(try cli.run(["sso", "disable", "--store", testStore.location]).status, 0, "\(engine)")
            XCTAssertTrue(try cli.run(["sso", "show", "--store", testStore.location]).stdout.contains("Single sign-on is off"), "\(engine)")
            for output in [set.all, show.all] { XCTAssertFalse(output.contains(secret), "\(engine)") }
        }
    }

    func testTheSealedSecretKeepsTheMasterKeyInCustody() throws {
        XCTAssertEqual(try set(["--admin-group", "ops"]).status, 0)
        try FileManager.default.moveItem(atPath: store + ".key", toPath: scratch.path("moved.key"))
        let again = try cli.run(["init", "--store", store])
        XCTAssertEqual(again.status, 1, again.all)
        XCTAssertTrue(again.stderr.contains("a sealed SSO client secret"), again.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store + ".key"), "no new key is made over a sealed secret")
    }

    func testAdminsListShowsSourceAndLastLogin() throws {
        let list = try cli.run(["admins", "list", "--store", store])
        XCTAssertTrue(list.stdout.contains("SOURCE  LAST LOGIN"), list.stdout)
        XCTAssertTrue(list.stdout.contains("local   -"), list.stdout)
        let json = try cli.run(["admins", "list", "--store", store, "--json"])
        XCTAssertTrue(json.stdout.contains("\"source\" : \"local\""), json.stdout)
    }
}
