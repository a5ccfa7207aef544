import Foundation
import XCTest

/// `gatehouse users` and `gatehouse accounts` as an operator runs them: output, JSON, exit codes, hostile input.
final class UsersCommandsTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("demo.sqlite")
        let seeded = try cli.run(["demo", "seed", "--store", store, "--users", "400", "--seed", "9", "--anchor", "2026-01-01T00:00:00Z", "--quiet"])
        XCTAssertEqual(seeded.status, 0, seeded.stderr)
    }

    func json(_ result: CLI.Result) throws -> [String: Any] {
        XCTAssertEqual(result.status, 0, result.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stdout)
    }

    func testSearchShowAndNeverPrintSecrets() throws {
        let email = try sqlite3(store, #"SELECT u.email FROM "user" u JOIN account a ON a.userId = u.id WHERE a.providerId = 'google' AND a.accessToken IS NOT NULL LIMIT 1"#)
        let id = try sqlite3(store, "SELECT id FROM \"user\" WHERE email = '\(email)'")
        let prefix = String(email.prefix(6)).uppercased()
        let search = try json(cli.run(["users", "search", prefix, "--by", "email", "--json", "--store", store]))
        let ids = (search["users"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        XCTAssertTrue(ids.contains(id), "\(search)")
        let text = try cli.run(["users", "search", prefix, "--store", store])
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdout.hasPrefix("ID  "), text.stdout)
        XCTAssertTrue(text.stdout.contains(email))

        let secrets = try sqlite3(store, "SELECT coalesce(accessToken, '') || char(10) || coalesce(idToken, '') || char(10) || coalesce(refreshToken, '') FROM account WHERE userId = '\(id)'")
            .split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        let sessionTokens = try sqlite3(store, "SELECT token FROM session WHERE userId = '\(id)'").split(separator: "\n").map(String.init)
        XCTAssertFalse(secrets.isEmpty)
        for reference in [email, id, "better_auth|" + id, email.uppercased()] {
            let shown = try cli.run(["users", "show", reference, "--store", store])
            XCTAssertEqual(shown.status, 0, shown.stderr)
            XCTAssertTrue(shown.stdout.contains("user \(id)"), shown.stdout)
            XCTAssertTrue(shown.stdout.contains("access token: present"), shown.stdout)
            let detail = try json(cli.run(["users", "show", reference, "--json", "--store", store]))
            XCTAssertEqual((detail["user"] as? [String: Any])?["id"] as? String, id)
            XCTAssertEqual((detail["accounts"] as? [[String: Any]])?.first?["hasAccessToken"] as? Bool, true)
            XCTAssertNotNil(detail["sync"] as? [String: Any])
            XCTAssertEqual((detail["merges"] as? [String: Any])?["available"] as? Bool, true)
            XCTAssertEqual(((detail["merges"] as? [String: Any])?["records"] as? [Any])?.count, 0)
            for secret in secrets + sessionTokens {
                XCTAssertFalse(shown.stdout.contains(secret), "token value printed")
                XCTAssertFalse(try cli.run(["users", "show", reference, "--json", "--store", store]).stdout.contains(secret))
            }
        }
    }

    func testUnprovisionedAndRelayFlagsAreShown() throws {
        let id = try sqlite3(store, #"SELECT u.id FROM "user" u WHERE u.email LIKE '%@privaterelay.appleid.com' AND NOT EXISTS (SELECT 1 FROM users s WHERE s.sub = 'better_auth|' || u.id) LIMIT 1"#)
        guard !id.isEmpty else { return }
        let shown = try cli.run(["users", "show", id, "--store", store])
        XCTAssertTrue(shown.stdout.contains("UNPROVISIONED"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("private-relay email"), shown.stdout)
    }

    func testUnknownUsersAndHostileInput() throws {
        for reference in ["nosuchuser", "nobody@example.com", "better_auth|nope", "'; DROP TABLE user; --", "%"] {
            let result = try cli.run(["users", "show", reference, "--store", store])
            XCTAssertEqual(result.status, 1, reference)
            XCTAssertEqual(result.stdout, "")
            XCTAssertTrue(result.stderr.contains("no such user"), result.stderr)
            XCTAssertFalse(result.stderr.lowercased().contains("sqlite"), result.stderr)
        }
        for query in ["%", "_", "%@%", "a_b%", "' OR '1'='1", "\"; DROP TABLE \"user\"; --"] {
            let result = try cli.run(["users", "search", query, "--json", "--store", store])
            XCTAssertEqual(result.status, 0, "\(query): \(result.stderr)")
            XCTAssertEqual((try json(result)["users"] as? [Any])?.count, 0, query)
        }
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM \"user\""), "400")
        let long = try cli.run(["users", "search", String(repeating: "x", count: 5000), "--store", store])
        XCTAssertEqual(long.status, 1)
        XCTAssertTrue(long.stderr.contains("at most 512"), long.stderr)
        // Invalid UTF-8 reaches the binary as raw bytes in argv.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", #""$0" users search "$(printf 'ab\377\376')" --store "$1" 2>&1; echo "status=$?""#, CLI.binary, store]
        let pipe = Pipe()
        shell.standardOutput = pipe
        try shell.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        XCTAssertTrue(output.contains("not valid UTF-8"), output)
        XCTAssertTrue(output.contains("status=1"), output)
        let badKind = try cli.run(["users", "search", "x", "--by", "mail", "--store", store])
        XCTAssertEqual(badKind.status, 2)
        XCTAssertTrue(badKind.stderr.contains("--by must be one of"), badKind.stderr)
        XCTAssertEqual(try cli.run(["users", "duplicates", "--min-score", "2", "--store", store]).status, 2)
        XCTAssertEqual(try cli.run(["users", "show", "--store", store]).status, 2)
    }

    /// Name search goes through gatehouse_user_search; Better Auth's own writes (here the sqlite3 shell) are
    /// found at once through the triggers, and `accounts index` folds them in or rebuilds a stale index.
    func testNameSearchIndexFollowsPlainSQLiteWrites() throws {
        func names(_ query: String) throws -> [String] {
            let found = try json(cli.run(["users", "search", query, "--by", "name", "--json", "--store", store]))
            return (found["users"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        func searchCheck() throws -> [String: Any]? {
            let health = try cli.run(["health", "--json", "--store", store])
            let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(health.stdout.utf8)) as? [String: Any], health.stderr)
            return (report["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "accounts.search_index" }
        }
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_user_search_pending"), "0")
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) = (SELECT count(*) FROM \"user\") FROM gatehouse_user_search_names"), "1")
        XCTAssertEqual(try searchCheck()?["status"] as? String, "ok")

        let insert = """
            INSERT INTO "user" (id, name, email, emailVerified, createdAt, updatedAt)
            VALUES ('e2eQuokka', 'Wilhelmina Quokka-Ström', 'wq+tag@example.com', 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
            """
        XCTAssertEqual(try sqlite3(store, insert), "")
        XCTAssertEqual(try names("QUOKKA strom"), ["Wilhelmina Quokka-Ström"])
        XCTAssertEqual(try names("a quok"), ["Wilhelmina Quokka-Ström"])
        XCTAssertEqual(try names("NEAR(quokka)"), [])
        XCTAssertEqual(try sqlite3(store, "UPDATE \"user\" SET name = 'Wilma Wombat' WHERE id = 'e2eQuokka'"), "")
        XCTAssertEqual(try names("quokka"), [])
        XCTAssertEqual(try names("wombat"), ["Wilma Wombat"])
        XCTAssertEqual(try searchCheck()?["summary"] as? String, "name search is indexed (1 recent change(s) read directly)")

        let folded = try cli.run(["accounts", "index", "--store", store])
        XCTAssertEqual(folded.status, 0, folded.stderr)
        XCTAssertTrue(folded.stdout.contains("name search index: folded in 1 changed user(s)"), folded.stdout)
        XCTAssertEqual(try names("wombat"), ["Wilma Wombat"])
        XCTAssertEqual(try sqlite3(store, "DELETE FROM \"user\" WHERE id = 'e2eQuokka'"), "")
        XCTAssertEqual(try names("wombat"), [])

        // The user table recreated behind Gatehouse's back loses the triggers: health says so, search still answers.
        XCTAssertEqual(try sqlite3(store, "DROP TRIGGER gatehouse_user_search_insert; \(insert)"), "")
        XCTAssertEqual(try names("quokka"), ["Wilhelmina Quokka-Ström"])
        let stale = try searchCheck()
        XCTAssertEqual(stale?["status"] as? String, "warning")
        XCTAssertTrue((stale?["summary"] as? String ?? "").contains("out of date"), "\(String(describing: stale))")
        let rebuilt = try cli.run(["accounts", "index", "--json", "--store", store])
        let searchIndex = try json(rebuilt)["searchIndex"] as? [String: Any]
        XCTAssertEqual(searchIndex?["action"] as? String, "built", rebuilt.stdout)
        XCTAssertEqual(searchIndex?["users"] as? Int, Int(try sqlite3(store, "SELECT count(*) FROM \"user\"")), rebuilt.stdout)
        XCTAssertEqual(try searchCheck()?["status"] as? String, "ok")
        XCTAssertEqual(try names("quokka"), ["Wilhelmina Quokka-Ström"])
        XCTAssertEqual(try sqlite3(store, "SELECT action FROM gatehouse_audit ORDER BY id DESC LIMIT 1"), "accounts.index")
        let again = try cli.run(["accounts", "index", "--store", store])
        XCTAssertTrue(again.stdout.contains("the name search index is current"), again.stdout)
    }

    func testDuplicatesAndAccountsCheck() throws {
        let report = try json(cli.run(["users", "duplicates", "--json", "--limit", "5", "--store", store]))
        let candidates = try XCTUnwrap(report["candidates"] as? [[String: Any]])
        XCTAssertFalse(candidates.isEmpty)
        XCTAssertLessThanOrEqual(candidates.count, 5)
        XCTAssertEqual(report["usersScanned"] as? Int, 400)
        let first = candidates[0]
        XCTAssertGreaterThanOrEqual(first["score"] as? Double ?? 0, 0.7)
        XCTAssertFalse((first["reasons"] as? [[String: Any]] ?? []).isEmpty)
        let text = try cli.run(["users", "duplicates", "--limit", "2", "--store", store])
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdout.contains("1. score "), text.stdout)
        XCTAssertTrue(text.stdout.contains("same name"), text.stdout)

        let check = try json(cli.run(["accounts", "check", "--json", "--store", store]))
        let findings = try XCTUnwrap(check["findings"] as? [[String: Any]])
        XCTAssertEqual(findings.count, 7)
        XCTAssertEqual(findings.first { $0["code"] as? String == "account_user_missing" }?["count"] as? Int, 0)
        // An orphaned account, written past the foreign key as a broken import would.
        _ = try sqlite3(store, #"PRAGMA foreign_keys = OFF; INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES ('orphan', 'https://appleid.apple.com', 'x', 'apple', 'ghost', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');"#)
        let broken = try cli.run(["accounts", "check", "--store", store])
        XCTAssertEqual(broken.status, 0, broken.stderr)
        XCTAssertTrue(broken.stdout.contains("ERR  1  account rows whose user is missing"), broken.stdout)
        XCTAssertTrue(broken.stdout.contains("account orphan (apple) → missing user ghost"), broken.stdout)
        XCTAssertEqual(try cli.run(["accounts", "--store", store]).status, 0, "check is the default")
    }

    func testHelp() throws {
        for words in [["users", "--help"], ["users", "search", "--help"], ["users", "show", "-h"], ["users", "duplicates", "--help"], ["accounts", "--help"], ["accounts", "check", "--help"]] {
            let result = try cli.run(words)
            XCTAssertEqual(result.status, 0, "\(words)")
            XCTAssertTrue(result.stdout.contains("usage: gatehouse"), result.stdout)
        }
    }

    /// A line feed or carriage return in stored user data (written by another tool) cannot forge a line of
    /// `users show`: it is shown as \u{000A}, as `users search` shows it.
    func testShowPrintsLineBreaksInUserDataVisibly() throws {
        let id = try sqlite3(store, #"SELECT id FROM "user" ORDER BY id LIMIT 1"#)
        _ = try sqlite3(store, #"UPDATE "user" SET name = 'Ana' || char(10) || 'flags:' || char(10) || '  (none)' || char(13) WHERE id = '\#(id)'; UPDATE session SET userAgent = 'curl' || char(10) || 'sync: users row forged' WHERE userId = '\#(id)';"#)
        let shown = try cli.run(["users", "show", id, "--store", store])
        XCTAssertEqual(shown.status, 0, shown.all)
        let lines = shown.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.filter { $0.hasPrefix("flags:") }.count, 1, shown.stdout)
        XCTAssertFalse(lines.contains { $0.hasPrefix("sync: users row forged") }, shown.stdout)
        XCTAssertTrue(shown.stdout.contains(#"  name:           Ana\u{000A}flags:\u{000A}  (none)\u{000D}"#), shown.stdout)
        XCTAssertFalse(shown.stdout.contains("\r"), "no carriage return reaches the terminal")
    }
}
