import Foundation
import XCTest

/// `gatehouse users delete` as an operator runs it, on SQLite and (under ops/test) Postgres and D1:
/// plan, apply, undo giving back every row (`sqlite3 .dump` / `pg_dump --data-only` of the affected tables equal
/// before the delete and after the undo), a stale plan refused, SIGKILL mid-apply, purge, help, JSON and exit codes.
final class UserDeletionCommandTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)
    let u1 = "U1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", u2 = "U2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    let tables = ["user", "account", "session", "verification", "users", "workspaces", "subscriptions", "allow_list", "passkey", "seats", "seat_notes"]

    /// U1 (kept) and U2 (deleted): U2 with a Google account (no token), sessions, a verification row, a sync row with
    /// workspaces and a subscription, a role, a passkey (a plugin table), `seats` keyed by (id, sub) on users, and
    /// `seat_notes` referencing seats (a second foreign-key hop), and on SQLite and D1 (where keys are not enforced for rows
    /// written without `foreign_keys`) one dangling session of a user who is gone. The passkey's counter is 2^53 + 1, or on
    /// D1 2^53 - 1: D1 answers with JavaScript numbers, exact only below 2^53.
    func makeStore(_ engine: TestStore.Engine, _ scratch: Scratch, sessions: Int = 3, name: String = "store") throws -> TestStore {
        let store = try TestStore.make(engine, in: scratch, name: name)
        let initialised = try cli.run(["init", "--store", store.location])
        XCTAssertEqual(initialised.status, 0, initialised.all)
        let integer = engine == .postgres ? "bigint" : "INTEGER", blob = engine == .postgres ? "bytea" : "BLOB"
        let bytes = engine == .postgres ? "'\\x00ff10'" : "X'00ff10'"
        let series = engine != .postgres
            ? "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(sessions)) SELECT i FROM n"
            : "SELECT i FROM generate_series(1, \(sessions)) AS i"
        let boolean = engine == .postgres ? "true" : "1"
        let created = try store.query("""
            INSERT INTO "user" VALUES ('\(u1)', 'Ana Costa', 'zq7del01@privaterelay.appleid.com', \(boolean), NULL, '2025-03-01T10:00:00.000Z', '2025-03-01T10:00:00.000Z');
            INSERT INTO "user" VALUES ('\(u2)', 'Bo Silva', 'bo.delete@gmail.com', \(boolean), 'https://x/y.png', '2025-03-04T10:00:00.123Z', '2025-03-04T10:00:00.123Z');
            INSERT INTO account (id, issuer, "accountId", "providerId", "userId", "createdAt", "updatedAt") VALUES
              ('acc1', 'https://appleid.apple.com', '001234.apple.0001', 'apple', '\(u1)', '2025-03-01T10:00:00.000Z', '2025-03-01T10:00:00.000Z'),
              ('acc2', 'https://accounts.google.com', '104857600000000000002', 'google', '\(u2)', '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z');
            INSERT INTO session SELECT 'sess' || i, '2030-01-01T00:00:00.000Z', 'tok' || i, '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z', '81.2.3.4', 'UA', '\(u2)' FROM (\(series)) AS n;
            \(engine != .postgres ? "INSERT INTO session VALUES ('dangling', '2030-01-01T00:00:00.000Z', 'tokd', '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z', NULL, NULL, 'gone0000000000000000000000000000');" : "")
            INSERT INTO verification VALUES ('v1', 'sign-in-otp-bo.delete@gmail.com', '123456:0', '2030-01-01T00:00:00.000Z', '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z'),
                                            ('v2', 'sign-in-otp-other@example.com', '654321:0', '2030-01-01T00:00:00.000Z', '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z');
            INSERT INTO users (id, sub, display_name, created_at) VALUES (1, 'better_auth|\(u1)', 'Ana', '2025-03-01'), (2, 'better_auth|\(u2)', 'Bo', '2025-03-04');
            INSERT INTO workspaces VALUES ('ws1', 2, 'Project 1', '2025-03-04'), ('ws2', 2, 'Project 2', '2025-03-05'), ('ws3', 1, 'Ana''s', '2025-03-05');
            INSERT INTO subscriptions VALUES ('sub1', 2, 'pro', 'active', '2026-01-01', '2025-03-04');
            INSERT INTO allow_list VALUES ('better_auth|\(u2)', 'dev', '2025-01-01'), ('better_auth|\(u1)', 'admin', '2025-01-01');
            CREATE TABLE passkey (id text PRIMARY KEY, "userId" text NOT NULL REFERENCES "user" (id) ON DELETE CASCADE, "publicKey" \(blob), counter \(integer), score real);
            INSERT INTO passkey VALUES ('pk1', '\(u2)', \(bytes), \(engine == .d1 ? "9007199254740991" : "9007199254740993"), 0.1), ('pk2', '\(u1)', NULL, 1, NULL);
            CREATE UNIQUE INDEX users_id_sub_uidx ON users (id, sub);
            CREATE TABLE seats (n integer PRIMARY KEY, owner \(integer), owner_sub text, FOREIGN KEY (owner, owner_sub) REFERENCES users (id, sub));
            CREATE TABLE seat_notes (n integer PRIMARY KEY, seat integer REFERENCES seats (n) ON DELETE CASCADE, note text);
            INSERT INTO seats VALUES (1, 2, 'better_auth|\(u2)'), (2, 1, 'better_auth|\(u1)');
            INSERT INTO seat_notes VALUES (1, 1, 'U2''s note'), (2, 2, 'U1''s note');
            """)
        XCTAssertEqual(created, "", "the fixture loads on \(engine)")
        return store
    }

    /// The affected tables' rows as the engine's own dump tool prints them (`sqlite3 .dump`, `pg_dump --data-only`),
    /// sorted (a re-inserted row may sit elsewhere on disk).
    func dump(_ store: TestStore) throws -> [String] {
        switch store.engine {
        case .sqlite, .d1:
            return try tables.flatMap { table in
                try sqlite3(store.d1File ?? store.location, ".dump '\(table)'").split(separator: "\n").map(String.init).filter { $0.hasPrefix("INSERT") }
            }.sorted()
        case .postgres:
            let result = try Tool.run(try PostgresMergeTests.pgDump(), [store.location, "--data-only", "--no-owner"] + tables.map { "--table=\"\($0)\"" })
            XCTAssertEqual(result.status, 0, result.stderr)
            return result.stdout.split(separator: "\n").map(String.init)
                .filter { !$0.contains("setval(") && !$0.hasPrefix("--") && !$0.hasPrefix("\\restrict") && !$0.hasPrefix("\\unrestrict") && !$0.isEmpty }.sorted()
        }
    }

    func json(_ result: CLI.Result) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
    }

    func plan(_ store: TestStore, _ user: String, ticket: String = "SUP-1") throws -> String {
        let planned = try cli.run(["users", "delete", "plan", user, "--ticket", ticket, "--store", store.location, "--json"])
        XCTAssertEqual(planned.status, 0, planned.all)
        return try XCTUnwrap(try json(planned)["planID"] as? String)
    }

    func testPlanApplyUndoGiveBackEveryRowOnEachEngine() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            let before = try dump(store)
            let planned = try cli.run(["users", "delete", "plan", "bo.delete@gmail.com", "--ticket", "SUP-1", "--store", store.location, "--json"])
            XCTAssertEqual(planned.status, 0, planned.all)
            let plan = try json(planned)
            let counts = try XCTUnwrap(plan["tables"] as? [String: Int])
            XCTAssertEqual(counts, ["user": 1, "account": 1, "session": 3, "verification": 1, "users": 1, "workspaces": 2, "subscriptions": 1,
                                    "allow_list": 1, "passkey": 1, "seats": 1, "seat_notes": 1], "\(engine)")
            XCTAssertEqual(plan["canRevokeAppleTokens"] as? Bool ?? false, false)
            let id = try XCTUnwrap(plan["planID"] as? String)
            let text = try cli.run(["users", "delete", "plan", u2, "--ticket", "SUP-1", "--store", store.location])
            XCTAssertTrue(text.stdout.contains("deletion plan \(id)") && text.stdout.contains("seat_notes.seat → seats.n"), text.all)
            XCTAssertFalse(text.all.contains("tok1"), "no row values in a plan: \(text.stdout)")

            // (Revoking Apple tokens before a deletion is tested against a local Apple in AppleRevokeTests.)

            let applied = try cli.run(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "Google only, SUP-1", "--store", store.location, "--json"])
            XCTAssertEqual(applied.status, 0, applied.all)
            XCTAssertEqual(try store.query("SELECT count(*) FROM \"user\""), "1")
            XCTAssertEqual(try store.query("SELECT n FROM seat_notes"), "2")
            XCTAssertEqual(try store.query("SELECT id FROM session"), engine != .postgres ? "dangling" : "", "a dangling row of someone else stays")
            XCTAssertEqual(try store.query("SELECT id FROM workspaces"), "ws3")
            XCTAssertNotEqual(try dump(store), before)

            let undone = try cli.run(["users", "delete", "undo", "1", "--reason", "deleted by mistake", "--store", store.location])
            XCTAssertEqual(undone.status, 0, undone.all)
            XCTAssertTrue(undone.stdout.contains("7 row(s) restored") || undone.stdout.contains("row(s) restored"), undone.stdout)
            XCTAssertTrue(undone.stdout.contains("are NULL"), undone.stdout)
            XCTAssertEqual(try dump(store), before, "every row back, every type, on \(engine)")
            let again = try cli.run(["users", "delete", "undo", "1", "--reason", "again", "--store", store.location])
            XCTAssertEqual(again.status, 1, again.all)

            let shown = try cli.run(["users", "delete", "show", "1", "--store", store.location, "--json"])
            XCTAssertEqual(shown.status, 0, shown.all)
            XCTAssertEqual(try json(shown)["status"] as? String, "undone")
            let audit = try store.query("SELECT action FROM gatehouse_audit WHERE action LIKE 'user.delete.%' ORDER BY id")
            XCTAssertEqual(audit, "user.delete.plan\nuser.delete.plan\nuser.delete.apply\nuser.delete.undo")
        }
    }

    func testAStalePlanIsRefusedWhenBetterAuthWroteASessionAndNothingChanges() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            let id = try plan(store, u2)
            _ = try store.query("INSERT INTO session VALUES ('late', '2030-01-01T00:00:00.000Z', 'tokl', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', NULL, NULL, '\(u2)')")
            let before = try dump(store)
            let applied = try cli.run(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "x", "--store", store.location])
            XCTAssertEqual(applied.status, 1, applied.all)
            XCTAssertTrue(applied.stderr.contains("changed since the plan") && applied.stderr.contains("sessions"), applied.stderr)
            XCTAssertEqual(try dump(store), before)
            XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_user_deletions"), "0")
        }
    }

    /// On D1 a row holding an integer D1 cannot answer exactly (2^53 + 1 arrives as 2^53) is refused in one line that
    /// says so, by apply and by plan, and nothing is deleted (its guard could never match what the row holds).
    func testOnD1AnIntegerBeyond2To53IsRefusedInOneLineAndNothingChanges() throws {
        guard TestStore.d1Control != nil else { throw XCTSkip("no D1 test server: run ops/test") }
        let scratch = try Scratch()
        let store = try makeStore(.d1, scratch)
        let id = try plan(store, u2)
        _ = try store.query("UPDATE passkey SET counter = 9007199254740993 WHERE id = 'pk1'")
        let before = try dump(store)
        let applied = try cli.run(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "x", "--store", store.location])
        let planned = try cli.run(["users", "delete", "plan", u2, "--ticket", "SUP-1", "--store", store.location])
        for refused in [applied, planned] {
            XCTAssertEqual(refused.status, 1, refused.all)
            XCTAssertTrue(refused.stderr.hasPrefix("gatehouse: D1 sent \(store.location) an integer beyond 2^53, which a JavaScript number cannot hold exactly\n"),
                          refused.stderr)
        }
        XCTAssertEqual(try dump(store), before)
        XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_user_deletions"), "0")
    }

    /// SIGKILL at points spread over `users delete apply` (slowed inside its transaction): the store is always either
    /// untouched or fully changed, and intact.
    func testKillDuringApplyLeavesTheStoreDeletedOrUntouched() throws {
        let scratch = try Scratch()
        let store = try makeStore(.sqlite, scratch, sessions: 40)
        let id = try plan(store, u2)
        _ = try sqlite3(store.location, "PRAGMA wal_checkpoint(TRUNCATE);")
        let untouched = try dump(store)
        // The fixture's dangling session is the only foreign-key problem, before and after.
        let danglingOnly = try sqlite3(store.location, "PRAGMA foreign_key_check")
        /// A copy of the store with its master key file beside it (the sealed copy needs the key).
        func copy(_ name: String) throws -> TestStore {
            let copy = try store.copy(in: scratch, name: name)
            try FileManager.default.copyItem(atPath: store.location + ".key", toPath: copy.location + ".key")
            return copy
        }
        let reference = try copy("reference")
        let referenceRun = try cli.run(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "r", "--store", reference.location])
        XCTAssertEqual(referenceRun.status, 0, referenceRun.all)
        let deleted = try dump(reference)
        var delayed = cli
        delayed.environment["GATEHOUSE_TEST_DELETE_DELAY_MS"] = "5"
        var outcomes: [String: Int] = [:]
        let runs = 20
        for run in 0..<runs {
            let copy = try copy("run-\(run)")
            let process = try delayed.start(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "r", "--store", copy.location])
            usleep(UInt32(run * 500_000 / runs + Int.random(in: 0..<10_000)))
            kill(process.process.processIdentifier, SIGKILL)
            _ = try process.finish()
            XCTAssertEqual(try sqlite3(copy.location, "PRAGMA integrity_check"), "ok", "run \(run)")
            XCTAssertEqual(try sqlite3(copy.location, "PRAGMA foreign_key_check"), danglingOnly, "run \(run)")
            let state = try dump(copy), records = try sqlite3(copy.location, "SELECT count(*) FROM gatehouse_user_deletions")
            if state == untouched {
                XCTAssertEqual(records, "0", "run \(run)")
                outcomes["untouched", default: 0] += 1
            } else if state == deleted {
                XCTAssertEqual(records, "1", "run \(run)")
                outcomes["deleted", default: 0] += 1
            } else {
                XCTFail("run \(run): the store is neither untouched nor fully changed")
            }
        }
        XCTAssertGreaterThan(outcomes["untouched", default: 0], 0, "\(outcomes)")
        XCTAssertGreaterThan(outcomes["deleted", default: 0], 0, "\(outcomes)")
        print("kill during users delete apply: \(outcomes)")
    }

    /// The same on Postgres: the server rolls back the killed connection's transaction; every run leaves the store
    /// untouched or fully deleted (an applied run is undone for the next, which also proves the undo again).
    func testKillDuringApplyOnPostgresLeavesTheStoreDeletedOrUntouched() throws {
        let scratch = try Scratch()
        let store = try makeStore(.postgres, scratch, sessions: 40)
        defer { store.drop() }
        var id = try plan(store, u2)
        func applied() throws -> String { try store.query("SELECT count(*) FROM gatehouse_user_deletions WHERE status = 'applied'") }
        // An undone plan is spent: each undo is followed by planning again, which gives the next round's plan.
        func undo() throws {
            let last = try store.query("SELECT max(id) FROM gatehouse_user_deletions WHERE status = 'applied'")
            let undone = try cli.run(["users", "delete", "undo", last, "--reason", "kill test", "--store", store.location])
            XCTAssertEqual(undone.status, 0, undone.all)
            let next = try plan(store, u2)
            XCTAssertNotEqual(next, id, "planning again after an undo gives a new plan")
            id = next
        }
        let untouched = try dump(store)
        XCTAssertEqual(try cli.run(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "r", "--store", store.location]).status, 0)
        let deleted = try dump(store)
        XCTAssertNotEqual(deleted, untouched)
        try undo()
        XCTAssertEqual(try dump(store), untouched)
        var delayed = cli
        delayed.environment["GATEHOUSE_TEST_DELETE_DELAY_MS"] = "5"
        let runs = 16
        var outcomes: [String: Int] = [:]
        for run in 0..<runs {
            let process = try delayed.start(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "r", "--store", store.location])
            usleep(UInt32(run * 700_000 / runs + Int.random(in: 0..<10_000)))
            kill(process.process.processIdentifier, SIGKILL)
            _ = try process.finish()
            var now = try dump(store)
            for _ in 0..<50 where now != untouched && now != deleted { usleep(20_000); now = try dump(store) }
            if now == untouched {
                XCTAssertEqual(try applied(), "0", "run \(run)")
                outcomes["untouched", default: 0] += 1
            } else if now == deleted {
                XCTAssertEqual(try applied(), "1", "run \(run)")
                outcomes["deleted", default: 0] += 1
                try undo()
            } else {
                XCTFail("run \(run): the store is neither untouched nor fully changed")
                break
            }
        }
        XCTAssertGreaterThan(outcomes["untouched", default: 0], 0, "\(outcomes)")
        XCTAssertGreaterThan(outcomes["deleted", default: 0], 0, "\(outcomes)")
        print("kill during users delete apply on Postgres: \(outcomes)")
    }

    /// Better Auth signing the user in while apply holds their rows (Postgres, apply slowed inside its transaction):
    /// the new session's foreign-key check waits for the deletion, then fails — never a session of a deleted user.
    func testASignInRacingApplyOnPostgresWaitsAndFailsNeverDangles() throws {
        let scratch = try Scratch()
        let store = try makeStore(.postgres, scratch)
        defer { store.drop() }
        let id = try plan(store, u2)
        var slowed = cli
        slowed.environment["GATEHOUSE_TEST_DELETE_DELAY_MS"] = "150"
        let holding = try slowed.start(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "race", "--store", store.location])
        var tries = 0
        while try store.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") == "0" {
            tries += 1
            guard tries < 400 else { return XCTFail("apply never took the writer lock") }
            usleep(25_000)
        }
        usleep(300_000)
        let signIn = try Tool.run("/usr/bin/psql", [store.location, "-X", "-c",
            "INSERT INTO session VALUES ('racing', '2030-01-01T00:00:00.000Z', 'tokr', now(), now(), NULL, NULL, '\(u2)')"])
        let applied = try holding.finish()
        XCTAssertEqual(applied.status, 0, applied.all)
        XCTAssertNotEqual(signIn.status, 0, "the sign-in must not outlive the user: \(signIn.all)")
        XCTAssertTrue(signIn.all.contains("foreign key"), signIn.all)
        XCTAssertEqual(try store.query("SELECT count(*) FROM session WHERE \"userId\" = '\(u2)'"), "0")
        XCTAssertEqual(try store.query("SELECT count(*) FROM \"user\" WHERE id = '\(u2)'"), "0")
    }

    func testPurgeAfterExpiryAndListShowJSON() throws {
        for engine in TestStore.engines {
        let scratch = try Scratch()
        let store = try makeStore(engine, scratch)
        defer { store.drop() }
        let id = try plan(store, u2)
        let applied = try cli.run(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "r", "--retain", "2h", "--store", store.location, "--json"])
        XCTAssertEqual(applied.status, 0, applied.all)
        XCTAssertEqual(try json(applied)["notRestorable"] as? [String], ["account.accessToken", "account.refreshToken", "account.idToken"])
        let nothing = try cli.run(["users", "delete", "purge", "--store", store.location])
        XCTAssertEqual(nothing.status, 0, nothing.all)
        XCTAssertEqual(nothing.stdout, "nothing to purge\n")
        // The retention ends: move the record's clock back rather than wait two hours.
        _ = try store.query("UPDATE gatehouse_user_deletions SET retain_until = '2026-01-01T00:00:00.000Z'")
        let purged = try cli.run(["users", "delete", "purge", "--store", store.location, "--json"])
        XCTAssertEqual(purged.status, 0, purged.all)
        XCTAssertEqual(try json(purged)["purged"] as? [Int], [1])
        XCTAssertEqual(try store.query("SELECT status, (sealed_rows IS NULL)::text FROM gatehouse_user_deletions".replacingOccurrences(of: "::text", with: engine == .postgres ? "::int::text" : "")), "purged|1")
        let undo = try cli.run(["users", "delete", "undo", "1", "--reason", "late", "--store", store.location])
        XCTAssertEqual(undo.status, 1, undo.all)
        XCTAssertTrue(undo.stderr.contains("purged"), undo.stderr)
        let list = try cli.run(["users", "delete", "list", "--store", store.location])
        XCTAssertTrue(list.stdout.contains("purged") && list.stdout.contains(u2), list.stdout)
        let listed = try cli.run(["users", "delete", "list", "--store", store.location, "--json"])
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])?.count, 1, listed.all)
        let shown = try cli.run(["users", "delete", "show", "1", "--store", store.location])
        XCTAssertTrue(shown.stdout.contains("the sealed rows are destroyed"), shown.stdout)
        }
    }

    /// The health timer's recorded run purges expired copies (ops/systemd/gatehouse-health.service runs
    /// `gatehouse health --record …`), and leaves unexpired ones.
    func testHealthRecordPurgesExpiredDeletions() throws {
        let scratch = try Scratch()
        let store = try makeStore(.sqlite, scratch)
        let id = try plan(store, u2)
        XCTAssertEqual(try cli.run(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "r", "--store", store.location]).status, 0)
        let fresh = try cli.run(["health", "--record", "--store", store.location])
        XCTAssertTrue([0, 1, 2].contains(fresh.status), fresh.all)
        XCTAssertEqual(try sqlite3(store.location, "SELECT status FROM gatehouse_user_deletions"), "applied")
        _ = try sqlite3(store.location, "UPDATE gatehouse_user_deletions SET retain_until = '2026-01-01T00:00:00.000Z'")
        let expired = try cli.run(["health", "--record", "--store", store.location])
        XCTAssertTrue([0, 1, 2].contains(expired.status), expired.all)
        XCTAssertFalse(expired.stderr.contains("purging"), expired.stderr)
        XCTAssertEqual(try sqlite3(store.location, "SELECT status, sealed_rows IS NULL FROM gatehouse_user_deletions"), "purged|1")
        XCTAssertEqual(try sqlite3(store.location, "SELECT count(*) FROM gatehouse_audit WHERE action = 'user.delete.purge'"), "1")
    }

    func testHelpExitCodesAndBadInput() throws {
        let scratch = try Scratch()
        let store = try makeStore(.sqlite, scratch)
        for path in [["users", "delete", "--help"], ["users", "delete", "plan", "--help"], ["users", "delete", "apply", "--help"],
                     ["users", "delete", "undo", "--help"], ["users", "delete", "purge", "--help"]] {
            let help = try cli.run(path)
            XCTAssertEqual(help.status, 0, help.all)
            XCTAssertTrue(help.stdout.contains("Usage") || help.stdout.contains("usage"), help.stdout)
        }
        XCTAssertTrue(try cli.run(["users", "delete", "apply", "--help"]).stdout.contains("--no-revoke"))
        func expect(_ status: Int32, _ arguments: [String], _ needle: String, line: UInt = #line) throws {
            let result = try cli.run(arguments + ["--store", store.location])
            XCTAssertEqual(result.status, status, result.all, line: line)
            XCTAssertTrue(result.stderr.contains(needle), "\(needle) not in: \(result.stderr)", line: line)
        }
        try expect(2, ["users", "delete", "plan", u2], "--ticket")
        try expect(1, ["users", "delete", "plan", "nobody@example.com", "--ticket", "T"], "matches no user")
        try expect(1, ["users", "delete", "plan", String(repeating: "x", count: 10_000), "--ticket", "T"], "not a user id")
        try expect(1, ["users", "delete", "plan", u2, "--ticket", String(repeating: "T", count: 300)], "--ticket")
        let id = try plan(store, u2)
        try expect(2, ["users", "delete", "apply", id, "--yes", "--no-revoke"], "--reason")
        try expect(2, ["users", "delete", "apply", id, "--yes", "--retain", "soon", "--no-revoke", "--reason", "r"], "--retain")
        try expect(1, ["users", "delete", "apply", id, "--yes", "--retain", "1s", "--no-revoke", "--reason", "r"], "retention")
        try expect(1, ["users", "delete", "apply", id, "--no-revoke", "--reason", "r"], "stdin is not a terminal")
        try expect(1, ["users", "delete", "apply", "dp_nope", "--yes", "--no-revoke", "--reason", "r"], "no deletion plan")
        let garbage = scratch.path("garbage.json")
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: garbage))
        try expect(1, ["users", "delete", "apply", garbage, "--yes", "--no-revoke", "--reason", "r"], "not a deletion plan")
        let big = scratch.path("big.json")
        try Data(repeating: 0x20, count: 5 * 1024 * 1024).write(to: URL(fileURLWithPath: big))
        try expect(1, ["users", "delete", "apply", big, "--yes", "--no-revoke", "--reason", "r"], "larger than")
        try expect(1, ["users", "delete", "undo", "99", "--reason", "r"], "no user deletion")
        try expect(1, ["users", "delete", "show", "'; DROP TABLE user; --"], "no user deletion")
        XCTAssertEqual(try sqlite3(store.location, "SELECT count(*) FROM gatehouse_user_deletions"), "0", "nothing half-written")
        // A plan written with --out applies by its file; an edited one is refused.
        let file = scratch.path("plan.json")
        let written = try cli.run(["users", "delete", "plan", u2, "--ticket", "SUP-1", "--out", file, "--store", store.location])
        XCTAssertEqual(written.status, 0, written.all)
        let edited = scratch.path("edited.json")
        try Data(try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(of: "\"fingerprint\" : \"", with: "\"fingerprint\" : \"0").utf8)
            .write(to: URL(fileURLWithPath: edited))
        try expect(1, ["users", "delete", "apply", edited, "--yes", "--no-revoke", "--reason", "r"], "does not match")
        let applied = try cli.run(["users", "delete", "apply", file, "--yes", "--no-revoke", "--reason", "r", "--store", store.location])
        XCTAssertEqual(applied.status, 0, applied.all)
        try expect(1, ["users", "delete", "apply", file, "--yes", "--no-revoke", "--reason", "r"], "already applied")
    }
}
