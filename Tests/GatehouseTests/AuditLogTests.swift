@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

final class AuditLogTests: XCTestCase {
    var scratch: Scratch!
    var store: Store!
    override func setUpWithError() throws {
        scratch = try Scratch()
        store = try Store.initialize(path: scratch.path("a.sqlite"), actor: tester).0
        for number in 1...5 {
            try store.audit.append(store.db, actor: Actor("alice"), action: number % 2 == 0 ? "policy.set" : "apple.key.import",
                                   subject: "s\(number)", details: ["n": .int(Int64(number))])
        }
    }

    func testChainVerifiesAndListsNewestFirst() throws {
        let result = try store.audit.verify(store.db)
        XCTAssertTrue(result.isIntact, "\(result.problems)")
        XCTAssertEqual(result.entries, 6)
        XCTAssertEqual(try store.audit.entries(store.db, .init(limit: 2)).map(\.subject), ["s5", "s4"])
        XCTAssertEqual(try store.audit.entries(store.db, .init(action: "apple.key.*")).count, 3)
        XCTAssertEqual(try store.audit.entries(store.db, .init(action: "apple%")).count, 0, "LIKE wildcards are literal")
    }

    func testAppendOnlyTriggersRefuseEdits() {
        XCTAssertThrowsError(try store.db.execute("UPDATE gatehouse_audit SET actor = 'mallory'"))
        XCTAssertThrowsError(try store.db.execute("DELETE FROM gatehouse_audit"))
    }

    func testEditedEntryIsDetected() throws {
        try store.db.executeScript("DROP TRIGGER gatehouse_audit_no_update; UPDATE gatehouse_audit SET actor = 'mallory' WHERE id = 3;")
        let result = try store.audit.verify(store.db)
        XCTAssertFalse(result.isIntact)
        XCTAssertEqual(result.problems, ["entry 3 was edited after it was written (its hash does not match its contents)"])
    }

    func testDeletedEntryIsDetected() throws {
        try store.db.executeScript("DROP TRIGGER gatehouse_audit_no_delete; DELETE FROM gatehouse_audit WHERE id = 4;")
        XCTAssertEqual(try store.audit.verify(store.db).problems, ["entries 4–4 are missing (deleted)"])
    }

    func testTruncationIsDetectedAgainstARecordedHead() throws {
        let head = try store.audit.verify(store.db).head
        try store.db.executeScript("DROP TRIGGER gatehouse_audit_no_delete; DELETE FROM gatehouse_audit WHERE id = 6;")
        XCTAssertTrue(try store.audit.verify(store.db).isIntact, "without a recorded head, a clean truncation is invisible")
        XCTAssertFalse(try store.audit.verify(store.db, expectedHead: head).isIntact)
    }

    func testRewrittenChainIsDetected() throws {
        // Re-hashing one entry without re-chaining the next breaks the link.
        let row = try XCTUnwrap(store.db.row("SELECT * FROM gatehouse_audit WHERE id = 2"))
        let forged = AuditLog.hash(id: 2, at: try row.string("at"), actor: "mallory", action: try row.string("action"),
                                   subject: row["subject"].string, details: try row.string("details"), prev: try row.string("prev_hash"))
        try store.db.executeScript("DROP TRIGGER gatehouse_audit_no_update;")
        try store.db.execute("UPDATE gatehouse_audit SET actor = 'mallory', hash = ? WHERE id = 2", [forged])
        XCTAssertEqual(try store.audit.verify(store.db).problems, ["entry 3 does not chain to entry 2 (an entry before it was edited or replaced)"])
    }

    func testSecretLikeDetailsAreRedacted() throws {
        let entry = try store.audit.append(store.db, actor: tester, action: "test", details: ["password": "hunter2", "private_key": "-----BEGIN", "key_id": "ABC123DEFG"])
        XCTAssertEqual(entry.details["password"], .string("[redacted]"))
        XCTAssertEqual(entry.details["private_key"], .string("[redacted]"))
        XCTAssertEqual(entry.details["key_id"], .string("ABC123DEFG"))
        let stored = try store.db.scalar("SELECT details FROM gatehouse_audit WHERE id = ?", [entry.id]).string ?? ""
        XCTAssertFalse(stored.contains("hunter2"))
    }

    func testChangeRollsBackTheAuditEntryWithTheChange() throws {
        struct Boom: Error {}
        XCTAssertThrowsError(try store.change(actor: tester, action: "will.fail", subject: nil) {
            try store.db.execute("INSERT INTO allow_list (sub, role, granted_at) VALUES ('better_auth|x', 'dev', 'now')")
            throw Boom()
        })
        XCTAssertEqual(try store.audit.entries(store.db, .init(action: "will.fail")).count, 0)
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM allow_list").int64, 0)
    }
}

/// The audit log's filters by actor and by subject read an index on both engines (0012), not every entry: a viewer
/// looping over `?actor=` on a large log must not hold a handler thread for a scan.
final class AuditIndexTests: XCTestCase {
    private var database: PostgresTestDatabase?

    func testActorAndSubjectFiltersUseTheirIndexes() throws {
        let scratch = try Scratch()
        var stores = [try Store.initialize(path: scratch.path("a.sqlite"), actor: tester).0]
        database = try PostgresTestDatabase.ifAvailable("gh_auditidx")
        if let database { stores.append(try Store.initialize(path: database.uri, actor: tester).0) }
        for store in stores {
            for number in 1...30 {
                try store.audit.append(store.db, actor: Actor(number % 3 == 0 ? "alice" : "bob"), action: "policy.set", subject: "s\(number % 5)")
            }
            XCTAssertEqual(try store.audit.entries(store.db, .init(actor: "alice", limit: 100)).count, 10)
            XCTAssertEqual(try store.audit.entries(store.db, .init(subject: "s1", limit: 100)).map(\.subject), Array(repeating: "s1", count: 6))
            let postgres = store.db.engine == .postgres
            for (query, index) in [(AuditLog.Query(actor: "alice", limit: 1000), "gatehouse_audit_actor_idx"),
                                   (AuditLog.Query(subject: "s1", limit: 1000), "gatehouse_audit_subject_idx")] {
                let statement = AuditLog.entriesStatement(query)
                // On Postgres with scans forbidden, so the plan shows what can serve the statement, not what the planner
                // prefers for a few rows.
                let plan = try store.db.read {
                    if postgres { try store.db.execute("SET LOCAL enable_seqscan = off") }
                    return try store.db.rows((postgres ? "EXPLAIN " : "EXPLAIN QUERY PLAN ") + statement.sql, statement.arguments)
                        .compactMap { (postgres ? $0[0] : $0["detail"]).string }.joined(separator: "\n")
                }
                XCTAssertTrue(plan.contains(index), "\(store.db.engine): \(plan)")
                XCTAssertFalse(plan.contains("Seq Scan") || plan.contains("SCAN gatehouse_audit\n") || plan.hasSuffix("SCAN gatehouse_audit")
                               || plan.contains("TEMP B-TREE"), "\(store.db.engine): \(plan)")
            }
        }
    }
}
