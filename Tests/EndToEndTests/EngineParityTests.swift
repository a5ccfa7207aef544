import Foundation
import XCTest

/// The read jobs give the same answers on both engines: one test body runs every read command against a SQLite
/// store and a Postgres store seeded with the same deterministic demo data, and compares what the binary prints.
///
/// The Postgres store is a database of its own on the throw-away cluster ops/test starts (GATEHOUSE_TEST_PG_URI).
final class EngineParityTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)

    /// `gatehouse ARGUMENTS --store STORE`.
    func run(_ arguments: [String], store: String) throws -> CLI.Result {
        try cli.run(arguments + ["--store", store])
    }

    /// What a command printed, with the store's name and the Postgres date types (which `status` and the
    /// schema lines describe, truly) put in common form.
    /// Times the commands stamp as they run (the audit entries of init and seed, `checkedAt`, `generatedAt`) are
    /// today's on both stores and differ by milliseconds: they read `NOW`. Seeded data keeps its own times.
    func normalized(_ text: String, store: String) -> String {
        let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
        // A store's URI quoted for the shell (the next-page line of `users search`) reads as the path does.
        return text.replacingOccurrences(of: "'\(store)'", with: "STORE").replacingOccurrences(of: store, with: "STORE")
            .replacingOccurrences(of: ", dates as timestamp with time zone", with: "")
            .replacingOccurrences(of: today + #"T\d\d:\d\d:\d\d\.\d{3}Z"#, with: "NOW", options: .regularExpression)
            // The audit chain's hashes cover those times and the store's name.
            .replacingOccurrences(of: #""(hash|prevHash)" : "[0-9a-f]{64}""#, with: #""$1" : "HASH""#, options: .regularExpression)
    }

    func testEveryReadJobAnswersAlikeOnSQLiteAndPostgres() throws {
        let scratch = try Scratch()
        let database = try TestStore.make(.postgres, in: scratch)
        defer { database.drop() }
        let stores: [TestStore.Engine: String] = [.sqlite: scratch.path("parity.sqlite"), .postgres: database.location]
        for (engine, store) in stores {
            let initialised = try run(["init"], store: store)
            XCTAssertEqual(initialised.status, 0, "\(engine): \(initialised.all)")
            let seeded = try run(["demo", "seed", "--users", "150"], store: store)
            XCTAssertEqual(seeded.status, 0, "\(engine): \(seeded.all)")
        }
        // A user and an email from the seed, read from the SQLite store's JSON.
        let listed = try run(["users", "search", "a", "--json"], store: stores[.sqlite]!)
        let users = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])["users"] as? [[String: Any]]
        let first = try XCTUnwrap(users?.first)
        let id = try XCTUnwrap(first["id"] as? String), email = try XCTUnwrap(first["email"] as? String)

        let commands: [[String]] = [
            ["status", "--json"],
            ["audit", "list", "--action", "demo.seed", "--json"],
            ["users", "search", "ana"], ["users", "search", "a", "--limit", "7"], ["users", "search", "example"],
            ["users", "search", String(email.prefix(5))], ["users", "search", "zzzz-no-such"],
            ["users", "show", id], ["users", "show", email], ["users", "show", id, "--json"], ["users", "show", "no-such-user"],
            ["users", "duplicates"], ["users", "duplicates", "--json"],
            ["accounts", "check"], ["accounts", "check", "--json"],
            ["policy", "show"], ["policy", "history"], ["policy", "show", "--json"],
            ["policy", "simulate", "link", "--provider", "google", "--email", email, "--existing-email", email],
            ["gates", "show"], ["gates", "history"], ["gates", "export"],
            ["apple", "key", "list"], ["merge", "list"], ["merge", "show", "1"],
        ]
        for command in commands {
            let sqlite = try run(command, store: stores[.sqlite]!), pg = try run(command, store: database.location)
            let label = command.joined(separator: " ")
            XCTAssertEqual(pg.status, sqlite.status, "\(label): \(pg.all.prefix(2000))")
            XCTAssertEqual(normalized(pg.stdout, store: database.location), normalized(sqlite.stdout, store: stores[.sqlite]!), "[\(label)]")
            XCTAssertEqual(normalized(pg.stderr, store: database.location), normalized(sqlite.stderr, store: stores[.sqlite]!), label)
        }
        // Both chains verify (their hashes differ: the entries name different stores and times).
        for store in stores.values {
            let verified = try run(["audit", "verify"], store: store)
            XCTAssertEqual(verified.status, 0, verified.all)
            XCTAssertTrue(verified.stdout.hasPrefix("audit chain intact"), verified.stdout)
        }
        let health = try run(["health"], store: database.location)
        XCTAssertEqual(health.status, 0, health.all)
        XCTAssertTrue(health.stdout.contains("store.integrity: not applicable on Postgres"), health.stdout)
    }

    func testInitTwiceOnPostgresChangesNothingTheSecondTime() throws {
        let database = try TestStore.make(.postgres, in: try Scratch())
        defer { database.drop() }
        XCTAssertEqual(try run(["init"], store: database.location).status, 0)
        let again = try run(["init", "--json"], store: database.location)
        XCTAssertEqual(again.status, 0, again.all)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(((report["store"] as? [String: Any])?["applied"] as? [Any])?.count, 0, again.stdout)
        let audit = try run(["audit", "list", "--json"], store: database.location)
        XCTAssertFalse(audit.stdout.contains("store.upgrade"), audit.stdout)
        XCTAssertTrue(audit.stdout.contains("store.init"), audit.stdout)
    }

    func testAPostgresStoreThatCannotBeReachedIsOneClearLineWithoutThePassword() throws {
        let password = "Sup3rSecretPw"
        let cases: [(String, String)] = [
            ("postgresql://gatehouse:\(password)@/gatehouse_test?host=/nonexistent-gatehouse-socket-dir", "cannot reach the store"),
            ("postgres://nobody:\(password)@/nope?host=/nonexistent-gatehouse-socket-dir&sslmode=disable", "cannot reach the store"),
        ]
        for (uri, expected) in cases {
            for command in [["status"], ["users", "search", "ana"], ["policy", "show", "--json"], ["init"]] {
                let result = try run(command, store: uri)
                XCTAssertEqual(result.status, 1, "\(command): \(result.all)")
                XCTAssertTrue(result.stderr.contains(expected), result.stderr)
                XCTAssertTrue(result.stderr.contains("***"), result.stderr)
                XCTAssertFalse(result.all.contains(password), result.all)
            }
        }
        let health = try run(["health"], store: cases[0].0)
        XCTAssertEqual(health.status, 3, health.all)
        XCTAssertFalse(health.all.contains(password), health.all)
    }

    func testADatabaseWithoutGatehouseIsRefusedByName() throws {
        let database = try TestStore.make(.postgres, in: try Scratch())
        defer { database.drop() }
        let result = try run(["status"], store: database.location)
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertTrue(result.stderr.contains("is not a Gatehouse store yet"), result.stderr)
        XCTAssertTrue(result.stderr.contains("gatehouse init"), result.stderr)
    }

    /// A standby, or a database whose `default_transaction_read_only` is on: reads work, every write is one clear line
    /// with exit 1 and changes nothing, and health says the store is read-only.
    func testAReadOnlyPostgresStoreRefusesWritesAndStillReads() throws {
        let database = try TestStore.make(.postgres, in: try Scratch())
        defer { database.drop() }
        XCTAssertEqual(try run(["init"], store: database.location).status, 0)
        XCTAssertEqual(try run(["demo", "seed", "--users", "10"], store: database.location).status, 0)
        _ = try database.query("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_read_only = on', current_database()); END $$")

        XCTAssertEqual(try run(["status"], store: database.location).status, 0)
        XCTAssertEqual(try run(["users", "search", "a"], store: database.location).status, 0)
        for command in [["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "SUP-1"],
                        ["admins", "add", "rita", "--role", "viewer"],
                        ["demo", "seed", "--users", "5"], ["health", "--record"]] {
            let result = try run(command, store: database.location)
            XCTAssertEqual(result.status, command.first == "health" ? 3 : 1, "\(command): \(result.all)")
            XCTAssertTrue(result.stderr.contains("is read-only") || result.stdout.contains("is read-only"), "\(command): \(result.all)")
            XCTAssertFalse(result.all.contains("\n  at "), result.all)
        }
        let policy = try run(["policy", "show", "--json"], store: database.location)
        XCTAssertTrue(policy.stdout.contains("\"version\" : 0"), policy.stdout)
        let health = try run(["health"], store: database.location)
        XCTAssertTrue(health.stdout.contains("the store is read-only"), health.stdout)
    }
}
