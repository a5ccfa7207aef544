import Foundation
import XCTest

/// Merges on a Postgres store: related rows found through `pg_constraint` (a table added later included), one
/// transaction, and an undo that gives back every row as it was (a `pg_dump --data-only` before the merge and after
/// the undo hold the same rows, sequences aside).
final class PostgresMergeTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)
    let u1 = "U1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", u2 = "U2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

    func makeStore(_ scratch: Scratch) throws -> TestStore {
        let store = try TestStore.make(.postgres, in: scratch)
        XCTAssertEqual(try cli.run(["init", "--store", store.location]).status, 0)
        _ = try store.query("""
            INSERT INTO "user" VALUES ('\(u1)', 'Ana Costa', 'zq7merge01@privaterelay.appleid.com', true, NULL, '2025-03-01T10:00:00.000Z', '2025-03-01T10:00:00.000Z');
            INSERT INTO "user" VALUES ('\(u2)', 'Ana Costa', 'ana.merge@gmail.com', true, NULL, '2025-03-04T10:00:00.123Z', '2025-03-04T10:00:00.123Z');
            INSERT INTO account (id, issuer, "accountId", "providerId", "userId", "createdAt", "updatedAt") VALUES
              ('acc1', 'https://appleid.apple.com', '001234.apple.0001', 'apple', '\(u1)', '2025-03-01T10:00:00.000Z', '2025-03-01T10:00:00.000Z'),
              ('acc2', 'https://accounts.google.com', '104857600000000000002', 'google', '\(u2)', '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z');
            INSERT INTO session SELECT 'sess' || i, '2030-01-01T00:00:00.000Z', 'tok' || i, '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z', '81.2.3.4', 'UA', '\(u2)'
              FROM generate_series(1, 3) AS i;
            INSERT INTO users (sub, display_name, created_at) VALUES ('better_auth|\(u1)', 'Ana', '2025-03-01'), ('better_auth|\(u2)', 'Ana C', '2025-03-04');
            INSERT INTO workspaces SELECT 'ws' || i, (SELECT id FROM users WHERE sub = 'better_auth|\(u2)'), 'Project ' || i, '2025-03-04' FROM generate_series(1, 2) AS i;
            INSERT INTO allow_list VALUES ('better_auth|\(u2)', 'admin', '2025-01-01');
            -- A plugin's table added after Better Auth's (a passkey table), referencing the user by foreign key.
            CREATE TABLE passkey (id text PRIMARY KEY, "userId" text NOT NULL REFERENCES "user" (id) ON DELETE CASCADE, "publicKey" bytea, "createdAt" timestamptz);
            INSERT INTO passkey VALUES ('pk1', '\(u2)', '\\x00ff10', '2025-03-05T08:00:00.000Z');
            """)
        return store
    }

    /// Plans the merge of U2 into U1 keeping `email`'s address, and gives the stored plan's id.
    func plan(_ store: TestStore, keepEmail email: String = "source") throws -> String {
        let planned = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", email, "--store", store.location, "--json"])
        XCTAssertEqual(planned.status, 0, planned.all)
        return try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(planned.stdout.utf8)) as? [String: Any])?["planID"] as? String, planned.all)
    }

    /// U2 merged into U1 with U2's email kept: its Google account and passkey are U1's, U2 and its sessions are gone.
    func assertMerged(_ store: TestStore, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try store.query("SELECT \"userId\" FROM account WHERE \"accountId\" = '104857600000000000002'"), u1, file: file, line: line)
        XCTAssertEqual(try store.query("SELECT \"userId\" FROM passkey WHERE id = 'pk1'"), u1, file: file, line: line)
        XCTAssertEqual(try store.query("SELECT count(*) FROM \"user\" WHERE id = '\(u2)'"), "0", file: file, line: line)
        // U2's sessions end with the merge (its tokens named a user that is gone).
        XCTAssertEqual(try store.query("SELECT count(*) FROM session"), "0", file: file, line: line)
        XCTAssertEqual(try store.query("SELECT email FROM \"user\" WHERE id = '\(u1)'"), "ana.merge@gmail.com", file: file, line: line)
    }

    /// Every row of every table but Gatehouse's, one line each, sorted (a row re-inserted by undo may sit elsewhere
    /// on disk); sequence positions left out.
    func dump(_ store: TestStore) throws -> [String] {
        let dump = try Tool.run(try Self.pgDump(), [store.location, "--data-only", "--no-owner", "--exclude-table=gatehouse_*"])
        XCTAssertEqual(dump.status, 0, dump.stderr)
        // pg_dump 17's \restrict lines carry a random key per dump.
        return dump.stdout.split(separator: "\n").map(String.init)
            .filter { !$0.contains("setval(") && !$0.hasPrefix("--") && !$0.hasPrefix("\\restrict") && !$0.hasPrefix("\\unrestrict") }.sorted()
    }

    static func pgDump() throws -> String {
        for candidate in ["/usr/bin/pg_dump"] + (1...30).reversed().map({ "/usr/lib/postgresql/\($0)/bin/pg_dump" })
        where FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        throw XCTSkip("pg_dump is not installed (Debian's postgresql-client)")
    }

    func testPlanApplyAndUndoGiveBackEveryRow() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch)
        defer { store.drop() }
        let before = try dump(store)
        XCTAssertTrue(before.contains { $0.contains("pk1") }, "the dump holds the plugin's row")

        let id = try plan(store)
        let text = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "source", "--store", store.location])
        XCTAssertTrue(text.stdout.contains("passkey.userId → user.id"), text.stdout)
        let applied = try cli.run(["merge", "apply", id, "--ticket", "SUP-1", "--yes", "--store", store.location])
        XCTAssertEqual(applied.status, 0, applied.all)
        try assertMerged(store)
        let again = try cli.run(["merge", "apply", id, "--ticket", "SUP-1", "--yes", "--store", store.location])
        XCTAssertEqual(again.status, 1, again.all)

        let undo = try cli.run(["merge", "undo", "1", "--reason", "wrong person", "--store", store.location])
        XCTAssertEqual(undo.status, 0, undo.all)
        XCTAssertEqual(try dump(store), before)
        XCTAssertEqual(try cli.run(["audit", "verify", "--store", store.location]).status, 0)
    }

    /// `--emit-sql` on a Postgres store writes Postgres's SQL: psql runs it on a copy as planned and merges; on a
    /// copy that changed since (or a second time) it changes nothing. Hostile values (a quote, the script's own
    /// dollar-quote tag, a backslash) stay values.
    func testEmittedSQLRunsWithPsql() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch)
        defer { store.drop() }
        _ = try store.query("""
            UPDATE "user" SET name = 'Ana $gatehouse$ END $$; DROP TABLE session; -- '' \\x00' WHERE id = '\(u2)';
            UPDATE session SET "userAgent" = E'back\\\\slash $gatehouse$' WHERE id = 'sess1';
            """)
        let script = scratch.path("merge.sql")
        let planned = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "source", "--emit-sql", script, "--store", store.location])
        XCTAssertEqual(planned.status, 0, planned.all)
        XCTAssertTrue(planned.stdout.contains("SQL script written to"), planned.stdout)
        let sql = try String(contentsOfFile: script, encoding: .utf8)
        XCTAssertTrue(sql.contains("psql"), sql)
        XCTAssertFalse(sql.contains("PRAGMA"), sql)
        XCTAssertTrue(sql.contains("DO $gatehouse1$"), "the checks' dollar-quote tag avoids the one in the values")
        let asPlanned = try store.copy(in: scratch, name: "as_planned"), changed = try store.copy(in: scratch, name: "changed")
        defer { asPlanned.drop(); changed.drop() }
        func psql(_ target: TestStore) throws -> CLI.Result {
            try Tool.run("/usr/bin/psql", [target.location, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", script])
        }

        let run = try psql(asPlanned)
        XCTAssertEqual(run.status, 0, run.all)
        try assertMerged(asPlanned)
        XCTAssertEqual(try asPlanned.query("SELECT count(*) FROM workspaces WHERE owner_id = (SELECT id FROM users WHERE sub = 'better_auth|\(u1)')"), "2")
        XCTAssertEqual(try asPlanned.query("SELECT to_regclass('session') IS NOT NULL"), "t", "the hostile name stayed a value")
        // Gatehouse's own records are the store's business: the script touches Better Auth's and the sync tables only.
        XCTAssertEqual(try asPlanned.query("SELECT count(*) FROM gatehouse_merges WHERE status = 'applied'"), "0")

        // A second run finds the rows no longer as planned and changes nothing.
        let merged = try dump(asPlanned)
        let again = try psql(asPlanned)
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.stderr.contains("the rows are not as planned; nothing was changed"), again.stderr)
        XCTAssertEqual(try dump(asPlanned), merged)

        // Changed after planning: a workspace renamed. Nothing changes, also without ON_ERROR_STOP.
        _ = try changed.query("UPDATE workspaces SET name = 'Renamed' WHERE id = 'ws1'")
        let untouched = try dump(changed)
        let refused = try Tool.run("/usr/bin/psql", [changed.location, "-X", "-q", "-f", script])
        XCTAssertTrue(refused.stderr.contains("the rows are not as planned; nothing was changed"), refused.stderr)
        XCTAssertEqual(try dump(changed), untouched)
    }

    /// A row the merge deletes from a table whose key is `GENERATED ALWAYS AS IDENTITY` (a sync server's own
    /// schema may say so) comes back with its own id on undo.
    func testUndoGivesBackARowWithAGeneratedAlwaysIdentity() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch)
        defer { store.drop() }
        _ = try store.query("ALTER TABLE users ALTER COLUMN id SET GENERATED ALWAYS")
        let before = try dump(store)
        let id = try plan(store)
        XCTAssertEqual(try cli.run(["merge", "apply", id, "--ticket", "SUP-1", "--yes", "--store", store.location]).status, 0)
        XCTAssertEqual(try store.query("SELECT count(*) FROM users WHERE sub = 'better_auth|\(u2)'"), "0")
        let undo = try cli.run(["merge", "undo", "1", "--reason", "identity", "--store", store.location])
        XCTAssertEqual(undo.status, 0, undo.all)
        XCTAssertEqual(try dump(store), before)
    }

    func testAStalePlanIsRefusedAndChangesNothing() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch)
        defer { store.drop() }
        let id = try plan(store)
        // A session refresh on U2 after the plan (Better Auth moving expiresAt on).
        _ = try store.query("UPDATE session SET \"expiresAt\" = '2031-01-01T00:00:00.000Z' WHERE id = 'sess2'")
        let before = try dump(store)
        let applied = try cli.run(["merge", "apply", id, "--ticket", "SUP-1", "--yes", "--store", store.location])
        XCTAssertEqual(applied.status, 1, applied.all)
        XCTAssertTrue(applied.stderr.contains("the users changed since the plan"), applied.stderr)
        XCTAssertEqual(try dump(store), before)
    }

    /// A session refresh racing `merge apply` (Better Auth moving `expiresAt` on, in its own transaction): the merge
    /// either sees the refresh and refuses, or the refresh waits for the merge and then finds the session ended by
    /// it. Never does the merge delete a refreshed row as if it were the planned one (whose image undo would bring
    /// back, the refresh lost).
    func testASessionRefreshRacingApplyIsSeenOrWaitsNeverLost() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch)
        defer { store.drop() }
        func waitFor(_ sql: String, _ what: String) throws {
            var tries = 0
            while try store.query(sql) == "0" {
                tries += 1
                guard tries < 400 else { return XCTFail("timed out waiting until \(what)") }
                usleep(25_000)
            }
        }
        let refresh = "UPDATE session SET \"expiresAt\" = '2031-01-01T00:00:00.000Z' WHERE id = 'sess2'"

        // 1. The refresh is in flight (its transaction holds the row) when apply starts: apply waits for it, then
        //    reads the refreshed row, and refuses the plan as stale. The refresh stands.
        let id = try plan(store)
        let inFlight = try Tool.start("/usr/bin/psql", [store.location, "-X", "-q", "-c", "BEGIN; \(refresh); SELECT pg_sleep(2); COMMIT;"])
        try waitFor("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(2)%' AND state = 'active' AND pid <> pg_backend_pid()", "the refresh is in flight")
        let apply = try cli.start(["merge", "apply", id, "--ticket", "SUP-1", "--yes", "--store", store.location])
        try waitFor("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'", "apply waits for the refresh's row")
        XCTAssertEqual(try inFlight.finish().status, 0)
        let refused = try apply.finish()
        XCTAssertEqual(refused.status, 1, refused.all)
        XCTAssertTrue(refused.stderr.contains("the users changed since the plan"), refused.stderr)
        XCTAssertEqual(try store.query("SELECT \"expiresAt\" FROM session WHERE id = 'sess2'"), "2031-01-01 00:00:00+00")
        XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_merges WHERE status = 'applied'"), "0")

        // 2. The refresh comes while apply holds the rows (slowed inside its transaction): it waits for the merge,
        //    then finds U2's session ended by it (UPDATE 0: Better Auth asks to sign in again). Undo gives the
        //    session back as the merge found it.
        let second = try plan(store)
        let expires = try store.query("SELECT \"expiresAt\" FROM session WHERE id = 'sess2'")
        var slowed = cli
        slowed.environment["GATEHOUSE_TEST_MERGE_DELAY_MS"] = "150"
        let holding = try slowed.start(["merge", "apply", second, "--ticket", "SUP-2", "--yes", "--store", store.location])
        try waitFor("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted", "apply holds the writer lock")
        usleep(300_000)
        let late = try Tool.run("/usr/bin/psql", [store.location, "-X", "-c", refresh])
        XCTAssertEqual(late.status, 0, late.all)
        let applied = try holding.finish()
        XCTAssertEqual(applied.status, 0, applied.all)
        XCTAssertTrue(late.stdout.contains("UPDATE 0"), "the refresh ran after the merge ended the session: \(late.stdout)")
        XCTAssertEqual(try store.query("SELECT count(*) FROM session WHERE \"userId\" = '\(u2)'"), "0")
        let undone = try cli.run(["merge", "undo", "1", "--reason", "race test", "--store", store.location])
        XCTAssertEqual(undone.status, 0, undone.all)
        XCTAssertEqual(try store.query("SELECT \"expiresAt\" FROM session WHERE id = 'sess2'"), expires)
    }

    /// SIGKILL at 30 points spread over `merge apply` (slowed inside its transaction): each time the store is either
    /// untouched or fully merged (the server rolls back the transaction of a client that vanished), with its foreign
    /// keys holding (Postgres enforces them on every statement) and one merge record exactly when merged.
    func testKillDuringApplyLeavesTheStoreMergedOrUntouched() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch)
        defer { store.drop() }
        _ = try store.query("""
            INSERT INTO session SELECT 'more' || i, '2030-01-01T00:00:00.000Z', 'more-tok' || i, '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z', '81.2.3.4', 'UA', '\(u2)'
              FROM generate_series(1, 37) AS i;
            INSERT INTO workspaces SELECT 'more-ws' || i, (SELECT id FROM users WHERE sub = 'better_auth|\(u2)'), 'More ' || i, '2025-03-04' FROM generate_series(1, 13) AS i;
            """)
        var id = try plan(store, keepEmail: "target")
        // Rows the merge touches take its time as updatedAt: compare everything else.
        let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
        func state() throws -> [String] {
            try dump(store).map { $0.replacingOccurrences(of: today + #" \d\d:\d\d:\d\d(\.\d+)?\+00"#, with: "<apply time>", options: .regularExpression) }
        }
        func applied() throws -> String { try store.query("SELECT count(*) FROM gatehouse_merges WHERE status = 'applied'") }
        let untouched = try state()
        XCTAssertEqual(try cli.run(["merge", "apply", id, "--ticket", "REF", "--yes", "--store", store.location]).status, 0)
        let merged = try state()
        XCTAssertNotEqual(merged, untouched)
        func undo() throws {
            let last = try store.query("SELECT max(id) FROM gatehouse_merges WHERE status = 'applied'")
            let undone = try cli.run(["merge", "undo", last, "--reason", "kill test", "--store", store.location])
            XCTAssertEqual(undone.status, 0, undone.all)
            // An undone plan is spent: planning again gives the next round's plan.
            let next = try plan(store, keepEmail: "target")
            XCTAssertNotEqual(next, id, "planning again after an undo gives a new plan")
            id = next
        }
        try undo()
        XCTAssertEqual(try state(), untouched)

        var delayed = cli
        delayed.environment["GATEHOUSE_TEST_MERGE_DELAY_MS"] = "5"
        let runs = 30
        var outcomes: [String: Int] = [:]
        for run in 0..<runs {
            let process = try delayed.start(["merge", "apply", id, "--ticket", "REF", "--yes", "--store", store.location])
            // From process start to past the end of the slowed transaction (about 100 steps × 5 ms).
            usleep(UInt32(run * 900_000 / runs + Int.random(in: 0..<10_000)))
            kill(process.process.processIdentifier, SIGKILL)
            _ = try process.finish()
            // The server notices the closed connection and rolls back; give it a moment to let the writer lock go.
            var now = try state()
            for _ in 0..<50 where now != untouched && now != merged { usleep(20_000); now = try state() }
            if now == untouched {
                XCTAssertEqual(try applied(), "0", "run \(run)")
                outcomes["untouched", default: 0] += 1
            } else if now == merged {
                XCTAssertEqual(try applied(), "1", "run \(run)")
                outcomes["merged", default: 0] += 1
                try undo()
            } else {
                XCTFail("run \(run): the store is neither untouched nor fully merged")
                break
            }
        }
        XCTAssertGreaterThan(outcomes["untouched", default: 0], 0, "\(outcomes)")
        XCTAssertGreaterThan(outcomes["merged", default: 0], 0, "\(outcomes)")
        print("kill during merge apply on Postgres: \(outcomes)")
    }
}
