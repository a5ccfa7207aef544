import Foundation
import XCTest

/// `gatehouse apple revoke --user U` against a local appleid.apple.com (Tests/Fixtures/apple_server.py): each of
/// Apple's documented answers, faults, a dry run and an account without a token, on every engine the run has.
final class AppleRevokeTests: XCTestCase {
    func testEachAnswerOfAppleIsOneClearLine() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let apple = try AppleServerFixture()
            let token = "r-token-never-shown-1"
            let setup = try AppleLifecycleStore(engine, scratch: scratch, apple: apple, refreshToken: token)
            defer { setup.store.drop() }
            try setup.activateKey(in: scratch)

            let dry = try setup.run(["apple", "revoke", "--user", "uA", "--dry-run"])
            XCTAssertTrue(dry.stdout.contains("would_revoke") && dry.stdout.contains("com.example.web"), dry.stdout)
            XCTAssertEqual((try apple.get("/test/stats") as? [String: Any])?["revocations"] as? Int, 0, "a dry run sends nothing")

            let revoked = try setup.run(["apple", "revoke", "--user", "ana@privaterelay.appleid.com"])
            XCTAssertTrue(revoked.stdout.contains("account acA: revoked: revoked its refresh token (client com.example.web)"), revoked.stdout)
            let sent = try XCTUnwrap(try apple.get("/test/revocations") as? [[String: Any]])
            XCTAssertEqual(sent.count, 1)
            XCTAssertEqual(sent.first?["client_id"] as? String, "com.example.web")
            XCTAssertEqual(sent.first?["token_type_hint"] as? String, "refresh_token")
            XCTAssertTrue(sent.first?["client_secret_fault"] is NSNull, "the minted client secret is one Apple accepts: \(sent)")
            var shown = [dry.all, revoked.all]

            let cases: [(String, String, String)] = [
                ("tok-client", "invalid_client", "apple secret inspect"),
                ("tok-grant", "invalid_grant", "expired, already revoked"),
                ("tok-request", "invalid_request", "malformed parameter"),
                ("tok-500", "server_error", "HTTP 500"),
                ("tok-cut", "unreachable", "broke before the answer"),
            ]
            for (fault, outcome, words) in cases {
                _ = try setup.store.query("UPDATE \"account\" SET \"refreshToken\" = '\(fault)' WHERE \"id\" = 'acA'")
                let result = try setup.run(["apple", "revoke", "--user", "uA"], status: 1)
                XCTAssertTrue(result.stdout.contains("account acA: \(outcome): ") && result.stdout.contains(words), "\(engine) \(fault): \(result.all)")
                XCTAssertEqual(result.stdout.split(separator: "\n").count, 1, result.stdout)
            }
            _ = try setup.store.query("UPDATE \"account\" SET \"refreshToken\" = 'tok-slow' WHERE \"id\" = 'acA'")
            let started = Date()
            let slow = try setup.run(["apple", "revoke", "--user", "uA", "--json"], status: 1, environment: ["GATEHOUSE_APPLE_TIMEOUT_SECONDS": "1"])
            XCTAssertLessThan(Date().timeIntervalSince(started), 4.5, "the timeout bounds the call")
            XCTAssertTrue(slow.stdout.contains("\"timed_out\""), slow.stdout)
            let refused = try setup.run(["apple", "revoke", "--user", "uA"], status: 1, environment: ["GATEHOUSE_APPLE_BASE_URL": "http://127.0.0.1:1"])
            XCTAssertTrue(refused.stdout.contains("connection refused"), refused.stdout)

            // An access token only: sent as one. No token: TN3194's advice, exit 0.
            _ = try setup.store.query("UPDATE \"account\" SET \"refreshToken\" = NULL, \"accessToken\" = 'a-token-never-shown-2' WHERE \"id\" = 'acA'")
            shown.append(try setup.run(["apple", "revoke", "--user", "uA"]).all)
            XCTAssertEqual((try apple.get("/test/revocations") as? [[String: Any]])?.last?["token_type_hint"] as? String, "access_token")
            let none = try setup.run(["apple", "revoke", "--user", "uB", "--json"])
            XCTAssertTrue(none.stdout.contains("\"no_token\"") && none.stdout.contains("TN3194"), none.stdout)

            let audit = try setup.run(["audit", "list", "--json", "--limit", "100"]).stdout
            XCTAssertTrue(audit.contains("apple.token.revoke"), audit)
            for text in shown + [audit, slow.all, refused.all] {
                XCTAssertFalse(text.contains(token) || text.contains("a-token-never-shown-2"), "\(engine): a token was shown")
            }
        }
    }

    /// Apple is reached over HTTPS with the peer's certificate verified: against a certificate authority Gatehouse is
    /// told to trust (`GATEHOUSE_APPLE_CA_FILE`) the revocation goes through; against the system's CA store a
    /// self-made certificate is refused in one line, and nothing is sent.
    func testAppleIsReachedOverVerifiedTLS() throws {
        let scratch = try Scratch()
        let directory = scratch.url.path
        _ = try AppleTools.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
                                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                                    "-keyout", "tls.key", "-out", "tls.pem"], in: directory)
        let apple = try AppleServerFixture(tls: (directory + "/tls.pem", directory + "/tls.key"))
        XCTAssertTrue(apple.baseURL.hasPrefix("https://"))
        let token = "r-token-over-tls"
        let setup = try AppleLifecycleStore(.sqlite, scratch: scratch, apple: apple, refreshToken: token)
        defer { setup.store.drop() }
        try setup.activateKey(in: scratch)

        let untrusted = try setup.run(["apple", "revoke", "--user", "uA"], status: 1)
        XCTAssertTrue(untrusted.stdout.contains("account acA: unreachable: ") && untrusted.stdout.contains("TLS"), untrusted.all)
        let trusted = try setup.run(["apple", "revoke", "--user", "uA"], environment: ["GATEHOUSE_APPLE_CA_FILE": directory + "/tls.pem"])
        XCTAssertTrue(trusted.stdout.contains("account acA: revoked: revoked its refresh token (client com.example.web)"), trusted.all)
        for text in [untrusted.all, trusted.all] { XCTAssertFalse(text.contains(token), "a token was shown") }
    }

    /// `users delete apply` revokes the user's Apple tokens before it deletes anything: when Apple refuses, nothing is
    /// deleted and the plan still stands (its fingerprint leaves the token columns out); once Apple accepts, the token
    /// is revoked and the user deleted, and no token is ever shown.
    func testDeletingAUserRevokesTheirAppleTokensFirst() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let apple = try AppleServerFixture()
            let token = "r-token-of-a-deleted-user"
            let setup = try AppleLifecycleStore(engine, scratch: scratch, apple: apple, refreshToken: token)
            defer { setup.store.drop() }
            try setup.activateKey(in: scratch)
            let planned = try setup.run(["users", "delete", "plan", "uA", "--ticket", "SUP-2", "--json"])
            let plan = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(planned.stdout.utf8)) as? [String: Any], planned.all)
            XCTAssertEqual((plan["appleAccounts"] as? [[String: Any]])?.first?["hasRefreshToken"] as? Bool, true, planned.stdout)
            let planID = try XCTUnwrap(plan["planID"] as? String)

            _ = try setup.store.query("UPDATE \"account\" SET \"refreshToken\" = 'tok-500' WHERE \"id\" = 'acA'")
            let refused = try setup.run(["users", "delete", "apply", planID, "--yes"], status: 1)
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM \"user\" WHERE \"id\" = 'uA'"), "1", "\(engine): deleted although Apple refused")

            _ = try setup.store.query("UPDATE \"account\" SET \"refreshToken\" = '\(token)' WHERE \"id\" = 'acA'")
            let applied = try setup.run(["users", "delete", "apply", planID, "--yes"])
            XCTAssertEqual(try setup.store.query("SELECT count(*) FROM \"user\" WHERE \"id\" = 'uA'"), "0")
            let sent = try XCTUnwrap(try apple.get("/test/revocations") as? [[String: Any]])
            XCTAssertEqual(sent.last?["token_type_hint"] as? String, "refresh_token", "\(engine): \(sent)")
            let audit = try setup.run(["audit", "list", "--json", "--limit", "100"]).stdout
            XCTAssertTrue(audit.contains("apple.token.revoke") && audit.contains("user.delete.apply"), audit)
            for text in [planned.all, refused.all, applied.all, audit] {
                XCTAssertFalse(text.contains(token), "\(engine): a token was shown")
            }
        }
    }

    /// libcurl (and the TLS and LDAP libraries behind it) is loaded only when Gatehouse calls Apple, as libmicrohttpd
    /// only when a server starts: the binary does not link it.
    func testTheBinaryDoesNotLinkLibcurl() throws {
        let result = try Tool.start("/usr/bin/ldd", [CLI.binary]).finish()
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertFalse(result.stdout.contains("libcurl"), result.stdout)
        XCTAssertFalse(result.stdout.contains("FoundationNetworking"), result.stdout)
    }

    func testUnknownUserAndUsage() throws {
        let scratch = try Scratch()
        let apple = try AppleServerFixture()
        let setup = try AppleLifecycleStore(.sqlite, scratch: scratch, apple: apple)
        let unknown = try setup.run(["apple", "revoke", "--user", "nobody@example.com"], status: 1)
        XCTAssertTrue(unknown.stderr.contains("nobody@example.com"), unknown.all)
        try setup.run(["apple", "revoke"], status: 2)
        XCTAssertEqual(try setup.cli.run(["apple", "revoke", "--help"]).status, 0)
    }
}
