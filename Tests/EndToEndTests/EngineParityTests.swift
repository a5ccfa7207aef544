import Foundation
import XCTest

/// The read jobs give the same answers on both engines: one test body runs every read command against a SQLite
/// store and a Postgres store seeded with the same deterministic demo data, and compares what the binary prints.
///
/// The Postgres store is a database of its own on the throw-away cluster ops/test starts (GATEHOUSE_TEST_PG_URI).
final class EngineParityTests: XCTestCase {
    let cli = CLI(environment: ["GATEHOUSE_KEY_DIR": NSTemporaryDirectory() + "gatehouse-parity-keys"])

    /// A store on one engine, initialised and seeded with `users` demo users.
    enum Engine: String, CaseIterable {
        case sqlite, postgres
    }

    /// The test cluster's URI for a new database (dropped by `dropDatabase`), or a skip without a cluster.
    static func newDatabase() throws -> (uri: String, name: String) {
        guard let base = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"], !base.isEmpty else {
            throw XCTSkip("GATEHOUSE_TEST_PG_URI is not set: run ops/test, which starts a throw-away Postgres for these tests")
        }
        let name = "gh_parity_\(UInt32.random(in: .min ... .max))"
        let created = try Tool.run("/usr/bin/psql", [base, "-X", "-q", "-c", "CREATE DATABASE \(name)"])
        XCTAssertEqual(created.status, 0, created.all)
        return (base.replacingOccurrences(of: "/gatehouse_test?", with: "/\(name)?"), name)
    }

    static func dropDatabase(_ name: String) {
        guard let base = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"] else { return }
        _ = try? Tool.run("/usr/bin/psql", [base, "-X", "-q", "-c", "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"])
    }

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
        return text.replacingOccurrences(of: store, with: "STORE")
            .replacingOccurrences(of: ", dates as timestamp with time zone", with: "")
            .replacingOccurrences(of: today + #"T\d\d:\d\d:\d\d\.\d{3}Z"#, with: "NOW", options: .regularExpression)
            // The audit chain's hashes cover those times and the store's name.
            .replacingOccurrences(of: #""(hash|prevHash)" : "[0-9a-f]{64}""#, with: #""$1" : "HASH""#, options: .regularExpression)
    }

    func testEveryReadJobAnswersAlikeOnSQLiteAndPostgres() throws {
        let postgres = try Self.newDatabase()
        defer { Self.dropDatabase(postgres.name) }
        let scratch = try Scratch()
        let stores: [Engine: String] = [.sqlite: scratch.path("parity.sqlite"), .postgres: postgres.uri]
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
            let sqlite = try run(command, store: stores[.sqlite]!), pg = try run(command, store: postgres.uri)
            let label = command.joined(separator: " ")
            XCTAssertEqual(pg.status, sqlite.status, "\(label): \(pg.all.prefix(2000))")
            XCTAssertEqual(normalized(pg.stdout, store: postgres.uri), normalized(sqlite.stdout, store: stores[.sqlite]!), "[\(label)]")
            XCTAssertEqual(normalized(pg.stderr, store: postgres.uri), normalized(sqlite.stderr, store: stores[.sqlite]!), label)
        }
        // Both chains verify (their hashes differ: the entries name different stores and times).
        for store in stores.values {
            let verified = try run(["audit", "verify"], store: store)
            XCTAssertEqual(verified.status, 0, verified.all)
            XCTAssertTrue(verified.stdout.hasPrefix("audit chain intact"), verified.stdout)
        }
        // Merges are not on Postgres yet: refused before anything is read or written, in one line.
        let firstTwo = (users ?? []).prefix(2).compactMap { $0["id"] as? String }
        let plan = try run(["merge", "plan", "--from", firstTwo[0], "--into", firstTwo[1]], store: postgres.uri)
        XCTAssertEqual(plan.status, 1, plan.all)
        XCTAssertTrue(plan.stderr.contains("merges on a Postgres store are not available yet"), plan.stderr)
        XCTAssertEqual(try run(["merge", "list", "--json"], store: postgres.uri).stdout.filter { !$0.isWhitespace }, "[]")
        let health = try run(["health"], store: postgres.uri)
        XCTAssertEqual(health.status, 0, health.all)
        XCTAssertTrue(health.stdout.contains("store.integrity: not applicable on Postgres"), health.stdout)
    }

    func testInitTwiceOnPostgresChangesNothingTheSecondTime() throws {
        let postgres = try Self.newDatabase()
        defer { Self.dropDatabase(postgres.name) }
        XCTAssertEqual(try run(["init"], store: postgres.uri).status, 0)
        let again = try run(["init", "--json"], store: postgres.uri)
        XCTAssertEqual(again.status, 0, again.all)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(((report["store"] as? [String: Any])?["applied"] as? [Any])?.count, 0, again.stdout)
        let audit = try run(["audit", "list", "--json"], store: postgres.uri)
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
        let postgres = try Self.newDatabase()
        defer { Self.dropDatabase(postgres.name) }
        let result = try run(["status"], store: postgres.uri)
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertTrue(result.stderr.contains("is not a Gatehouse store yet"), result.stderr)
        XCTAssertTrue(result.stderr.contains("gatehouse init"), result.stderr)
    }
}
