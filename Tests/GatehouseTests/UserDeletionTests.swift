@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// Deleting a user on request, through the service layer: on every Better Auth shape (1.7, 1.5 without issuer,
/// Drizzle snake_case with epoch dates), the injected revocation step (called first, its failure stopping the
/// deletion before anything is deleted), stale plans, undo giving back every row, collisions, and purge under a
/// clock the test moves.
final class UserDeletionTests: XCTestCase {
    let key = MasterKey(bytes: Array(repeating: 9, count: 32), source: "test")

    /// A revocation step that records the users it was asked about and answers as told.
    final class FakeRevocation: @unchecked Sendable {
        private let lock = NSLock()
        private var _calls: [String] = []
        var calls: [String] { lock.withLock { _calls } }
        let fail: Bool
        init(fail: Bool = false) { self.fail = fail }
        var step: DeletionRevocation {
            DeletionRevocation { [self] user in
                lock.withLock { _calls.append(user.rawValue) }
                if fail { throw GatehouseError("Apple answered 400 inval_client", fix: "check the client id") }
                return [DeletionRevocationOutcome(accountID: "acc", status: "revoked", detail: "refresh token revoked")]
            }
        }
    }

    func tables(_ store: Store) throws -> [String] { try store.db.tableNames().filter { !$0.hasPrefix("gatehouse_") } }

    func testPlanApplyUndoOnEveryShapeGivesBackEveryRowWithTokensNull() throws {
        for shape in MergeScenario.shapes {
            let scratch = try Scratch()
            let store = try MergeScenario.store(scratch, shape: shape)
            let s = try MergeScenario(store: store, sessions: 3, workspaces: 2)
            let before = try dump(store.db, tables: try tables(store))
            let plan = try UserDeletionPlanner(store: store).plan(user: s.u2, ticket: "SUP-1", actor: tester)
            XCTAssertEqual(plan.tables[store.schema.session.name], 3, "\(shape ?? "fresh")")
            XCTAssertEqual(plan.tables["workspaces"], 2)
            XCTAssertEqual(plan.tables[store.schema.user.name], 1)
            XCTAssertEqual(plan.tables[store.schema.verification!.name], 1, "the OTP row for U2's email, not someone else's")
            XCTAssertFalse(plan.canRevokeAppleTokens, "U2 signed in with Google")
            let fake = FakeRevocation()
            let applied = try UserDeletionApplier(store: store, masterKey: key).apply(planID: plan.planID, revocation: .revoke(fake.step), actor: tester)
            XCTAssertEqual(fake.calls, [s.u2])
            XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM \(store.schema.user.sql) WHERE \(store.schema.user.col(.id)) = ?", [s.u2]).int64, 0)
            XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM users WHERE sub = ?", [s.u2Sub]).int64, 0)
            XCTAssertNotNil(try store.db.scalar("SELECT id FROM users WHERE sub = ?", [s.u1Sub]).int64, "U1 untouched")
            try s.assertIntact()
            let box = try store.db.scalar("SELECT sealed_rows FROM gatehouse_user_deletions WHERE id = ?", [applied.deletionID])
            if case .blob(let bytes) = box {
                XCTAssertFalse(String(decoding: bytes, as: UTF8.self).contains(s.u2Email), "the copy is sealed")
            } else { XCTFail("no sealed copy") }
            let undone = try UserDeletionUndo(store: store, masterKey: key).undo(deletionID: String(applied.deletionID), reason: "by mistake", actor: tester)
            XCTAssertEqual(undone.rowsRestored, plan.rows.count)
            try s.assertIntact()
            // Everything back as it was, except the revoked token.
            let token = store.schema.account.column(.accessToken)
            let expected = before.map { $0.replacingOccurrences(of: "text(\"secret-token-\(s.u2)\")", with: "null") }
            XCTAssertEqual(try dump(store.db, tables: try tables(store)), expected, "\(shape ?? "fresh")")
            XCTAssertTrue(try store.db.scalar("SELECT \(SQL.quote(token)) FROM account WHERE \(store.schema.account.col(.userId)) = ?", [s.u2]).isNull)
            let actions = try store.db.rows("SELECT action FROM gatehouse_audit WHERE action LIKE 'user.delete.%' ORDER BY id").compactMap { $0["action"].string }
            XCTAssertEqual(actions, ["user.delete.plan", "user.delete.apply", "user.delete.undo"])
        }
    }

    func testARevocationFailureStopsTheDeletionBeforeAnythingIsDeleted() throws {
        let scratch = try Scratch()
        let store = try MergeScenario.store(scratch, shape: nil)
        let s = try MergeScenario(store: store)
        let plan = try UserDeletionPlanner(store: store).plan(user: s.u1Email, ticket: "SUP-2", actor: tester)
        XCTAssertTrue(plan.canRevokeAppleTokens, "U1's Apple account holds an access token")
        let before = try dump(store.db, tables: try tables(store))
        let fake = FakeRevocation(fail: true)
        XCTAssertThrowsError(try UserDeletionApplier(store: store, masterKey: key).apply(planID: plan.planID, revocation: .revoke(fake.step), actor: tester)) {
            XCTAssertTrue("\(($0 as? GatehouseError)?.message ?? "")".contains("so nothing was deleted"), "\($0)")
        }
        XCTAssertEqual(fake.calls, [s.u1])
        XCTAssertEqual(try dump(store.db, tables: try tables(store)), before)
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_user_deletions").int64, 0)
        // The build without revocation refuses the same way.
        XCTAssertThrowsError(try UserDeletionApplier(store: store, masterKey: key).apply(planID: plan.planID, revocation: .revoke(.unavailable), actor: tester)) {
            XCTAssertTrue(($0 as? GatehouseError)?.message.contains("token revocation is not available in this build") ?? false, "\($0)")
        }
        XCTAssertEqual(try dump(store.db, tables: try tables(store)), before)
    }

    func testAStalePlanIsRefusedBeforeRevokingAndChangesNothing() throws {
        let scratch = try Scratch()
        let store = try MergeScenario.store(scratch, shape: "drizzle-ms.sql")
        let s = try MergeScenario(store: store)
        let plan = try UserDeletionPlanner(store: store).plan(user: s.u2, ticket: "SUP-3", actor: tester)
        // Better Auth signs U2 in again after the plan.
        try store.db.write { try s.insertSession(user: s.u2, id: "late-session", created: Timestamp(iso8601: "2026-01-01T00:00:00.000Z")!) }
        let before = try dump(store.db, tables: try tables(store))
        let fake = FakeRevocation()
        XCTAssertThrowsError(try UserDeletionApplier(store: store, masterKey: key).apply(planID: plan.planID, revocation: .revoke(fake.step), actor: tester)) {
            let message = ($0 as? GatehouseError)?.message ?? ""
            XCTAssertTrue(message.contains("changed since the plan") && message.contains("sessions"), message)
        }
        XCTAssertEqual(fake.calls, [], "a stale plan revokes nothing")
        XCTAssertEqual(try dump(store.db, tables: try tables(store)), before)
    }

    func testPurgeDestroysOnlyExpiredCopiesUnderAMovedClock() throws {
        let scratch = try Scratch()
        let store = try MergeScenario.store(scratch, shape: nil)
        let s = try MergeScenario(store: store)
        let t0 = Timestamp(iso8601: "2026-12-01T00:00:00.000Z")!
        let plan = try UserDeletionPlanner(store: store).plan(user: s.u2, ticket: "SUP-4", actor: tester, now: t0)
        let applied = try UserDeletionApplier(store: store, masterKey: key).apply(planID: plan.planID, revocation: .skip(reason: "none held"),
                                                                               retain: Seconds(7 * 86_400), actor: tester, now: t0)
        XCTAssertEqual(applied.retainUntil.iso8601, "2026-12-08T00:00:00.000Z")
        let records = UserDeletionRecords(store: store)
        XCTAssertEqual(try records.purge(actor: tester, now: t0.adding(seconds: 6 * 86_400)).purged, [])
        XCTAssertEqual(try records.purge(actor: tester, now: t0.adding(seconds: 8 * 86_400)).purged, [applied.deletionID])
        XCTAssertTrue(try store.db.scalar("SELECT sealed_rows FROM gatehouse_user_deletions").isNull)
        XCTAssertEqual(try records.show(String(applied.deletionID)).status, "purged")
        XCTAssertThrowsError(try UserDeletionUndo(store: store, masterKey: key).undo(deletionID: String(applied.deletionID), reason: "late", actor: tester)) {
            XCTAssertTrue(($0 as? GatehouseError)?.message.contains("purged") ?? false, "\($0)")
        }
        XCTAssertEqual(try records.purge(actor: tester, now: t0.adding(seconds: 9 * 86_400)).purged, [], "purging twice is harmless")
    }

    func testUndoRefusesWhenARestoredKeyIsTakenAndChangesNothing() throws {
        let scratch = try Scratch()
        let store = try MergeScenario.store(scratch, shape: "better-auth-1.5.sql")
        let s = try MergeScenario(store: store)
        let plan = try UserDeletionPlanner(store: store).plan(user: s.u2Sub, ticket: "SUP-5", actor: tester)
        let applied = try UserDeletionApplier(store: store, masterKey: key).apply(planID: plan.planID, revocation: .skip(reason: "test"), actor: tester)
        // The person signs up again under the same id (a restored backup of Better Auth, say).
        try store.db.write { try s.insertUser(s.u2, email: "new@example.com", created: Timestamp(iso8601: "2026-01-01T00:00:00.000Z")!) }
        let before = try dump(store.db, tables: try tables(store))
        XCTAssertThrowsError(try UserDeletionUndo(store: store, masterKey: key).undo(deletionID: String(applied.deletionID), reason: "undo", actor: tester)) {
            XCTAssertTrue(($0 as? GatehouseError)?.message.contains("taken again") ?? false, "\($0)")
        }
        XCTAssertEqual(try dump(store.db, tables: try tables(store)), before)
        // Another user now holds U2's email: the restored row would collide on the unique email, and nothing changes.
        try store.db.write {
            try store.db.execute("DELETE FROM \(store.schema.user.sql) WHERE \(store.schema.user.col(.id)) = ?", [s.u2])
            try s.insertUser("U3cccccccccccccccccccccccccccccc", email: s.u2Email, created: Timestamp(iso8601: "2026-01-01T00:00:00.000Z")!)
        }
        let taken = try dump(store.db, tables: try tables(store))
        XCTAssertThrowsError(try UserDeletionUndo(store: store, masterKey: key).undo(deletionID: String(applied.deletionID), reason: "undo", actor: tester)) {
            XCTAssertTrue(($0 as? GatehouseError)?.message.contains("collides") ?? false, "\($0)")
        }
        XCTAssertEqual(try dump(store.db, tables: try tables(store)), taken)
        try store.db.write { try store.db.execute("DELETE FROM \(store.schema.user.sql) WHERE \(store.schema.user.col(.email)) = ?", [s.u2Email]) }
        // A wrong master key opens nothing.
        let other = MasterKey(bytes: Array(repeating: 1, count: 32), source: "other")
        XCTAssertThrowsError(try UserDeletionUndo(store: store, masterKey: other).undo(deletionID: String(applied.deletionID), reason: "undo", actor: tester)) {
            XCTAssertEqual(($0 as? GatehouseError)?.code, .unsealFailed, "\($0)")
        }
    }

    /// A key from the user table to itself (who invited whom) never takes another person along: the plan is refused.
    func testAnotherPersonReferencingTheUserIsRefusedNotDeleted() throws {
        let scratch = try Scratch()
        let store = try MergeScenario.store(scratch, shape: nil)
        let s = try MergeScenario(store: store)
        try store.db.write {
            try store.db.execute("ALTER TABLE user ADD COLUMN invitedBy TEXT REFERENCES user (id)")
            try store.db.execute("UPDATE user SET invitedBy = ? WHERE id = ?", [s.u2, s.u1])
        }
        let reopened = try Store.open(path: store.path)
        XCTAssertThrowsError(try UserDeletionPlanner(store: reopened).plan(user: s.u2, ticket: "SUP-7", actor: tester)) {
            let message = ($0 as? GatehouseError)?.message ?? ""
            XCTAssertTrue(message.contains("other person's row") && message.contains(s.u1), message)
        }
        XCTAssertEqual(try reopened.db.scalar("SELECT count(*) FROM gatehouse_user_deletion_plans").int64, 0)
    }

    /// Oversized and hostile values in the deleted rows (a 256 KiB name with line breaks and control characters, a
    /// blob, an integer past 2^53, a NaN-free real) go into the sealed copy and come back exactly.
    func testHostileAndOversizedValuesComeBackExactly() throws {
        let scratch = try Scratch()
        let store = try MergeScenario.store(scratch, shape: nil)
        let s = try MergeScenario(store: store)
        let name = String(repeating: "Ana\n\u{1B}[31m\u{7F}\u{202E}😀'\"; DROP TABLE user; --", count: 6_000)
        try store.db.write {
            try store.db.execute("UPDATE user SET name = ?, image = ? WHERE id = ?", [name, SQLValue.blob([0, 255, 16, 0]), s.u2])
            try store.db.execute("CREATE TABLE odd (id INTEGER PRIMARY KEY, userId TEXT REFERENCES user (id), big INTEGER, ratio REAL, raw BLOB)")
            try store.db.execute("INSERT INTO odd VALUES (1, ?, 9007199254740993, 0.1, x'00ff'), (2, ?, -9223372036854775808, -0.0, NULL)", [s.u2, s.u2])
        }
        let reopened = try Store.open(path: store.path)
        let before = try dump(reopened.db, tables: try tables(reopened))
        let plan = try UserDeletionPlanner(store: reopened).plan(user: s.u2, ticket: "SUP-8", actor: tester)
        XCTAssertEqual(plan.tables["odd"], 2)
        XCTAssertFalse(try MergeJSON.string(plan).contains("DROP TABLE"), "the plan holds no row values")
        let applied = try UserDeletionApplier(store: reopened, masterKey: key).apply(planID: plan.planID, revocation: .skip(reason: "x"), actor: tester)
        _ = try UserDeletionUndo(store: reopened, masterKey: key).undo(deletionID: String(applied.deletionID), reason: "back", actor: tester)
        let expected = before.map { $0.replacingOccurrences(of: "text(\"secret-token-\(s.u2)\")", with: "null") }
        XCTAssertEqual(try dump(reopened.db, tables: try tables(reopened)), expected)
        XCTAssertEqual(try reopened.db.scalar("SELECT typeof(ratio) || typeof(big) FROM odd WHERE id = 1").string, "realinteger")
    }

    func testBadInputIsRefusedByName() throws {
        let scratch = try Scratch()
        let store = try MergeScenario.store(scratch, shape: nil)
        let s = try MergeScenario(store: store)
        let planner = UserDeletionPlanner(store: store)
        for input in ["nobody@example.com", "", String(repeating: "a", count: 5000), "a\u{0}b", "'; DROP TABLE user; --"] {
            XCTAssertThrowsError(try planner.plan(user: input, ticket: "SUP-6", actor: tester), input.prefix(20).description)
        }
        XCTAssertThrowsError(try planner.plan(user: s.u2, ticket: String(repeating: "T", count: 500), actor: tester))
        XCTAssertThrowsError(try planner.plan(user: s.u2, ticket: "  ", actor: tester))
        let plan = try planner.plan(user: s.u2, ticket: "SUP-6", actor: tester)
        let applier = UserDeletionApplier(store: store, masterKey: key)
        XCTAssertThrowsError(try applier.apply(planID: plan.planID, revocation: .skip(reason: "  "), actor: tester))
        XCTAssertThrowsError(try applier.apply(planID: plan.planID, revocation: .skip(reason: "x"), retain: Seconds(10), actor: tester))
        XCTAssertThrowsError(try applier.apply(planID: "dp_" + String(repeating: "z", count: 300), revocation: .skip(reason: "x"), actor: tester))
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_user_deletions").int64, 0)
        _ = try applier.apply(planID: plan.planID, revocation: .skip(reason: "x"), actor: tester)
        XCTAssertThrowsError(try applier.apply(planID: plan.planID, revocation: .skip(reason: "x"), actor: tester)) {
            XCTAssertTrue(($0 as? GatehouseError)?.message.contains("already applied") ?? false, "\($0)")
        }
    }
}
