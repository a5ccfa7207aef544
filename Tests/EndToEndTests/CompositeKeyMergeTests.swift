import Foundation
import XCTest

/// Tables that point at a person through a key of several columns (`(uid, mail) → user(id, email)`,
/// `(owner, owner_sub) → users(id, sub)`, `(sid, stoken) → session(id, token)`): a merge finds them through the
/// foreign-key catalog like any other, moves (or deletes) their rows as a whole key, counts them by the whole key in
/// the emitted SQL, and undo gives every row back. A key holding a value the merge changes (U1 taking U2's email)
/// follows it when the store checks the key at the commit, and is refused by name when it checks it per statement.
/// Each test runs on SQLite and, under ops/test, on Postgres and D1.
final class CompositeKeyMergeTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)
    let u1 = "U1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", u2 = "U2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    let u1Mail = "zq7merge01@privaterelay.appleid.com", u2Mail = "ana.merge@gmail.com"
    let tables = ["user", "account", "session", "users", "workspaces", "mailing", "seats", "session_notes"]

    /// Two users, U2 with a session and a sync row, and three tables keyed on several columns. `mailing` row 3
    /// holds U2's id with a NULL email: such a key points at no row, and the merge leaves it alone.
    func makeStore(_ engine: TestStore.Engine, _ scratch: Scratch) throws -> TestStore {
        let store = try TestStore.make(engine, in: scratch)
        let initialised = try cli.run(["init", "--store", store.location])
        XCTAssertEqual(initialised.status, 0, initialised.all)
        let integer = engine == .postgres ? "bigint" : "INTEGER"
        let created = try store.query("""
            INSERT INTO "user" VALUES ('\(u1)', 'Ana Costa', '\(u1Mail)', true, NULL, '2025-03-01T10:00:00.000Z', '2025-03-01T10:00:00.000Z');
            INSERT INTO "user" VALUES ('\(u2)', 'Ana Costa', '\(u2Mail)', true, NULL, '2025-03-04T10:00:00.123Z', '2025-03-04T10:00:00.123Z');
            INSERT INTO session VALUES ('sess1', '2030-01-01T00:00:00.000Z', 'tok1', '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z', '81.2.3.4', 'UA', '\(u2)');
            INSERT INTO users (id, sub, display_name, created_at) VALUES (1, 'better_auth|\(u1)', 'Ana', '2025-03-01'), (2, 'better_auth|\(u2)', 'Ana C', '2025-03-04');
            CREATE UNIQUE INDEX user_id_email_uidx ON "user" (id, email);
            CREATE UNIQUE INDEX users_id_sub_uidx ON users (id, sub);
            CREATE UNIQUE INDEX session_id_token_uidx ON session (id, token);
            CREATE TABLE mailing (n integer PRIMARY KEY, uid text, mail text, topic text, FOREIGN KEY (uid, mail) REFERENCES "user" (id, email));
            CREATE TABLE seats (n integer PRIMARY KEY, owner \(integer), owner_sub text, FOREIGN KEY (owner, owner_sub) REFERENCES users (id, sub));
            CREATE TABLE session_notes (n integer PRIMARY KEY, sid text, stoken text,
                                        FOREIGN KEY (sid, stoken) REFERENCES session (id, token) ON DELETE CASCADE);
            INSERT INTO mailing VALUES (1, '\(u1)', '\(u1Mail)', 'news'), (2, '\(u2)', '\(u2Mail)', 'offers'), (3, '\(u2)', NULL, 'orphan');
            INSERT INTO seats VALUES (1, 2, 'better_auth|\(u2)'), (2, 1, 'better_auth|\(u1)');
            INSERT INTO session_notes VALUES (1, 'sess1', 'tok1');
            """)
        XCTAssertEqual(created, "", "the fixture loads on \(engine)")
        return store
    }

    /// Every row of the tables a merge touches (and of `also`), in key order.
    func rows(_ store: TestStore, also: [String] = []) throws -> [String] {
        try (tables + also).map { try store.query("SELECT * FROM \"\($0)\" ORDER BY 1") }
    }

    func plan(_ store: TestStore, keepEmail: String, emitSQL: String? = nil) throws -> CLI.Result {
        try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", keepEmail, "--store", store.location, "--json"]
                    + (emitSQL.map { ["--emit-sql", $0] } ?? []))
    }

    func planID(_ result: CLI.Result) throws -> String {
        try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["planID"] as? String, result.all)
    }

    /// Applies the plan, checks the store's keys, undoes it, and checks every row (of `also` too) is back.
    func applyAndUndo(_ store: TestStore, _ id: String, before: [String], also: [String] = [], check: () throws -> Void) throws {
        let applied = try cli.run(["merge", "apply", id, "--ticket", "SUP-7", "--yes", "--store", store.location])
        XCTAssertEqual(applied.status, 0, applied.all)
        if store.engine != .postgres { XCTAssertEqual(try store.query("PRAGMA foreign_key_check"), "", "every key holds") }
        try check()
        let undone = try cli.run(["merge", "undo", "1", "--reason", "composite test", "--store", store.location])
        XCTAssertEqual(undone.status, 0, undone.all)
        XCTAssertEqual(try rows(store, also: also), before, "undo gives back every row on \(store.engine)")
        if store.engine != .postgres { XCTAssertEqual(try store.query("PRAGMA foreign_key_check"), "") }
    }

    func testRowsOfACompositeKeyMoveAsAWholeKeyAndUndoGivesThemBack() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            let before = try rows(store)
            let planned = try plan(store, keepEmail: "target")
            XCTAssertEqual(planned.status, 0, planned.all)
            for reference in ["mailing.(uid, mail) → user.(id, email)", "seats.(owner, owner_sub) → users.(id, sub)",
                              "session_notes.(sid, stoken) → session.(id, token)"] {
                XCTAssertTrue(planned.stdout.contains(reference), "\(engine): \(reference) in \(planned.stdout)")
            }
            try applyAndUndo(store, try planID(planned), before: before) {
                XCTAssertEqual(try store.query("SELECT n, uid, mail FROM mailing ORDER BY n"),
                               "1|\(u1)|\(u1Mail)\n2|\(u1)|\(u1Mail)\n3|\(u2)|", "\(engine): U2's row now names U1's key; the NULL key stays")
                XCTAssertEqual(try store.query("SELECT n, owner, owner_sub FROM seats ORDER BY n"), "1|1|better_auth|\(u1)\n2|1|better_auth|\(u1)")
                XCTAssertEqual(try store.query("SELECT count(*) FROM session_notes"), "0", "the note of U2's ended session goes with it")
            }
        }
    }

    /// The emitted script counts the rows of a composite key by every column of it: run on a copy as planned it
    /// merges; run on a copy where U2 gained a row under that key since the plan, it stops and changes nothing.
    func testTheEmittedScriptCountsACompositeKeyByAllItsColumns() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            let script = scratch.path("merge-\(engine).sql")
            let planned = try plan(store, keepEmail: "target", emitSQL: script)
            XCTAssertEqual(planned.status, 0, planned.all)
            let sql = try String(contentsOfFile: script, encoding: .utf8)
            XCTAssertTrue(sql.contains("FROM \"mailing\" WHERE \"uid\" = '\(u2)' AND \"mail\" = '\(u2Mail)'"), sql)
            let asPlanned = try store.copy(in: scratch, name: "as_planned"), changed = try store.copy(in: scratch, name: "changed")
            defer { asPlanned.drop(); changed.drop() }
            // U2 gains a second row under its key, and the NULL-keyed row (not U2's) changes: only the first must stop it.
            _ = try changed.query("INSERT INTO mailing VALUES (4, '\(u2)', '\(u2Mail)', 'late')")
            /// Runs the script; nil when it ran through, else what it said when it stopped.
            func run(_ target: TestStore) throws -> String? {
                if engine == .sqlite {
                    let output = try sqlite3(target.location, sql)
                    return output.isEmpty ? nil : output
                }
                if engine == .d1 { return try target.d1Execute(sql) }
                let result = try Tool.run("/usr/bin/psql", [target.location, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", script])
                return result.status == 0 ? nil : result.all
            }
            XCTAssertNil(try run(asPlanned), "\(engine): the script runs on a copy as planned")
            XCTAssertEqual(try asPlanned.query("SELECT n, uid FROM mailing ORDER BY n"), "1|\(u1)\n2|\(u1)\n3|\(u2)")
            let unchanged = try rows(changed)
            let stopped = try run(changed)
            XCTAssertTrue(stopped?.contains("nothing was changed") ?? false, "\(engine): a row added under U2's key since the plan stops the script: \(stopped ?? "ran")")
            XCTAssertEqual(try rows(changed), unchanged, "\(engine): the stopped script changed nothing")
        }
    }

    /// U1 taking U2's email changes a value `mailing`'s key holds. SQLite checks keys at the commit in a merge, so the
    /// rows of both users follow U1's new email; Postgres checks a key per statement unless it is DEFERRABLE, so the
    /// plan is refused by name there until the key is declared so, and then the rows follow as on SQLite.
    func testAKeyHoldingTheEmailFollowsItOnlyWhereItIsCheckedAtTheCommit() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            let before = try rows(store)
            if engine == .postgres {
                let refused = try plan(store, keepEmail: "source")
                XCTAssertEqual(refused.status, 1, refused.all)
                XCTAssertTrue(refused.stderr.contains("2 row(s) of mailing point at a value this merge changes"), refused.stderr)
                XCTAssertTrue(refused.stderr.contains("mailing.(uid, mail) → user.(id, email)"), refused.stderr)
                XCTAssertTrue(refused.stderr.contains("--keep-email target"), refused.stderr)
                XCTAssertTrue(refused.stderr.contains("DEFERRABLE"), refused.stderr)
                XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_merge_plans"), "0", "nothing was planned")
                _ = try store.query("ALTER TABLE mailing ALTER CONSTRAINT mailing_uid_mail_fkey DEFERRABLE")
            }
            let planned = try plan(store, keepEmail: "source")
            XCTAssertEqual(planned.status, 0, planned.all)
            try applyAndUndo(store, try planID(planned), before: before) {
                XCTAssertEqual(try store.query("SELECT email FROM \"user\""), u2Mail)
                XCTAssertEqual(try store.query("SELECT n, uid, mail FROM mailing ORDER BY n"),
                               "1|\(u1)|\(u2Mail)\n2|\(u1)|\(u2Mail)\n3|\(u2)|", "\(engine): both users' rows follow U1's new email")
            }
        }
    }

    /// When only U2 has a sync row, the merge re-keys it to U1's sub: rows keyed on that sub (alone or with the id)
    /// follow it where the key is checked at the commit, and the plan is refused by name where it is not.
    func testAKeyHoldingTheSubFollowsTheReKeyedUsersRow() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            _ = try store.query("""
                DELETE FROM seats WHERE n = 2;
                DELETE FROM users WHERE id = 1;
                CREATE TABLE notes (n integer PRIMARY KEY, author_sub text REFERENCES users (sub));
                INSERT INTO notes VALUES (1, 'better_auth|\(u2)');
                """)
            let before = try rows(store, also: ["notes"])
            if engine == .postgres {
                let refused = try plan(store, keepEmail: "target")
                XCTAssertEqual(refused.status, 1, refused.all)
                XCTAssertTrue(refused.stderr.contains("U1 has no users row: U2's is re-keyed"), refused.stderr)
                XCTAssertTrue(refused.stderr.contains("give U1 a users row first"), refused.stderr)
                _ = try store.query("""
                    ALTER TABLE seats ALTER CONSTRAINT seats_owner_owner_sub_fkey DEFERRABLE;
                    ALTER TABLE notes ALTER CONSTRAINT notes_author_sub_fkey DEFERRABLE;
                    """)
            }
            let planned = try plan(store, keepEmail: "target")
            XCTAssertEqual(planned.status, 0, planned.all)
            try applyAndUndo(store, try planID(planned), before: before, also: ["notes"]) {
                XCTAssertEqual(try store.query("SELECT id, sub FROM users"), "2|better_auth|\(u1)")
                XCTAssertEqual(try store.query("SELECT n, owner, owner_sub FROM seats"), "1|2|better_auth|\(u1)", "\(engine): the seat follows the sub")
                XCTAssertEqual(try store.query("SELECT author_sub FROM notes"), "better_auth|\(u1)")
            }
        }
    }
}
