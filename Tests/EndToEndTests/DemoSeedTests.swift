import Foundation
import XCTest

/// `gatehouse demo seed` as an operator meets it: the bulk-load mode of an empty store, and Ctrl-C.
final class DemoSeedTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!

    override func setUpWithError() throws { scratch = try Scratch() }

    func testAnEmptyStoreIsBulkLoadedAndLeftInWAL() throws {
        let store = scratch.path("bulk.sqlite")
        let seeded = try cli.run(["demo", "seed", "--store", store, "--users", "500", "-q"])
        XCTAssertEqual(seeded.status, 0, seeded.all)
        XCTAssertEqual(try sqlite3(store, "PRAGMA journal_mode;"), "wal", "the store is back in WAL for everyone else")
        XCTAssertEqual(try sqlite3(store, "PRAGMA integrity_check;"), "ok")
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM user;"), "500")
        // A second seed, even with the same seed, adds new people to a store that has users (in WAL throughout).
        let again = try cli.run(["demo", "seed", "--store", store, "--users", "200", "-q"])
        XCTAssertEqual(again.status, 0, again.all)
        XCTAssertEqual(try sqlite3(store, "PRAGMA journal_mode; SELECT count(*) FROM user;"), "wal\n700")
    }

    func testSeedsNumberTheirEmailsInBlocksOfTheirOwn() throws {
        // Seeds run into one store at the same time both start from its current user count: each seed numbers
        // its people in a block of its own, so their addresses cannot meet (the numbers follow the last dot).
        for (seed, low, high) in [(1, 1, 300), (3, 20_000_001, 20_000_300)] {
            let store = scratch.path("seed-\(seed).sqlite")
            XCTAssertEqual(try cli.run(["demo", "seed", "--store", store, "--users", "300", "--seed", String(seed), "-q"]).status, 0)
            let range = try sqlite3(store, """
                SELECT min(n) >= \(low), max(n) <= \(high), count(*) > 100 FROM (
                  SELECT CAST(substr(local, length(rtrim(local, '0123456789')) + 1) AS INTEGER) AS n
                  FROM (SELECT substr(email, 1, instr(email, '@') - 1) AS local FROM user WHERE email NOT LIKE '%@privaterelay.appleid.com'));
                """)
            XCTAssertEqual(range, "1|1|1", "seed \(seed): email numbers in \(low)...\(high)")
        }
    }

    func testAnExistingStoreIsSeededInWAL() throws {
        let store = scratch.path("existing.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        // Another process reads the store meanwhile, as the console would.
        let reader = try Tool.start("/usr/bin/sqlite3", [store], stdin: "BEGIN; SELECT count(*) FROM user;\n.shell sleep 2\nCOMMIT;\n")
        Thread.sleep(forTimeInterval: 0.3)
        let seeded = try cli.run(["demo", "seed", "--store", store, "--users", "300", "-q"])
        XCTAssertEqual(seeded.status, 0, seeded.all)
        _ = try reader.finish()
        XCTAssertEqual(try sqlite3(store, "PRAGMA journal_mode; SELECT count(*) FROM user; PRAGMA integrity_check;"), "wal\n300\nok")
    }

    /// Waits (at most a minute) until a running seed reports its first whole batch.
    private func waitForTheFirstBatch(_ running: CLI.Running) {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !((try? String(contentsOf: running.err, encoding: .utf8)) ?? "").contains("seeded ") {
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Waits for a running seed's first whole batch, presses Ctrl-C, and checks what the seed says.
    private func interruptAfterTheFirstBatch(_ running: CLI.Running, file: StaticString = #filePath, line: UInt = #line) throws {
        waitForTheFirstBatch(running)
        kill(running.process.processIdentifier, SIGINT)
        let result = try running.finish()
        XCTAssertEqual(result.status, 130, result.all, file: file, line: line)
        XCTAssertTrue(result.stderr.contains("demo seed interrupted after "), result.stderr, file: file, line: line)
        XCTAssertTrue(result.stderr.contains("the store holds every batch written so far"), result.stderr, file: file, line: line)
    }

    func testInterruptStopsBetweenBatchesAndKeepsAConsistentStore() throws {
        let store = scratch.path("interrupted.sqlite")
        try interruptAfterTheFirstBatch(try cli.start(["demo", "seed", "--store", store, "--users", "2000000"]))
        let users = try XCTUnwrap(Int(try sqlite3(store, "SELECT count(*) FROM user;")))
        XCTAssertGreaterThan(users, 0)
        XCTAssertLessThan(users, 2_000_000)
        XCTAssertEqual(try sqlite3(store, "PRAGMA journal_mode; PRAGMA integrity_check; PRAGMA foreign_key_check;"), "wal\nok")
        // The audit log says so, and the store takes more.
        let audit = try cli.run(["audit", "--action", "demo.seed", "--json", "--store", store])
        XCTAssertTrue(audit.stdout.contains("\"interrupted\""), audit.stdout)
        XCTAssertEqual(try cli.run(["demo", "seed", "--store", store, "--users", "10", "-q"]).status, 0)
    }

    // MARK: - Postgres

    /// The CLI for a Postgres store (its master key file goes to GATEHOUSE_KEY_DIR).
    let pg = CLI(environment: TestStore.environment)

    /// Every index and constraint of the store's tables, as the server spells them.
    private func catalog(_ store: TestStore) throws -> String {
        try store.query("""
            SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema()
            UNION ALL
            SELECT conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
            WHERE connamespace = current_schema()::regnamespace
            ORDER BY 1
            """)
    }

    /// Two Postgres stores: one that `init` made (the catalog to compare with), and an empty database to seed.
    private func initialisedAndEmpty() throws -> (initialised: TestStore, empty: TestStore) {
        let initialised = try TestStore.make(.postgres, in: scratch, name: "init")
        let empty = try TestStore.make(.postgres, in: scratch, name: "seed")
        XCTAssertEqual(try pg.run(["init", "--store", initialised.location]).status, 0)
        return (initialised, empty)
    }

    /// A store that init made and a store that a bulk seed filled have the same indexes and constraints: the seed
    /// sets them aside for the load and builds them again (`PostgresDeferredIndexes`), and what it loaded holds them.
    func testAnEmptyPostgresDatabaseIsBulkLoadedAndGetsItsIndexesBack() throws {
        let (initialised, seeded) = try initialisedAndEmpty()
        defer { initialised.drop(); seeded.drop() }
        let result = try pg.run(["demo", "seed", "--store", seeded.location, "--users", "500", "-q"])
        XCTAssertEqual(result.status, 0, result.all)
        let expected = try catalog(initialised)
        XCTAssertTrue(expected.contains("FOREIGN KEY (\"userId\") REFERENCES \"user\"(id)"), expected)
        XCTAssertEqual(try catalog(seeded), expected)
        XCTAssertEqual(try seeded.query("SELECT count(*) FROM \"user\""), "500")
        try assertNameIndexIsCurrent(seeded)
        // A second seed goes into a store with users: batch by batch, indexes in place.
        XCTAssertEqual(try pg.run(["demo", "seed", "--store", seeded.location, "--users", "200", "-q"]).status, 0)
        XCTAssertEqual(try seeded.query("SELECT count(*) FROM \"user\""), "700")
        XCTAssertEqual(try catalog(seeded), expected)
        try assertNameIndexIsCurrent(seeded)
    }

    /// A reader's snapshot holds the account table and then asks for the user table while a bulk seed starts on the
    /// empty store. The seed takes every table at once or not at all (never one by one, as `TRUNCATE` would), so
    /// neither waits for the other in a circle: both finish, and no deadlock is detected and cancelled.
    func testABulkSeedAndAReaderHoldingATableNeverDeadlock() throws {
        let (initialised, seeded) = try initialisedAndEmpty()
        defer { initialised.drop(); seeded.drop() }
        XCTAssertEqual(try pg.run(["init", "--store", seeded.location]).status, 0)
        let reader = try Tool.start("/usr/bin/psql", [seeded.location, "-X", "-q", "-v", "ON_ERROR_STOP=1"],
                                    stdin: #"BEGIN; SELECT count(*) FROM account; SELECT pg_sleep(2); SELECT count(*) FROM "user"; COMMIT;"#)
        usleep(500_000)
        let seed = try pg.run(["demo", "seed", "--store", seeded.location, "--users", "200", "-q"])
        let read = try reader.finish()
        XCTAssertEqual(seed.status, 0, seed.all)
        XCTAssertEqual(read.status, 0, read.all)
        XCTAssertFalse(seed.all.contains("40P01") || read.all.contains("deadlock"), seed.all + read.all)
        XCTAssertEqual(try seeded.query("SELECT count(*) FROM \"user\""), "200")
        try assertNameIndexIsCurrent(seeded)
    }

    /// The name search index holds every user's key, its triggers are in place, and a name search goes through it.
    private func assertNameIndexIsCurrent(_ store: TestStore, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try store.query("SELECT (SELECT count(*) FROM gatehouse_user_search_names) = (SELECT count(*) FROM \"user\")"), "t",
                       file: file, line: line)
        XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_user_search_pending"), "0", file: file, line: line)
        let health = try pg.run(["health", "--store", store.location])
        XCTAssertTrue(health.stdout.contains("name search is indexed"), health.stdout, file: file, line: line)
        // The keys are the normalizer's: a name with an accent is found without it.
        let name = try store.query("SELECT name FROM \"user\" WHERE name LIKE 'José %' ORDER BY id LIMIT 1")
        XCTAssertFalse(name.isEmpty, file: file, line: line)
        let found = try pg.run(["users", "search", name.replacingOccurrences(of: "José", with: "jose"), "--by", "name", "--json", "--store", store.location])
        XCTAssertEqual(found.status, 0, found.all, file: file, line: line)
        XCTAssertTrue(found.stdout.contains(name), found.stdout, file: file, line: line)
    }

    /// Ctrl-C during a bulk load on Postgres: the batches loaded so far are committed, with every index and
    /// foreign key built again over them.
    func testAnInterruptedBulkLoadOnPostgresKeepsItsBatchesAndItsIndexes() throws {
        let (initialised, seeded) = try initialisedAndEmpty()
        defer { initialised.drop(); seeded.drop() }
        try interruptAfterTheFirstBatch(try pg.start(["demo", "seed", "--store", seeded.location, "--users", "2000000"]))
        let users = try XCTUnwrap(Int(try seeded.query("SELECT count(*) FROM \"user\"")))
        XCTAssertGreaterThan(users, 0)
        XCTAssertLessThan(users, 2_000_000)
        XCTAssertEqual(try catalog(seeded), try catalog(initialised))
        XCTAssertEqual(try seeded.query("SELECT count(*) FROM session s WHERE NOT EXISTS (SELECT 1 FROM \"user\" u WHERE u.id = s.\"userId\")"), "0")
        try assertNameIndexIsCurrent(seeded)
    }

    /// The server ends the seed's connection in the middle of a bulk load: one clear line, exit 1, and nothing
    /// of the seed in the store (it was one transaction), which then takes a seed again.
    func testAServerThatGoesAwayMidBulkLoadLeavesNothingAndSaysSo() throws {
        let seeded = try TestStore.make(.postgres, in: scratch, name: "gone")
        defer { seeded.drop() }
        XCTAssertEqual(try pg.run(["init", "--store", seeded.location]).status, 0)
        let before = try catalog(seeded)
        let running = try pg.start(["demo", "seed", "--store", seeded.location, "--users", "2000000"])
        waitForTheFirstBatch(running)
        // The cluster's superuser ends every other connection to the store's database, as a restarting server would.
        let superuser = seeded.location.replacingOccurrences(of: "postgresql://gatehouse@", with: "postgresql://postgres@")
        let ended = try Tool.run("/usr/bin/psql", [superuser, "-X", "-q", "-At", "-c",
                                                   "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()) t"])
        guard ended.status == 0 else { throw XCTSkip("the test cluster's superuser could not end the connection: \(ended.all)") }
        let result = try running.finish()
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertTrue(result.stderr.contains("nothing of it was written"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").filter { $0.hasPrefix("gatehouse:") }.count, 1, result.stderr)
        XCTAssertEqual(try seeded.query("SELECT count(*) FROM \"user\""), "0")
        XCTAssertEqual(try catalog(seeded), before, "every index and foreign key as init made them")
        XCTAssertEqual(try pg.run(["demo", "seed", "--store", seeded.location, "--users", "50", "-q"]).status, 0)
        try assertNameIndexIsCurrent(seeded)
    }

    /// A role that may write Better Auth's tables but does not own them cannot set their indexes aside: its seed
    /// goes in batch by batch, and the catalog stays as init made it.
    func testARoleThatDoesNotOwnTheTablesSeedsBatchByBatch() throws {
        let (initialised, seeded) = try initialisedAndEmpty()
        defer { initialised.drop(); seeded.drop() }
        XCTAssertEqual(try pg.run(["init", "--store", seeded.location]).status, 0)
        let superuser = seeded.location.replacingOccurrences(of: "postgresql://gatehouse@", with: "postgresql://postgres@")
        let role = "gh_seed_role_\(UInt32.random(in: .min ... .max))"
        let made = try Tool.run("/usr/bin/psql", [superuser, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "CREATE ROLE \(role) LOGIN",
                                                  "-c", "GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role)", "-c", "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role)"])
        guard made.status == 0 else { throw XCTSkip("the test cluster's superuser could not make a role: \(made.all)") }
        defer { _ = try? Tool.run("/usr/bin/psql", [superuser, "-X", "-q", "-c", "DROP OWNED BY \(role)", "-c", "DROP ROLE \(role)"]) }
        // The master key file is named by the server and database, so this role finds the one init made.
        let location = seeded.location.replacingOccurrences(of: "postgresql://gatehouse@", with: "postgresql://\(role)@")
        let result = try pg.run(["demo", "seed", "--store", location, "--users", "300", "-q"])
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertEqual(try seeded.query("SELECT count(*) FROM \"user\""), "300")
        XCTAssertEqual(try catalog(seeded), try catalog(initialised))
    }

    /// An anchor whose data would leave the years 1970…9999 (malformed dates, an expiry wrapped to year 0000) is bad
    /// usage, and nothing is written.
    func testAnAnchorOutsideTheDateRangeIsRefused() throws {
        let store = scratch.path("anchor.sqlite")
        for anchor in ["0000-01-01", "1970-06-01T00:00:00Z", "9999-12-31T23:59:59Z", "9998-06-01"] {
            let seeded = try cli.run(["demo", "seed", "--store", store, "--users", "10", "--anchor", anchor, "-q"])
            XCTAssertEqual(seeded.status, 2, "\(anchor): \(seeded.all)")
            XCTAssertTrue(seeded.stderr.contains("--anchor must be from 1973-01-01 to 9998-01-01"), seeded.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: store), "\(anchor): no store was created")
        }
        for anchor in ["1973-01-01", "9997-12-31T23:59:59Z"] {
            let seeded = try cli.run(["demo", "seed", "--store", store, "--users", "10", "--anchor", anchor, "-q"])
            XCTAssertEqual(seeded.status, 0, "\(anchor): \(seeded.all)")
        }
        let dates = try sqlite3(store, #"SELECT min(createdAt), max(expiresAt) FROM session"#)
        XCTAssertTrue(dates.hasPrefix("1971-") || dates.hasPrefix("1972-"), dates)
        XCTAssertTrue(dates.hasSuffix("Z") && dates.contains("|9998-01-0"), dates)
    }

    /// A newcomer's store can be logged into at once: the seed makes the first console admin and prints its password
    /// once, as `init` does; a store that has an admin gets none, and `--json` carries it beside the report.
    func testASeedOnAStoreWithoutAdminsCreatesTheFirstAndPrintsItsPasswordOnce() throws {
        let store = scratch.path("admin.sqlite")
        let seeded = try cli.run(["demo", "seed", "--store", store, "--users", "20", "-q"])
        XCTAssertEqual(seeded.status, 0, seeded.all)
        let lines = seeded.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("  created the console admin admin (role admin)"), seeded.stdout)
        let marker = try XCTUnwrap(lines.firstIndex(of: "  password for admin (shown once; store it in your password manager now):"), seeded.stdout)
        let password = lines[marker + 1].trimmingCharacters(in: .whitespaces)
        XCTAssertEqual(password.count, 24, "a generated password")
        XCTAssertEqual(try sqlite3(store, "SELECT username || ' ' || role FROM gatehouse_admins;"), "admin admin")
        XCTAssertFalse(try sqlite3(store, "SELECT group_concat(password_hash) FROM gatehouse_admins;").contains(password))

        let again = try cli.run(["demo", "seed", "--store", store, "--users", "5", "-q"])
        XCTAssertEqual(again.status, 0, again.all)
        XCTAssertFalse(again.all.contains("password"), "a second seed creates no admin: \(again.all)")

        let json = try cli.run(["demo", "seed", "--store", scratch.path("json.sqlite"), "--users", "5", "--json"])
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.all)
        XCTAssertEqual(report["users"] as? Int, 5)
        let admin = try XCTUnwrap(report["admin"] as? [String: Any], json.stdout)
        XCTAssertEqual(admin["username"] as? String, "admin")
        XCTAssertEqual(admin["created"] as? Bool, true)
        XCTAssertEqual((admin["generatedPassword"] as? String)?.count, 24)
        let jsonAgain = try cli.run(["demo", "seed", "--store", scratch.path("json.sqlite"), "--users", "5", "--json"])
        XCTAssertFalse(jsonAgain.stdout.contains("admin"), jsonAgain.stdout)
    }

    /// Demo data never lies after its anchor: every creation, update and last use is at or before it (only expiry
    /// dates and subscription periods may be later), for every kind of person the seed makes.
    func testNoRowIsDatedAfterTheAnchor() throws {
        let store = scratch.path("dates.sqlite")
        let anchor = "2026-06-01T00:00:00.000Z"
        let seeded = try cli.run(["demo", "seed", "--store", store, "--users", "3000", "--anchor", anchor, "-q"])
        XCTAssertEqual(seeded.status, 0, seeded.all)
        let columns = [("user", "createdAt"), ("user", "updatedAt"), ("account", "createdAt"), ("account", "updatedAt"),
                       ("session", "createdAt"), ("session", "updatedAt"), ("verification", "createdAt"),
                       ("users", "created_at"), ("workspaces", "created_at"), ("subscriptions", "created_at"),
                       ("allow_list", "granted_at")]
        for (table, column) in columns {
            let latest = try sqlite3(store, "SELECT coalesce(max(\"\(column)\"), '') FROM \"\(table)\";")
            XCTAssertLessThanOrEqual(latest, anchor, "\(table).\(column)")
        }
        // The seed still makes every kind of person, the split identities and linked accounts included.
        XCTAssertGreaterThan(Int(try sqlite3(store, "SELECT count(*) FROM account WHERE providerId = 'apple';")) ?? 0, 0)
        XCTAssertTrue(seeded.stdout.contains("split identities"), seeded.stdout)
        XCTAssertNotEqual(try sqlite3(store, "SELECT count(*) FROM allow_list;"), "0", "roles are dated too")
    }
}
