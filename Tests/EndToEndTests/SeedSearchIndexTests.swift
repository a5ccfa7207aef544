import Foundation
import XCTest

/// The name search index after a seed that stops part-way, and `gatehouse health` telling the operator when the index
/// is missing or too far behind to help — on SQLite and Postgres (D1 has none, and health says so).
final class SeedSearchIndexTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)
    var scratch: Scratch!

    override func setUpWithError() throws { scratch = try Scratch() }

    /// The name search index check of `gatehouse health --json`, and the exit code.
    private func searchCheck(_ store: TestStore, file: StaticString = #filePath, line: UInt = #line) throws -> (status: Int32, check: [String: Any]) {
        let health = try cli.run(["health", "--json", "--store", store.location])
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(health.stdout.utf8)) as? [String: Any], health.all, file: file, line: line)
        let check = try XCTUnwrap((report["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "accounts.search_index" }, health.stdout,
                                  file: file, line: line)
        return (health.status, check)
    }

    /// Better Auth's sign-ups, written by plain SQL: `count` users, each of which the triggers mark pending.
    private func signUps(_ store: TestStore, count: Int) throws {
        let sql = store.engine != .postgres
            ? """
              WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
              INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt")
              SELECT 'signup' || i, 'Signup Person ' || i, 'signup' || i || '@example.com', 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' FROM n;
              """
            : """
              INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt")
              SELECT 'signup' || i, 'Signup Person ' || i, 'signup' || i || '@example.com', false, now(), now() FROM generate_series(1, \(count)) i;
              """
        _ = try store.query(sql)
        XCTAssertEqual(try store.query("SELECT count(*) FROM \"user\" WHERE id LIKE 'signup%'"), String(count))
    }

    /// Every part of the index gone, as a store restored without Gatehouse's tables, or a seed killed after it dropped
    /// the index, leaves it.
    private func dropTheIndex(_ store: TestStore) throws {
        let triggers = ["gatehouse_user_search_insert", "gatehouse_user_search_update", "gatehouse_user_search_delete"]
        let sql = store.engine != .postgres
            ? triggers.map { "DROP TRIGGER \($0);" }.joined() + """
              DROP TABLE gatehouse_user_search; DROP TABLE gatehouse_user_search_names; DROP TABLE gatehouse_user_search_pending;
              DROP TABLE gatehouse_user_search_terms;
              """
            : triggers.map { "DROP TRIGGER \($0) ON \"user\";" }.joined() + """
              DROP FUNCTION gatehouse_user_search_mark(); DROP TABLE gatehouse_user_search_names, gatehouse_user_search_pending;
              """
        _ = try store.query(sql)
    }

    func testHealthWarnsWhenTheNameSearchIndexIsMissingOrBehindOnEveryEngine() throws {
        for engine in TestStore.engines {
            let store = try TestStore.make(engine, in: scratch, name: "health")
            defer { store.drop() }
            XCTAssertEqual(try store.seedDemo(["--users", "50", "-q"], cli: cli, in: scratch).status, 0, "\(engine)")
            guard engine != .d1 else {
                // D1 has no name search index (its engine offers none): the check says searches scan, and asks nothing.
                let none = try searchCheck(store)
                XCTAssertEqual(none.status, 0, "\(engine)")
                XCTAssertTrue((none.check["summary"] as? String ?? "").contains("Gatehouse has no name search index for D1"), "\(none.check)")
                XCTAssertNil(none.check["action"], "\(none.check)")
                continue
            }
            XCTAssertEqual(try searchCheck(store).check["status"] as? String, "ok", "\(engine)")

            try dropTheIndex(store)
            let missing = try searchCheck(store)
            XCTAssertEqual(missing.status, 1, "\(engine): a warning")
            XCTAssertEqual(missing.check["status"] as? String, "warning", "\(engine)")
            XCTAssertEqual(missing.check["summary"] as? String, "no name search index: name searches scan the user table", "\(engine)")
            XCTAssertEqual(missing.check["action"] as? String, "gatehouse accounts index", "\(engine)")
            let built = try cli.run(["accounts", "index", "--store", store.location])
            XCTAssertEqual(built.status, 0, "\(engine): \(built.all)")
            XCTAssertEqual(try searchCheck(store).check["status"] as? String, "ok", "\(engine)")

            // More sign-ups since the last fold than a search reads directly: searches scan until it is folded.
            try signUps(store, count: 20_001)
            let behind = try searchCheck(store)
            XCTAssertEqual(behind.status, 1, "\(engine)")
            XCTAssertEqual(behind.check["status"] as? String, "warning", "\(engine)")
            XCTAssertEqual(behind.check["summary"] as? String,
                           "20001 users changed since the name search index was folded: name searches scan the user table", "\(engine)")
            XCTAssertEqual(behind.check["action"] as? String, "gatehouse accounts index", "\(engine)")
            XCTAssertEqual(try cli.run(["accounts", "index", "--store", store.location]).status, 0, "\(engine)")
            XCTAssertEqual(try searchCheck(store).check["status"] as? String, "ok", "\(engine)")
        }
    }

    /// A seed that fails part-way (here a trigger refuses the 8,001st user, as a full disk or a constraint would stop
    /// it) keeps every batch before the failed one, and leaves the name search index holding every user it wrote:
    /// nothing pending, one key per user, and health content.
    func testASeedThatFailsPartWayLeavesTheNameSearchIndexComplete() throws {
        let store = try TestStore.make(.sqlite, in: scratch, name: "failing")
        XCTAssertEqual(try cli.run(["init", "--store", store.location]).status, 0)
        _ = try store.query("""
            CREATE TRIGGER demo_stop BEFORE INSERT ON "user" WHEN (SELECT count(*) FROM "user") >= 8000
            BEGIN SELECT RAISE(ABORT, 'no more users here'); END;
            """)
        let seeded = try cli.run(["demo", "seed", "--users", "20000", "-q", "--store", store.location])
        XCTAssertEqual(seeded.status, 1, seeded.all)
        XCTAssertTrue(seeded.stderr.contains("after 8000 of 20000 users were committed"), seeded.stderr)
        XCTAssertTrue(seeded.stderr.contains("name search index included"), seeded.stderr)
        XCTAssertEqual(try store.query("SELECT count(*) FROM \"user\""), "8000")
        XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_user_search_pending"), "0")
        XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_user_search_names"), "8000")
        XCTAssertEqual(try searchCheck(store).check["summary"] as? String, "name search is indexed (0 recent change(s) read directly)")
    }
}
