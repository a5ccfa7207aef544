import Foundation
import XCTest

/// `gatehouse health` on a Postgres store: SQLite's quick_check has a counterpart only where the database has
/// amcheck. Without it the check says so (and how to get it); installed but not granted, it says what to grant;
/// granted, it checks every B-tree index of Better Auth's tables.
final class PostgresHealthTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)

    func testAmcheckFromAbsentToNotGrantedToChecked() throws {
        let store = try TestStore.make(.postgres, in: try Scratch())
        defer { store.drop() }
        XCTAssertEqual(try cli.run(["init", "--store", store.location]).status, 0)
        XCTAssertEqual(try cli.run(["demo", "seed", "--users", "50", "-q", "--store", store.location]).status, 0)
        func integrityLine() throws -> String {
            let health = try cli.run(["health", "--store", store.location])
            XCTAssertNotEqual(health.status, 3, health.all)
            return health.stdout.split(separator: "\n").map(String.init).first { $0.contains("store.integrity") } ?? health.all
        }
        XCTAssertTrue(try integrityLine().contains("not applicable on Postgres without amcheck"))

        // The cluster's superuser installs the extension in this database; the store's role may not run it yet.
        let superuser = store.location.replacingOccurrences(of: "postgresql://gatehouse@", with: "postgresql://postgres@")
        XCTAssertNotEqual(superuser, store.location)
        func asSuperuser(_ sql: String) throws {
            let result = try Tool.run("/usr/bin/psql", [superuser, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            guard result.status == 0 else { throw XCTSkip("the test cluster's superuser could not run \(sql): \(result.all)") }
        }
        try asSuperuser("CREATE EXTENSION amcheck")
        let refused = try integrityLine()
        XCTAssertTrue(refused.contains("amcheck is installed, but this role may not run"), refused)

        try asSuperuser("GRANT EXECUTE ON FUNCTION bt_index_check(regclass) TO gatehouse")
        let checked = try integrityLine()
        XCTAssertTrue(checked.contains("amcheck bt_index_check: ok on"), checked)
        // user, account, session and verification: each has at least its primary key.
        let count = try XCTUnwrap(checked.components(separatedBy: "ok on ").last?.split(separator: " ").first.flatMap { Int($0) }, checked)
        XCTAssertGreaterThanOrEqual(count, 4, checked)
    }

    /// With a budget too small for more than one index, each recorded run checks the index that waited longest, so
    /// as many runs as there are indexes check each once; --deep checks them all in one run.
    func testAmcheckResumesIndexByIndexAcrossRecordedRuns() throws {
        let store = try TestStore.make(.postgres, in: try Scratch())
        defer { store.drop() }
        XCTAssertEqual(try cli.run(["init", "--store", store.location]).status, 0)
        XCTAssertEqual(try cli.run(["demo", "seed", "--users", "50", "-q", "--store", store.location]).status, 0)
        let superuser = store.location.replacingOccurrences(of: "postgresql://gatehouse@", with: "postgresql://postgres@")
        for sql in ["CREATE EXTENSION amcheck", "GRANT EXECUTE ON FUNCTION bt_index_check(regclass) TO gatehouse"] {
            let result = try Tool.run("/usr/bin/psql", [superuser, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            guard result.status == 0 else { throw XCTSkip("the test cluster's superuser could not run \(sql): \(result.all)") }
        }
        func integrity(_ extra: [String]) throws -> (status: String, summary: String, verdicts: [String: Double]) {
            let result = try cli.run(["health", "--store", store.location, "--json"] + extra)
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
            let check = try XCTUnwrap((object["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "store.integrity" }, result.stdout)
            var verdicts: [String: Double] = [:]
            for sample in check["samples"] as? [[String: Any]] ?? [] where sample["metric"] as? String == "gatehouse_store_integrity_checked_timestamp_seconds" {
                verdicts[(sample["labels"] as? [String: String])?["index"] ?? "?"] = sample["value"] as? Double
            }
            return (check["status"] as? String ?? "?", check["summary"] as? String ?? "", verdicts)
        }
        let deep = try integrity(["--deep", "--sweep-budget", "0"])
        let count = try XCTUnwrap(deep.summary.components(separatedBy: "ok on ").last?.split(separator: " ").first.flatMap { Int($0) }, deep.summary)
        XCTAssertGreaterThanOrEqual(count, 4, deep.summary)
        XCTAssertEqual(deep.verdicts.count, count, "--deep checks every index in one run")
        var seen: [String] = []
        for run in 1...count {
            let result = try integrity(["--record", "--sweep-budget", "0"])
            XCTAssertEqual(result.status, "ok", result.summary)
            XCTAssertTrue(result.summary.contains("(1 of \(count) index(es) of Better Auth's tables this run; "), result.summary)
            XCTAssertEqual(result.verdicts.count, run, "verdicts carry forward through recorded runs: \(result.summary)")
            let new = Set(result.verdicts.keys).subtracting(seen)
            XCTAssertEqual(new.count, 1, result.summary)
            seen += new
            XCTAssertTrue(result.summary.contains("ok on \(new.first ?? "?") ("), result.summary)
            XCTAssertTrue(result.summary.contains(run < count ? "\(count - run) not checked yet" : "every index was checked clean within the last"), result.summary)
        }
        XCTAssertEqual(Set(seen).count, count, "each index once per cycle: \(seen)")
    }

    /// Health's account-links walk on Postgres goes by ranges of user ids, each answered by the server's anti-joins:
    /// the same whole-run counts, and the same cycle of recorded runs, as SQLite's ordered walk (one dangling account,
    /// one recent signup without its sync row).
    func testTheAccountLinksWalkIsSharedByRecordedRunsInRanges() throws {
        let store = try TestStore.make(.postgres, in: try Scratch())
        defer { store.drop() }
        XCTAssertEqual(try cli.run(["init", "--store", store.location]).status, 0)
        XCTAssertEqual(try cli.run(["demo", "seed", "--users", "30", "-q", "--store", store.location]).status, 0)
        let superuser = store.location.replacingOccurrences(of: "postgresql://gatehouse@", with: "postgresql://postgres@")
        // The foreign key would refuse the dangling row: the superuser inserts it as a replica does.
        let result = try Tool.run("/usr/bin/psql", [superuser, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", """
            UPDATE "user" SET "createdAt" = now() - interval '1 hour' WHERE id = (SELECT substr(sub, 13) FROM users ORDER BY sub DESC LIMIT 1);
            DELETE FROM workspaces WHERE owner_id = (SELECT id FROM users ORDER BY sub DESC LIMIT 1);
            DELETE FROM subscriptions WHERE user_id = (SELECT id FROM users ORDER BY sub DESC LIMIT 1);
            DELETE FROM users WHERE id = (SELECT id FROM users ORDER BY sub DESC LIMIT 1);
            SET session_replication_role = replica;
            INSERT INTO account (id, issuer, "accountId", "providerId", "userId", "createdAt", "updatedAt")
            VALUES ('dangling0000000000000000000000001', 'https://accounts.google.com', '1999', 'google', '0', now(), now());
            """])
        guard result.status == 0 else { throw XCTSkip("the test cluster's superuser could not prepare the store: \(result.all)") }
        try assertAccountLinksCycle(cli, store: store.location)
    }

    /// A role without rights on the tables: every command is one line naming what to grant (health: UNKNOWN); with
    /// SELECT only, reads work and a write refuses without changing anything.
    func testARoleWithoutRightsIsOneClearLineAndWritesNothing() throws {
        let store = try TestStore.make(.postgres, in: try Scratch())
        defer { store.drop() }
        XCTAssertEqual(try cli.run(["init", "--store", store.location]).status, 0)
        XCTAssertEqual(try cli.run(["demo", "seed", "--users", "20", "-q", "--store", store.location]).status, 0)
        let superuser = store.location.replacingOccurrences(of: "postgresql://gatehouse@", with: "postgresql://postgres@")
        let role = "gh_norights_\(UInt32.random(in: .min ... .max))"
        func asSuperuser(_ sql: String) throws {
            let result = try Tool.run("/usr/bin/psql", [superuser, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            guard result.status == 0 else { throw XCTSkip("the test cluster's superuser could not run \(sql): \(result.all)") }
        }
        try asSuperuser("CREATE ROLE \(role) LOGIN")
        defer { try? asSuperuser("DROP OWNED BY \(role); DROP ROLE \(role)") }
        let limited = store.location.replacingOccurrences(of: "postgresql://gatehouse@", with: "postgresql://\(role)@")
        let policySet = ["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "SUP-1"]
        for (command, status) in [(["status"], 1), (["users", "show", "nobody@example.com"], 1), (["health"], 3), (policySet, 1)] {
            let run = try cli.run(command + ["--store", limited])
            XCTAssertEqual(run.status, Int32(status), "\(command): \(run.all)")
            XCTAssertTrue(run.stderr.contains("the store's role may not do this") && run.stderr.contains("fix: grant the role"), run.stderr)
            XCTAssertLessThanOrEqual(run.stderr.split(separator: "\n").count, 2, run.stderr)
        }

        try asSuperuser("GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)")
        XCTAssertEqual(try cli.run(["status", "--store", limited]).status, 0)
        let entries = try store.query("SELECT count(*) FROM gatehouse_audit"), history = try store.query("SELECT count(*) FROM gatehouse_policy_history")
        let refused = try cli.run(policySet + ["--store", limited])
        XCTAssertEqual(refused.status, 1, refused.all)
        XCTAssertTrue(refused.stderr.contains("the store's role may not do this"), refused.stderr)
        XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_audit"), entries, "nothing was written")
        XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_policy_history"), history)
    }
}
