@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// Merges in-process, on the three store shapes: plan, apply, undo, fingerprints and conflicts.
final class MergeTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    func plan(_ s: MergeScenario, _ decisions: MergeDecisions = MergeDecisions(keepEmail: .source)) throws -> MergePlan {
        try MergePlanner(store: s.store).plan(source: s.u2, target: s.u1, decisions: decisions, actor: tester)
    }

    func testMergeThenUndoIsIdenticalRowForRowOnEveryShape() throws {
        for shape in MergeScenario.shapes {
            let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: shape), sessions: 3, workspaces: 2)
            try s.execute("INSERT INTO allow_list (sub, role, granted_at) VALUES (?, 'admin', '2025-01-01')", [s.u2Sub])
            let u1Sync = try XCTUnwrap(try s.syncID(s.u1Sub))
            let before = try s.dumpAll()
            let plan = try plan(s, MergeDecisions(keepEmail: .source, carryRoles: true))
            let id = try XCTUnwrap(plan.id, "\(shape ?? "fresh"): \(plan.unresolved)")
            XCTAssertTrue(plan.warnings.contains("U2 is an admin (allow_list)"), "\(plan.warnings)")
            let result = try MergeApplier(store: s.store).apply(planID: id, ticket: "SUP-1", actor: tester)
            XCTAssertEqual(result.deleted["sessions"], 3)
            XCTAssertEqual(result.updated["sync:workspaces"], 2)

            // Merged: either provider account leads to U1; U2 and its sync row are gone; U1's sub is unchanged.
            XCTAssertEqual(try s.owner(ofAccount: "001234.\(s.u1.prefix(8)).0001"), s.u1)
            XCTAssertEqual(try s.owner(ofAccount: "1048576\(s.u2.count)0000000001"), s.u1)
            let user = s.store.schema.user
            XCTAssertEqual(try s.store.db.scalar("SELECT count(*) FROM \(user.sql) WHERE \(user.col(.id)) = ?", [s.u2]).int64, 0)
            XCTAssertEqual(try s.store.db.scalar("SELECT \(user.col(.email)) FROM \(user.sql) WHERE \(user.col(.id)) = ?", [s.u1]).string, s.u2Email)
            XCTAssertNil(try s.syncID(s.u2Sub))
            XCTAssertEqual(try s.syncID(s.u1Sub), u1Sync)
            XCTAssertEqual(try s.store.db.scalar("SELECT count(*) FROM workspaces WHERE owner_id = ?", [u1Sync]).int64, 2)
            XCTAssertEqual(try s.store.db.scalar("SELECT group_concat(sub) FROM allow_list").string, s.u1Sub)
            let session = s.store.schema.session
            XCTAssertEqual(try s.store.db.scalar("SELECT count(*) FROM \(session.sql) WHERE \(session.col(.userId)) = ?", [s.u1]).int64, 1)
            if let verification = s.store.schema.verification {
                XCTAssertEqual(try s.store.db.scalar("SELECT group_concat(\(verification.col(.id))) FROM \(verification.sql) WHERE \(verification.col(.id)) LIKE 'v-%'").string, "v-other")
            }
            try s.assertIntact()

            let undone = try MergeUndo(store: s.store).undo(mergeID: String(result.mergeID), reason: "test", actor: tester)
            XCTAssertEqual(undone.rowsRestored, plan.steps.count)
            XCTAssertEqual(try s.dumpAll(), before, shape ?? "fresh")
            try s.assertIntact()
            XCTAssertEqual(try MergeRecords(store: s.store).list().first?.status, "undone")
            XCTAssertEqual(try s.store.audit.entries(s.store.db).prefix(3).map(\.action), ["merge.undo", "merge.apply", "merge.plan"])
            XCTAssertEqual(try s.store.audit.entries(s.store.db).dropFirst().first?.details["ticket"], .string("SUP-1"))
        }
    }

    func testUndoRecordIsEncodedBeforeTheTransactionExactlyAsTheEncoderWould() throws {
        let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: nil), sessions: 2, workspaces: 2)
        let plan = try plan(s, MergeDecisions(keepEmail: .target, carryRoles: false))
        let id = try XCTUnwrap(plan.id, "\(plan.unresolved)")
        let result = try MergeApplier(store: s.store).apply(planID: id, ticket: "SUP-2", actor: tester)
        let stored = try XCTUnwrap(try s.store.db.scalar("SELECT undo_data FROM gatehouse_merges WHERE id = ?", [result.mergeID]).string)
        let decoded = try MergeJSON.decode(MergeUndoData.self, stored, what: "undo data")
        XCTAssertEqual(try MergeJSON.string(decoded), stored, "the stored record is the encoder's own output")
        XCTAssertTrue(decoded.steps.contains { $0.after != nil } && decoded.steps.contains { $0.after == nil }, "updates and deletes")

        // A row that differs from the expected one (a trigger of the app's wrote to it) is encoded as it is.
        let time = Timestamp(iso8601: "2026-02-03T04:05:06.789Z")!
        var rows = plan.steps.map { $0.after(at: time) }
        let changed = try XCTUnwrap(rows.firstIndex { $0 != nil })
        rows[changed] = rows[changed]!.with(["name": MergeValue(.text("changed by a trigger \"quoted\" / slashed"))])
        let record = try MergeUndoJSON(steps: plan.steps, appliedAt: time).json(after: rows)
        let whole = MergeUndoData(format: 1, appliedAt: time, steps: zip(plan.steps, rows).map { MergeUndoData.Entry(step: $0, after: $1) })
        XCTAssertEqual(record, try MergeJSON.string(whole))
    }

    /// The spliced form a store may hold: the empty record's text cut before `]}` with the entries
    /// glued in. The reference the stored form must match.
    static func splicedUndoRecord(steps: [MergeStep], rows: [MergeRowImage?], appliedAt: Timestamp) throws -> String {
        let envelope = try MergeJSON.string(MergeUndoData(format: 1, appliedAt: appliedAt, steps: []))
        let entries = try zip(steps, rows).map { try MergeJSON.string(MergeUndoData.Entry(step: $0, after: $1)) }
        return String(envelope.dropLast(2)) + entries.joined(separator: ",") + "]}"
    }

    func testUndoRecordIsByteForByteWhatEarlierVersionsStoredAndAnEarlierRecordStillUndoes() throws {
        let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: nil), sessions: 3, workspaces: 2)
        let before = try s.dumpAll()
        let plan = try plan(s, MergeDecisions(keepEmail: .source, carryRoles: false))
        let id = try XCTUnwrap(plan.id, "\(plan.unresolved)")
        let result = try MergeApplier(store: s.store).apply(planID: id, ticket: "SUP-3", actor: tester)
        let stored = try XCTUnwrap(try s.store.db.scalar("SELECT undo_data FROM gatehouse_merges WHERE id = ?", [result.mergeID]).string)
        let decoded = try MergeJSON.decode(MergeUndoData.self, stored, what: "undo data")
        let earlier = try Self.splicedUndoRecord(steps: decoded.steps.map(\.step), rows: decoded.steps.map(\.after), appliedAt: decoded.appliedAt)
        XCTAssertEqual(stored, earlier, "the record is stored exactly as earlier versions stored it")

        // A record in the spliced form, put in place of this one, undoes the merge.
        try s.execute("UPDATE gatehouse_merges SET undo_data = ? WHERE id = ?", [earlier, result.mergeID])
        _ = try MergeUndo(store: s.store).undo(mergeID: String(result.mergeID), reason: "test", actor: tester)
        XCTAssertEqual(try s.dumpAll(), before)

        // Rows that differ from the expected ones, with keys and text the encoder escapes, still match the spliced form.
        let time = Timestamp(iso8601: "2026-02-03T04:05:06.789Z")!
        var rows = plan.steps.map { $0.after(at: time) }
        for index in rows.indices where rows[index] != nil {
            rows[index] = rows[index]!.with(["name": MergeValue(.text("a \"quoted\" / slashed \\ é \u{1} line\nbreak"))])
        }
        XCTAssertEqual(try MergeUndoJSON(steps: plan.steps, appliedAt: time).json(after: rows),
                       try Self.splicedUndoRecord(steps: plan.steps, rows: rows, appliedAt: time))
    }

    /// Times building the undo record for a merge of 10 accounts, 200 sessions and 20 workspaces (the `ops/bench`
    /// merge): encoding before the transaction, and assembling inside it. Prints the figures; fails only far above
    /// the 50 ms the whole transaction may take.
    func testUndoRecordBuildTimeForABenchSizedMerge() throws {
        let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: nil), sessions: 200, workspaces: 20)
        let created = Timestamp(iso8601: "2025-03-01T10:00:00.000Z")!
        try s.store.db.write {
            for number in 1..<10 {
                try s.insertAccount(user: s.u2, provider: "google\(number)", accountID: "2048\(number)000000000\(number)", created: created)
            }
        }
        let plan = try plan(s, MergeDecisions(keepEmail: .source, carryRoles: false))
        let time = Timestamp(iso8601: "2026-02-03T04:05:06.789Z")!
        let rows = plan.steps.map { $0.after(at: time) }
        var encode: [Double] = [], assemble: [Double] = []
        for _ in 0..<25 {
            let start = DispatchTime.now()
            let undo = try MergeUndoJSON(steps: plan.steps, appliedAt: time)
            let middle = DispatchTime.now()
            _ = try undo.json(after: rows)
            let end = DispatchTime.now()
            encode.append(Double(middle.uptimeNanoseconds - start.uptimeNanoseconds) / 1e6)
            assemble.append(Double(end.uptimeNanoseconds - middle.uptimeNanoseconds) / 1e6)
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        print("undo record, \(plan.steps.count) steps: encode before the transaction \(median(encode)) ms, assemble inside it \(median(assemble)) ms (medians of 25)")
        XCTAssertLessThan(median(assemble), 50)
    }

    func testTablesAddedLaterAreCoveredThroughForeignKeys() throws {
        let store = try MergeScenario.store(scratch, shape: nil)
        try store.db.executeScript("""
            CREATE TABLE devices (id INTEGER PRIMARY KEY, owner INTEGER NOT NULL REFERENCES users (id), label TEXT);
            CREATE TABLE notes (body TEXT, author_sub TEXT REFERENCES users (sub));
            CREATE TABLE passkey (id TEXT PRIMARY KEY, userId TEXT NOT NULL REFERENCES user (id) ON DELETE CASCADE, publicKey TEXT);
            """)
        let s = try MergeScenario(store: try Store.open(path: store.path))
        let u2Sync = try XCTUnwrap(try s.syncID(s.u2Sub)), u1Sync = try XCTUnwrap(try s.syncID(s.u1Sub))
        try s.execute("INSERT INTO devices (owner, label) VALUES (?, 'iPhone'), (?, 'Mac')", [u2Sync, u2Sync])
        try s.execute("INSERT INTO notes (body, author_sub) VALUES ('hi', ?)", [s.u2Sub])
        try s.execute("INSERT INTO passkey VALUES ('pk1', ?, 'key')", [s.u2])
        let before = try s.dumpAll()
        let plan = try plan(s)
        XCTAssertTrue(plan.references.contains("devices.owner → users.id"), "\(plan.references)")
        XCTAssertTrue(plan.references.contains("passkey.userId → user.id"), "\(plan.references)")
        let result = try MergeApplier(store: s.store).apply(planID: try XCTUnwrap(plan.id), ticket: "SUP-2", actor: tester)
        XCTAssertEqual(try s.store.db.scalar("SELECT group_concat(owner) FROM devices").string, "\(u1Sync),\(u1Sync)")
        XCTAssertEqual(try s.store.db.scalar("SELECT author_sub FROM notes").string, s.u1Sub)
        XCTAssertEqual(try s.store.db.scalar("SELECT userId FROM passkey").string, s.u1)
        try s.assertIntact()
        _ = try MergeUndo(store: s.store).undo(mergeID: String(result.mergeID), reason: "test", actor: tester)
        XCTAssertEqual(try s.dumpAll(), before)
    }

    func testOnlyU2ProvisionedIsReKeyedToU1sSub() throws {
        for shape in MergeScenario.shapes {
            let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: shape), u1Sync: false)
            let u2Sync = try XCTUnwrap(try s.syncID(s.u2Sub))
            let before = try s.dumpAll()
            let result = try MergeApplier(store: s.store).apply(planID: try XCTUnwrap(try plan(s).id), ticket: "SUP-3", actor: tester)
            XCTAssertEqual(try s.syncID(s.u1Sub), u2Sync)
            XCTAssertNil(try s.syncID(s.u2Sub))
            XCTAssertEqual(try s.store.db.scalar("SELECT count(*) FROM workspaces WHERE owner_id = ?", [u2Sync]).int64, 1)
            try s.assertIntact()
            _ = try MergeUndo(store: s.store).undo(mergeID: String(result.mergeID), reason: "test", actor: tester)
            XCTAssertEqual(try s.dumpAll(), before)
        }
    }

    func testConflictsNeedExplicitDecisions() throws {
        for shape in MergeScenario.shapes {
            let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: shape))
            let created = Timestamp(iso8601: "2025-03-01T10:00:00.000Z")!
            try s.insertAccount(user: s.u1, provider: "google", accountID: "109999", created: created)
            try s.insertAccount(user: s.u1, provider: "credential", accountID: s.u1, created: created, password: "hash-one")
            try s.insertAccount(user: s.u2, provider: "credential", accountID: s.u2, created: created, password: "hash-two")
            let u1Sync = try XCTUnwrap(try s.syncID(s.u1Sub)), u2Sync = try XCTUnwrap(try s.syncID(s.u2Sub))
            try s.execute("INSERT INTO subscriptions VALUES ('sub-a', ?, 'pro-monthly', 'active', NULL, '2025-01-01'), ('sub-b', ?, 'pro-yearly', 'trialing', NULL, '2025-01-01')",
                          [u1Sync, u2Sync])
            try s.execute("INSERT INTO allow_list VALUES (?, 'dev', '2025-01-01')", [s.u2Sub])

            let undecided = try MergePlanner(store: s.store).plan(source: s.u2, target: s.u1, decisions: MergeDecisions(), actor: tester)
            XCTAssertNil(undecided.id)
            XCTAssertEqual(Set(undecided.unresolved.map(\.kind.rawValue)), ["email", "password", "provider", "subscription"])
            XCTAssertEqual(try s.store.db.scalar("SELECT count(*) FROM gatehouse_merge_plans").int64, 0)
            XCTAssertEqual(undecided.conflicts.first { $0.kind == .role }?.decision?.onCommandLine, "dropped (pass --carry-roles to grant it to U1)")

            let decided = try plan(s, MergeDecisions(keepEmail: .target, keepSubscription: .target, keepPassword: .source, sameProvider: .both))
            XCTAssertEqual(decided.unresolved.count, 0)
            _ = try MergeApplier(store: s.store).apply(planID: try XCTUnwrap(decided.id), ticket: "SUP-4", actor: tester)
            let account = s.store.schema.account
            let providers = try s.store.db.rows("SELECT \(account.col(.providerId)) AS p FROM \(account.sql) WHERE \(account.col(.userId)) = ? ORDER BY 1", [s.u1]).compactMap { $0["p"].string }
            XCTAssertEqual(providers, ["apple", "credential", "google", "google"])
            XCTAssertEqual(try s.store.db.scalar("SELECT \(account.col(.password)) FROM \(account.sql) WHERE \(account.col(.providerId)) = 'credential'").string, "hash-two")
            XCTAssertEqual(try s.store.db.scalar("SELECT group_concat(id || ':' || status, ',') FROM (SELECT * FROM subscriptions WHERE user_id = ? ORDER BY id)", [u1Sync]).string,
                           "sub-a:active,sub-b:canceled")
            XCTAssertEqual(try s.store.db.scalar("SELECT count(*) FROM allow_list").int64, 0, "roles are never granted silently")
            let user = s.store.schema.user
            XCTAssertEqual(try s.store.db.scalar("SELECT \(user.col(.email)) FROM \(user.sql) WHERE \(user.col(.id)) = ?", [s.u1]).string, s.u1Email)
            try s.assertIntact()
        }
    }

    func testSameProviderTargetDropsU2sAccount() throws {
        let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: nil))
        try s.insertAccount(user: s.u1, provider: "google", accountID: "109999", created: Timestamp(milliseconds: 0))
        let plan = try plan(s, MergeDecisions(keepEmail: .target, sameProvider: .target))
        _ = try MergeApplier(store: s.store).apply(planID: try XCTUnwrap(plan.id), ticket: "SUP-5", actor: tester)
        XCTAssertNil(try s.owner(ofAccount: "1048576\(s.u2.count)0000000001"))
        XCTAssertEqual(try s.owner(ofAccount: "109999"), s.u1)
    }

    func testStalePlanIsRefusedAndChangesNothing() throws {
        for shape in MergeScenario.shapes {
            let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: shape))
            let plan = try plan(s)
            let session = s.store.schema.session
            try s.execute("UPDATE \(session.sql) SET \(session.col(.ipAddress)) = '10.0.0.1' WHERE \(session.col(.userId)) = ?", [s.u2])
            let before = try s.dumpAll()
            XCTAssertThrowsError(try MergeApplier(store: s.store).apply(planID: try XCTUnwrap(plan.id), ticket: "SUP-6", actor: tester)) { error in
                let error = error as? GatehouseError
                XCTAssertEqual(error?.code.rawValue, "conflict")
                XCTAssertTrue(error?.message.hasPrefix("the users changed since the plan; plan again (changed: U2's sessions)") ?? false, "\(String(describing: error))")
            }
            XCTAssertEqual(try s.dumpAll(), before)
            XCTAssertEqual(try s.store.db.scalar("SELECT count(*) FROM gatehouse_merges").int64, 0)
            // A new row referencing U2 anywhere makes the plan stale too.
            let fresh = try self.plan(s)
            try s.execute("INSERT INTO workspaces VALUES ('late', ?, 'Late', '2025-05-05')", [try s.syncID(s.u2Sub)])
            XCTAssertThrowsError(try MergeApplier(store: s.store).apply(planID: try XCTUnwrap(fresh.id), ticket: "SUP-6", actor: tester))
        }
    }

    func testAppliedPlanCannotBeAppliedTwice() throws {
        let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: nil))
        let id = try XCTUnwrap(try plan(s).id)
        _ = try MergeApplier(store: s.store).apply(planID: id, ticket: "SUP-7", actor: tester)
        XCTAssertThrowsError(try MergeApplier(store: s.store).apply(planID: id, ticket: "SUP-7", actor: tester)) {
            XCTAssertTrue(($0 as? GatehouseError)?.message.contains("was already applied (merge 1)") ?? false, "\($0)")
        }
    }

    func testUndoRefusesAndNamesRowsThatDiverged() throws {
        for shape in MergeScenario.shapes {
            let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: shape))
            let result = try MergeApplier(store: s.store).apply(planID: try XCTUnwrap(try plan(s).id), ticket: "SUP-8", actor: tester)
            let account = s.store.schema.account
            try s.execute("UPDATE \(account.sql) SET \(account.col(.scope)) = 'changed' WHERE \(account.col(.providerId)) = 'google'")
            // A row the merge deleted exists again.
            try s.insertUser(s.u2, email: "again@example.com", created: Timestamp(milliseconds: 0))
            let before = try s.dumpAll()
            XCTAssertThrowsError(try MergeUndo(store: s.store).undo(mergeID: String(result.mergeID), reason: "test", actor: tester)) { error in
                let message = (error as? GatehouseError)?.message ?? ""
                XCTAssertTrue(message.contains("2 row(s) it touched changed since"), message)
                XCTAssertTrue(message.contains("\(account.name) id=acc-google-\(s.u2) changed since the merge (\(account.columns[.scope]!))"), message)
                XCTAssertTrue(message.contains("user id=\(s.u2) exists again since the merge"), message)
            }
            XCTAssertEqual(try s.dumpAll(), before)
            XCTAssertEqual(try MergeRecords(store: s.store).show(String(result.mergeID)).status, "applied")
        }
    }

    func testHostileInput() throws {
        let store = try MergeScenario.store(scratch, shape: nil)
        let hostile = "x'; DROP TABLE \"user\"; --"
        let s = try MergeScenario(store: store, u2: hostile)
        let planner = MergePlanner(store: store)
        func refuses(_ from: String, _ into: String, _ code: String, _ text: String, line: UInt = #line) {
            XCTAssertThrowsError(try planner.plan(source: from, target: into, decisions: MergeDecisions(), actor: tester), line: line) {
                XCTAssertEqual(($0 as? GatehouseError)?.code.rawValue, code, line: line)
                XCTAssertTrue(($0 as? GatehouseError)?.commandLineMessage.contains(text) ?? false, "\($0)", line: line)
            }
        }
        refuses("nobody", s.u1, "not_found", "--from \"nobody\" matches no user")
        refuses(s.u2, "' OR 1=1 --", "not_found", "--into \"' OR 1=1 --\" matches no user")
        refuses(s.u1, s.u1Sub, "invalid", "are the same user")
        refuses(String(repeating: "a", count: 5000), s.u1, "invalid", "5000 characters")
        refuses("", s.u1, "invalid", "--from is empty")
        // By email (any case) and by sub.
        let plan = try planner.plan(source: s.u2Email.uppercased(), target: s.u1Sub, decisions: MergeDecisions(keepEmail: .target), actor: tester)
        let id = try XCTUnwrap(plan.id)
        XCTAssertEqual(plan.source.rawValue, hostile)
        let applier = MergeApplier(store: store)
        XCTAssertThrowsError(try applier.apply(planID: id, ticket: String(repeating: "T", count: 100_000), actor: tester)) {
            XCTAssertTrue(($0 as? GatehouseError)?.commandLineMessage.contains("--ticket is 100000 characters") ?? false, "\($0)")
        }
        XCTAssertThrowsError(try applier.apply(planID: id, ticket: "a\nb", actor: tester))
        XCTAssertThrowsError(try applier.apply(planID: "mp_'; DELETE FROM user; --", ticket: "T", actor: tester)) {
            XCTAssertEqual(($0 as? GatehouseError)?.code.rawValue, "not_found")
        }
        XCTAssertThrowsError(try MergeUndo(store: store).undo(mergeID: "1 OR 1=1", reason: "x", actor: tester)) {
            XCTAssertEqual(($0 as? GatehouseError)?.code.rawValue, "not_found")
        }
        let before = try s.dumpAll()
        let result = try applier.apply(planID: id, ticket: "SUP-'9\"; --", actor: tester)
        XCTAssertEqual(try s.owner(ofAccount: "1048576\(hostile.count)0000000001"), s.u1)
        XCTAssertTrue(try store.db.tableExists("user"))
        _ = try MergeUndo(store: store).undo(mergeID: String(result.mergeID), reason: "'); DROP TABLE users; --", actor: tester)
        XCTAssertEqual(try s.dumpAll(), before)
    }

    func testEmittedSQLMatchesApplyAndAbortsOnChangedCopy() throws {
        for shape in MergeScenario.shapes {
            let s = try MergeScenario(store: try MergeScenario.store(scratch, shape: shape), u2: "U2'quote\"bbbbbbbbbbbbbbbbbbbbbbbb", sessions: 2, workspaces: 2)
            try s.execute("INSERT INTO allow_list VALUES (?, 'admin', '2025-01-01')", [s.u2Sub])
            let plan = try plan(s, MergeDecisions(keepEmail: .source, carryRoles: true))
            let time = Timestamp(iso8601: "2026-01-01T00:00:00.000Z")!
            let script = try MergeSQLEmitter.script(for: plan, at: time, on: s.store)
            // The script on a copy as planned gives the same rows as apply at the same time.
            let copy = scratch.path("copy-\(shape ?? "fresh").sqlite"), changed = scratch.path("changed-\(shape ?? "fresh").sqlite")
            try s.store.db.execute("VACUUM INTO ?", [copy])
            try s.store.db.execute("VACUUM INTO ?", [changed])
            // On a copy changed since the plan (one of U2's sessions), the script aborts and changes nothing.
            let stale = try SQLiteDatabase(path: changed)
            let session = s.store.schema.session
            try stale.execute("UPDATE \(session.sql) SET \(session.col(.ipAddress)) = '10.9.9.9' WHERE \(session.col(.id)) = ?", ["s1-\(s.u2)"])
            let staleBefore = try dump(stale, tables: try stale.tableNames())
            XCTAssertThrowsError(try stale.executeScript(script)) {
                XCTAssertTrue("\($0)".contains("the rows are not as planned; nothing was changed"), "\($0)")
            }
            XCTAssertFalse(stale.isInTransaction)
            XCTAssertEqual(try dump(stale, tables: try stale.tableNames()), staleBefore)
            try SQLiteDatabase(path: copy).executeScript(script)
            let merged = try SQLiteDatabase(path: copy)
            _ = try MergeApplier(store: s.store).apply(planID: try XCTUnwrap(plan.id), ticket: "SUP-10", actor: tester, now: time)
            let tables = try s.store.db.tableNames().filter { !$0.hasPrefix("gatehouse_") }
            XCTAssertEqual(try dump(merged, tables: tables), try dump(s.store.db, tables: tables), shape ?? "fresh")
            XCTAssertEqual(try merged.rows("PRAGMA foreign_key_check").count, 0)
        }
    }
}
