import Foundation
import XCTest

/// `gatehouse merge` as an operator runs it: plan, apply, undo, list, show, emitted SQL, and crashes.
final class MergeCommandTests: XCTestCase {
    let cli = CLI()
    let u1 = "U1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", u2 = "U2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

    /// A fresh store with U1 (Apple, relay) and U2 (Google) holding `sessions` sessions and `workspaces` workspaces.
    func makeStore(_ scratch: Scratch, sessions: Int = 3, workspaces: Int = 2) throws -> String {
        let store = scratch.path("store.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        let script = """
            INSERT INTO user VALUES ('\(u1)', 'Ana Costa', 'zq7merge01@privaterelay.appleid.com', 1, NULL, '2025-03-01T10:00:00.000Z', '2025-03-01T10:00:00.000Z');
            INSERT INTO user VALUES ('\(u2)', 'Ana Costa', 'ana.merge@gmail.com', 1, NULL, '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z');
            INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES
              ('acc1', 'https://appleid.apple.com', '001234.apple.0001', 'apple', '\(u1)', '2025-03-01T10:00:00.000Z', '2025-03-01T10:00:00.000Z'),
              ('acc2', 'https://accounts.google.com', '104857600000000000002', 'google', '\(u2)', '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z');
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(sessions))
            INSERT INTO session SELECT 'sess' || i, '2030-01-01T00:00:00.000Z', 'tok' || i, '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z', '81.2.3.4', 'UA', '\(u2)' FROM n;
            INSERT INTO users (sub, display_name, created_at) VALUES ('better_auth|\(u1)', 'Ana', '2025-03-01'), ('better_auth|\(u2)', 'Ana C', '2025-03-04');
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(workspaces))
            INSERT INTO workspaces SELECT 'ws' || i, (SELECT id FROM users WHERE sub = 'better_auth|\(u2)'), 'Project ' || i, '2025-03-04' FROM n;
            INSERT INTO allow_list VALUES ('better_auth|\(u2)', 'admin', '2025-01-01');
            PRAGMA wal_checkpoint(TRUNCATE);
            """
        _ = try sqlite3(store, script)
        return store
    }

    func planID(_ result: CLI.Result) throws -> String {
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try XCTUnwrap(object?["planID"] as? String, result.all)
    }

    /// Every row of every non-Gatehouse table, read by the sqlite3 shell.
    func dumpAll(_ store: String) throws -> String {
        let tables = try sqlite3(store, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'gatehouse_%' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            .split(separator: "\n")
        return try tables.map { "== \($0)\n" + (try sqlite3(store, "SELECT rowid, * FROM \"\($0)\" ORDER BY rowid")) }.joined(separator: "\n")
    }

    /// Plan reasons and decisions are stored with the domain's marks and put into the CLI's words whenever they are read:
    /// the plan, the SQL script, `merge show` (text and JSON) never show a mark, and marks an operator types (in a
    /// reason, as a user) are shown as U+FFFD, never read as a flag.
    func testStoredWordingIsRenderedWhenReadAndTypedMarksAreHarmless() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch)
        let marks = CharacterSet(charactersIn: "\u{E000}\u{E001}\u{E002}")
        func assertNoMarks(_ text: String, _ what: String, line: UInt = #line) {
            XCTAssertNil(text.rangeOfCharacter(from: marks), "\(what) shows a raw mark: \(text)", line: line)
        }
        let sql = scratch.path("merge.sql")
        let planned = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "source", "--carry-roles", "--emit-sql", sql,
                                   "--store", store, "--json"])
        XCTAssertEqual(planned.status, 0, planned.all)
        assertNoMarks(planned.all, "the plan")
        XCTAssertTrue(planned.stdout.contains("granted to U1 (--carry-roles)"), planned.stdout)
        let script = try String(contentsOfFile: sql, encoding: .utf8)
        assertNoMarks(script, "the SQL script")
        XCTAssertTrue(script.contains("-- U1 takes U2's email (--keep-email source)"), script)
        let id = try planID(planned)
        XCTAssertEqual(try cli.run(["merge", "apply", id, "--ticket", "SUP-9", "--yes", "--store", store]).status, 0)
        let typed = try cli.run(["merge", "undo", "1", "--reason", "wrong \u{E000}freveal\u{E001} person", "--store", store])
        XCTAssertEqual(typed.status, 1, "a typed mark is refused in operator text: \(typed.all)")
        XCTAssertTrue(typed.stderr.contains("--reason contains the private-use character U+E000"), typed.stderr)
        assertNoMarks(typed.all, "the refusal")
        XCTAssertEqual(try cli.run(["merge", "undo", "1", "--reason", "wrong person", "--store", store]).status, 0)
        for arguments in [["merge", "show", "1"], ["merge", "show", "1", "--json"], ["merge", "list"]] {
            let shown = try cli.run(arguments + ["--store", store])
            XCTAssertEqual(shown.status, 0, shown.all)
            assertNoMarks(shown.all, arguments.joined(separator: " "))
            XCTAssertFalse(shown.all.contains("--reveal"), "a typed mark is not a flag: \(shown.all)")
        }
        let hostileUser = try cli.run(["merge", "plan", "--from", "\u{E000}freveal\u{E001}", "--into", u1, "--store", store])
        XCTAssertEqual(hostileUser.status, 1, hostileUser.all)
        assertNoMarks(hostileUser.all, "an echoed hostile user")
        XCTAssertTrue(hostileUser.stderr.contains("--from \"\u{FFFD}freveal\u{FFFD}\" matches no user"), hostileUser.stderr)
    }

    func testPlanApplyListShowUndo() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch)
        let before = try dumpAll(store)
        let undecided = try cli.run(["merge", "plan", "--from", "ana.merge@gmail.com", "--into", "better_auth|\(u1)", "--store", store])
        XCTAssertEqual(undecided.status, 1, undecided.all)
        XCTAssertTrue(undecided.stdout.contains("UNDECIDED: pass --keep-email target|source"), undecided.stdout)
        XCTAssertTrue(undecided.stderr.contains("plan again with --keep-email target|source (email)"), undecided.stderr)
        XCTAssertEqual(try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "sideways", "--store", store]).status, 2)

        let planned = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "source", "--store", store])
        XCTAssertEqual(planned.status, 0, planned.all)
        for text in ["conflicts and decisions:", "U1 takes U2's email ana.merge@gmail.com", "! U2 is an admin (allow_list)",
                     "dropped (pass --carry-roles to grant it to U1)", "sessions: 3", "sync:workspaces: 2", "delete user id=\(u2)",
                     "follows foreign keys: subscriptions.user_id → users.id, workspaces.owner_id → users.id"] {
            XCTAssertTrue(planned.stdout.contains(text), "missing \(text) in\n\(planned.stdout)")
        }
        let json = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "source", "--store", store, "--json"])
        let id = try planID(json)
        XCTAssertTrue(planned.stdout.contains("gatehouse merge apply \(id) --ticket REF"), "the same rows and decisions give the same plan id")

        let refused = try cli.run(["merge", "apply", id, "--ticket", "SUP-1", "--store", store])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("stdin is not a terminal"), refused.stderr)
        let applied = try cli.run(["merge", "apply", id, "--ticket", "SUP-1", "--yes", "--json", "--store", store, "--actor", "support-ana"])
        XCTAssertEqual(applied.status, 0, applied.all)
        let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(applied.stdout.utf8)) as? [String: Any])
        XCTAssertNotNil(result["transactionMilliseconds"] as? Double)
        XCTAssertEqual(try sqlite3(store, "SELECT userId FROM account WHERE accountId = '104857600000000000002'"), u1)
        XCTAssertEqual(try sqlite3(store, "SELECT userId FROM account WHERE accountId = '001234.apple.0001'"), u1)
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM users WHERE sub = 'better_auth|\(u2)'"), "0")
        XCTAssertEqual(try sqlite3(store, "PRAGMA foreign_key_check"), "")
        let again = try cli.run(["merge", "apply", id, "--ticket", "SUP-1", "--yes", "--store", store])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains("was already applied (merge 1)"), again.stderr)

        let list = try cli.run(["merge", "list", "--store", store])
        XCTAssertTrue(list.stdout.contains("1   applied") && list.stdout.contains("SUP-1") && list.stdout.contains("support-ana"), list.stdout)
        let show = try cli.run(["merge", "show", "1", "--store", store])
        XCTAssertTrue(show.stdout.contains("delete session id=sess1"), show.stdout)
        XCTAssertFalse(show.stdout.contains("tok1"), "token values are never shown")
        XCTAssertFalse(try cli.run(["merge", "show", "1", "--json", "--store", store]).stdout.contains("tok1"))

        let undo = try cli.run(["merge", "undo", "1", "--reason", "wrong person", "--store", store])
        XCTAssertEqual(undo.status, 0, undo.all)
        XCTAssertEqual(try dumpAll(store), before)
        XCTAssertEqual(try sqlite3(store, "SELECT group_concat(action, ',') FROM (SELECT action FROM gatehouse_audit WHERE action LIKE 'merge.%' ORDER BY id)"),
                       "merge.plan,merge.plan,merge.apply,merge.undo")
        XCTAssertEqual(try cli.run(["audit", "verify", "--store", store]).status, 0)
        let twice = try cli.run(["merge", "undo", "1", "--reason", "again", "--store", store])
        XCTAssertEqual(twice.status, 1)
        XCTAssertTrue(twice.stderr.contains("was already undone"), twice.stderr)
    }

    func testEmittedSQLRunsWithTheSQLiteShell() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch)
        let script = scratch.path("merge.sql")
        let planned = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "source", "--carry-roles", "--emit-sql", script, "--store", store])
        XCTAssertEqual(planned.status, 0, planned.all)
        let sql = try String(contentsOfFile: script, encoding: .utf8)
        let asPlanned = scratch.path("as-planned.sqlite"), changed = scratch.path("changed.sqlite")
        _ = try sqlite3(store, ".backup '\(asPlanned)'")
        _ = try sqlite3(store, ".backup '\(changed)'")

        XCTAssertEqual(try sqlite3(asPlanned, sql), "")
        XCTAssertEqual(try sqlite3(asPlanned, "SELECT userId FROM account WHERE accountId = '104857600000000000002'"), u1)
        XCTAssertEqual(try sqlite3(asPlanned, "SELECT count(*) FROM user WHERE id = '\(u2)'"), "0")
        XCTAssertEqual(try sqlite3(asPlanned, "SELECT sub FROM allow_list"), "better_auth|\(u1)")
        XCTAssertEqual(try sqlite3(asPlanned, "PRAGMA foreign_key_check; PRAGMA integrity_check;"), "ok")

        // Changed after planning: a workspace renamed. The script aborts and leaves the copy as it was.
        _ = try sqlite3(changed, "UPDATE workspaces SET name = 'Renamed' WHERE id = 'ws1'")
        let before = try dumpAll(changed)
        let output = try sqlite3(changed, sql)
        XCTAssertTrue(output.contains("the rows are not as planned; nothing was changed"), output)
        XCTAssertEqual(try dumpAll(changed), before)
        XCTAssertEqual(try sqlite3(changed, "SELECT count(*) FROM sqlite_temp_master"), "0")
    }

    /// SIGKILL at points spread over `merge apply` (slowed down inside its transaction): the store is
    /// always either untouched or fully merged, and intact.
    func testKillDuringApplyLeavesStoreMergedOrUntouched() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch, sessions: 40, workspaces: 15)
        let planned = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "target", "--store", store, "--json"])
        let id = try planID(planned)
        _ = try sqlite3(store, "PRAGMA wal_checkpoint(TRUNCATE);")
        let untouched = try dumpAll(store)
        let reference = scratch.path("reference.sqlite")
        _ = try sqlite3(store, ".backup '\(reference)'")
        XCTAssertEqual(try cli.run(["merge", "apply", id, "--ticket", "REF", "--yes", "--store", reference]).status, 0)
        // Moved accounts take the time of apply as updatedAt: compare everything else.
        func normalized(_ dump: String) -> String {
            dump.replacingOccurrences(of: #"(?!2025|2030)\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"#, with: "<apply time>", options: .regularExpression)
        }
        let merged = normalized(try dumpAll(reference))
        var delayed = CLI()
        delayed.environment = ["GATEHOUSE_TEST_MERGE_DELAY_MS": "5"]
        let runs = 30
        var outcomes: [String: Int] = [:]
        for run in 0..<runs {
            let copy = scratch.path("run-\(run).sqlite")
            _ = try sqlite3(store, ".backup '\(copy)'")
            let process = try delayed.start(["merge", "apply", id, "--ticket", "REF", "--yes", "--store", copy])
            // Spread the kills from process start to past the end of the slowed transaction (about 70 steps × 5 ms).
            usleep(UInt32(run * 600_000 / runs + Int.random(in: 0..<10_000)))
            kill(process.process.processIdentifier, SIGKILL)
            _ = try process.finish()
            XCTAssertEqual(try sqlite3(copy, "PRAGMA integrity_check"), "ok", "run \(run)")
            XCTAssertEqual(try sqlite3(copy, "PRAGMA foreign_key_check"), "", "run \(run)")
            let state = normalized(try dumpAll(copy))
            let records = try sqlite3(copy, "SELECT count(*) FROM gatehouse_merges")
            if state == untouched {
                XCTAssertEqual(records, "0", "run \(run)")
                outcomes["untouched", default: 0] += 1
            } else if state == merged {
                XCTAssertEqual(records, "1", "run \(run)")
                outcomes["merged", default: 0] += 1
            } else {
                XCTFail("run \(run): the store is neither untouched nor fully merged")
            }
        }
        XCTAssertGreaterThan(outcomes["untouched", default: 0], 0, "\(outcomes)")
        XCTAssertGreaterThan(outcomes["merged", default: 0], 0, "\(outcomes)")
        print("kill during merge apply: \(outcomes)")
    }

    /// A reader in another process, polling while apply runs (slowed), only ever sees U2 whole or U2 merged.
    func testReadersNeverSeeAHalfMergedUser() throws {
        let scratch = try Scratch()
        let store = try makeStore(scratch, sessions: 30, workspaces: 10)
        let id = try planID(try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "target", "--store", store, "--json"]))
        let probe = """
            .timeout 5000
            SELECT (SELECT count(*) FROM user WHERE id = '\(u2)') || ',' || (SELECT count(*) FROM account WHERE userId = '\(u1)') || ',' ||
                   (SELECT count(*) FROM session WHERE userId = '\(u2)') || ',' || (SELECT count(*) FROM users WHERE sub = 'better_auth|\(u2)') || ',' ||
                   (SELECT count(*) FROM workspaces WHERE owner_id = (SELECT id FROM users WHERE sub = 'better_auth|\(u1)'));
            """
        let beforeState = try sqlite3(store, probe)
        XCTAssertEqual(beforeState, "1,1,30,1,0")
        var delayed = CLI()
        delayed.environment = ["GATEHOUSE_TEST_MERGE_DELAY_MS": "5"]
        let process = try delayed.start(["merge", "apply", id, "--ticket", "REF", "--yes", "--store", store])
        var seen: [String: Int] = [:]
        while process.process.isRunning {
            seen[try sqlite3(store, probe), default: 0] += 1
        }
        let result = try process.finish()
        XCTAssertEqual(result.status, 0, result.all)
        seen[try sqlite3(store, probe), default: 0] += 1
        XCTAssertEqual(Set(seen.keys).subtracting([beforeState, "0,2,0,0,10"]), [], "\(seen)")
        XCTAssertGreaterThan(seen.values.reduce(0, +), 3, "\(seen)")
    }
}
