import XCTest

final class InitAndAuditTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    func testInitOnABetterAuthDatabaseAddsOnlyGatehouseTables() throws {
        let store = scratch.path("ba.sqlite")
        _ = try sqlite3(store, try String(contentsOfFile: fixture("better-auth-1.5.sql"), encoding: .utf8))
        let before = try sqlite3(store, "SELECT name, sql FROM sqlite_master WHERE tbl_name IN ('user','session','account','verification') AND name NOT LIKE 'gatehouse%' ORDER BY name; SELECT * FROM account; SELECT * FROM user;")
        let result = try cli.run(["init", "--store", store])
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertTrue(result.stdout.contains("Better Auth 1.4–1.6 (no account.issuer)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("kept existing tables, skipped 0001_better_auth_core"), result.stdout)
        XCTAssertEqual(try sqlite3(store, "SELECT name, sql FROM sqlite_master WHERE tbl_name IN ('user','session','account','verification') AND name NOT LIKE 'gatehouse%' ORDER BY name; SELECT * FROM account; SELECT * FROM user;"), before)
        let status = try cli.run(["status", "--store", store, "--json"])
        XCTAssertTrue(status.stdout.contains(#""users" : 2"#), status.stdout)
    }

    func testMissingColumnReportNamesTableAndColumn() throws {
        let store = scratch.path("missing.sqlite")
        _ = try sqlite3(store, try String(contentsOfFile: fixture("missing-column.sql"), encoding: .utf8))
        let tables = try sqlite3(store, ".tables")
        let result = try cli.run(["init", "--store", store])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains(#"table "user" has no column "emailVerified" (or "email_verified")"#), result.stderr)
        XCTAssertEqual(try sqlite3(store, ".tables"), tables)
    }

    func testAuditListFiltersAndJSON() throws {
        let store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store, "--actor", "ops-alice"]).status, 0)
        XCTAssertEqual(try cli.run(["demo", "seed", "--store", store, "--users", "10", "-q"]).status, 0)
        let list = try cli.run(["audit", "--store", store])
        XCTAssertEqual(list.status, 0)
        XCTAssertTrue(list.stdout.contains("store.init"), list.stdout)
        XCTAssertTrue(list.stdout.contains("ops-alice"), list.stdout)
        let filtered = try cli.run(["audit", "list", "--store", store, "--action", "demo.*", "--json"])
        let entries = try JSONSerialization.jsonObject(with: Data(filtered.stdout.utf8)) as? [[String: Any]]
        XCTAssertEqual(entries?.count, 1)
        XCTAssertEqual(entries?.first?["action"] as? String, "demo.seed")
        let future = try cli.run(["audit", "--store", store, "--since", "2999-01-01"])
        XCTAssertEqual(future.stdout, "no audit entries match\n")
        XCTAssertEqual(try cli.run(["audit", "--store", store, "--since", "yesterday"]).status, 2)
        // A duration out of range is bad usage too (the README's rule: 2), for every duration option.
        let huge = try cli.run(["audit", "--store", store, "--since", "200000000000d"])
        XCTAssertEqual(huge.status, 2, huge.all)
        XCTAssertTrue(huge.stderr.contains("--since: \"200000000000d\" is longer than 100 years"), huge.stderr)
        for (command, option) in [(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "x"], "--for"),
                                  (["apple", "secret", "mint"], "--ttl"), (["health"], "--expect-every"), (["health"], "--sweep-budget")] {
            for value in ["200000000000d", "soon"] {
                let result = try cli.run(command + [option, value, "--store", store])
                XCTAssertEqual(result.status, 2, "\(command) \(option) \(value): \(result.all)")
                XCTAssertTrue(result.stderr.contains("\(option): \"\(value)\""), result.stderr)
            }
        }
        XCTAssertEqual(try cli.run(["audit", "--store", store, "--limit", "0"]).status, 2)
    }

    func testAuditVerifyDetectsTamperingByAnotherTool() throws {
        let store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        XCTAssertEqual(try cli.run(["demo", "seed", "--store", store, "--users", "3", "-q"]).status, 0)
        let intact = try cli.run(["audit", "verify", "--store", store, "--json"])
        XCTAssertEqual(intact.status, 0)
        _ = try sqlite3(store, "DROP TRIGGER gatehouse_audit_no_update; UPDATE gatehouse_audit SET actor = 'someone-else' WHERE id = 1;")
        let broken = try cli.run(["audit", "verify", "--store", store])
        XCTAssertEqual(broken.status, 1)
        XCTAssertTrue(broken.stdout.contains("entry 1 was edited"), broken.stdout)
    }

    func testEditedMigrationFileIsRefusedWithAClearMessage() throws {
        let store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        let migrations = scratch.path("migrations")
        try FileManager.default.copyItem(atPath: CLI.packageRoot.appendingPathComponent("migrations").path, toPath: migrations)
        let file = migrations + "/sqlite/0003_gatehouse_audit.sql"
        try (try String(contentsOfFile: file, encoding: .utf8) + "\nCREATE INDEX extra ON gatehouse_audit (actor);\n").write(toFile: file, atomically: true, encoding: .utf8)
        let edited = CLI(environment: ["GATEHOUSE_MIGRATIONS": migrations])
        for command in [["status"], ["init"]] {
            let result = try edited.run(command + ["--store", store])
            XCTAssertEqual(result.status, 1)
            XCTAssertTrue(result.stderr.contains("migration 3 (0003_gatehouse_audit) was edited after it was applied"), result.stderr)
        }
        // Without the newest migration file, the store is ahead of the binary.
        try (try String(contentsOfFile: CLI.packageRoot.appendingPathComponent("migrations/sqlite/0003_gatehouse_audit.sql").path, encoding: .utf8))
            .write(toFile: file, atomically: true, encoding: .utf8)
        let newest = try FileManager.default.contentsOfDirectory(atPath: migrations + "/sqlite").sorted().last!
        try FileManager.default.removeItem(atPath: migrations + "/sqlite/" + newest)
        let gap = try edited.run(["status", "--store", store])
        XCTAssertEqual(gap.status, 1)
        XCTAssertTrue(gap.stderr.contains("does not have"), gap.stderr)
    }

    /// `init` with a master key that is not the one the store's Apple keys were sealed with says so and changes
    /// nothing, instead of "already up to date".
    func testInitWithTheWrongMasterKeySaysItDoesNotOpenTheSealedKeys() throws {
        let store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        let key = try AppleTools.p256Key("ABCDEFGHIJ", in: scratch.url.path)
        let imported = try cli.run(["apple", "key", "import", key, "--team-id", "TEAM123456", "--store", store])
        XCTAssertEqual(imported.status, 0, imported.all)
        let before = try sqlite3(store, "SELECT count(*) FROM gatehouse_audit")
        let wrong = String(repeating: "ab", count: 32)

        let fromEnvironment = try CLI(environment: ["GATEHOUSE_MASTER_KEY": wrong]).run(["init", "--store", store])
        XCTAssertEqual(fromEnvironment.status, 1, fromEnvironment.all)
        XCTAssertFalse(fromEnvironment.stdout.contains("up to date"), fromEnvironment.stdout)
        XCTAssertTrue(fromEnvironment.stderr.contains("the master key from GATEHOUSE_MASTER_KEY does not open the store's 1 sealed Apple key(s)"), fromEnvironment.stderr)
        XCTAssertTrue(fromEnvironment.stderr.contains("unset it to use the key file \(store).key"), fromEnvironment.stderr)

        let keyFile = store + ".key"
        let right = try String(contentsOfFile: keyFile, encoding: .utf8)
        try (wrong + "\n").write(toFile: keyFile, atomically: false, encoding: .utf8)
        let fromFile = try cli.run(["init", "--store", store])
        XCTAssertEqual(fromFile.status, 1, fromFile.all)
        XCTAssertTrue(fromFile.stderr.contains("the master key from \(keyFile) does not open"), fromFile.stderr)
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_audit"), before, "nothing was written")

        try right.write(toFile: keyFile, atomically: false, encoding: .utf8)
        let fine = try cli.run(["init", "--store", store])
        XCTAssertEqual(fine.status, 0, fine.all)
        XCTAssertTrue(fine.stdout.contains("already up to date"), fine.stdout)
    }
}
