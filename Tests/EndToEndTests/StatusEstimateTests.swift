import Foundation
import XCTest

/// `gatehouse status` on a store large enough for estimates: large tables' counts come from the engine's statistics,
/// marked as estimates in text and JSON; `--exact` counts every row. On every engine.
final class StatusEstimateTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)
    /// More users than `StoreStatus.countedBelow`, so the user table is estimated.
    static let users = 12_000

    private func status(_ store: TestStore, _ extra: [String] = []) throws -> (counts: [String: Int], estimated: Bool?, named: [String]?, text: String) {
        let result = try cli.run(["status", "--store", store.location, "--json"] + extra)
        XCTAssertEqual(result.status, 0, result.all)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
        let counts = try XCTUnwrap(object["counts"] as? [String: Int], result.stdout)
        return (counts, object["estimated"] as? Bool, object["estimatedCounts"] as? [String], result.stdout)
    }

    /// The real row count of `table`, from the engine's own shell.
    private func count(_ store: TestStore, _ table: String) throws -> Int {
        let text = try store.query("SELECT count(*) FROM \"\(table)\"")
        return try XCTUnwrap(Int(text), text)
    }

    func testDefaultIsAMarkedEstimateNearTheTruthAndExactCounts() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try TestStore.make(engine, in: scratch)
            defer { store.drop() }
            XCTAssertEqual(try cli.run(["init", "--store", store.location]).status, 0)
            let seeded = try store.seedDemo(["--users", String(Self.users), "-q"], cli: cli, in: scratch)
            XCTAssertEqual(seeded.status, 0, seeded.all)
            // Rows deleted from the middle of the user table: an estimate is no longer trivially exact.
            let deleted = try store.query(engine != .postgres
                ? "PRAGMA foreign_keys = OFF; DELETE FROM user WHERE rowid % 10 = 3; SELECT changes();"
                : "WITH d AS (DELETE FROM \"user\" WHERE id IN (SELECT id FROM \"user\" ORDER BY id LIMIT 1200) RETURNING 1) SELECT count(*) FROM d")
            XCTAssertTrue(deleted.hasSuffix("1200"), "\(engine): \(deleted)")
            let truth = ["users": try count(store, "user"), "accounts": try count(store, "account"), "sessions": try count(store, "session"),
                         "sync_users": try count(store, "users"), "workspaces": try count(store, "workspaces"), "audit_entries": try count(store, "gatehouse_audit")]
            XCTAssertEqual(truth["users"], Self.users - 1200)

            let exact = try status(store, ["--exact"])
            XCTAssertEqual(exact.counts, truth, "\(engine): --exact counts every row")
            XCTAssertEqual(exact.estimated, false, exact.text)
            XCTAssertEqual(exact.named, [], exact.text)

            let estimate = try status(store)
            XCTAssertEqual(estimate.estimated, true, "\(engine): \(estimate.text)")
            let named = try XCTUnwrap(estimate.named, estimate.text)
            XCTAssertTrue(named.contains("users"), "\(engine): \(estimate.text)")
            XCTAssertEqual(Set(estimate.counts.keys), Set(truth.keys), estimate.text)
            for (name, real) in truth {
                let value = try XCTUnwrap(estimate.counts[name])
                if named.contains(name) {
                    // Within a fifth of the truth (SQLite's and D1's rowid span is an upper bound: 12,000 for 10,800 users).
                    XCTAssertLessThanOrEqual(abs(value - real), real / 5, "\(engine) \(name): \(value) for \(real)")
                    if engine != .postgres { XCTAssertGreaterThanOrEqual(value, real, "the rowid span is an upper bound: \(name)") }
                } else {
                    XCTAssertEqual(value, real, "\(engine) \(name): a count under 10,000 is counted")
                }
            }
            // The text marks each estimate and says how to get counts.
            let text = try cli.run(["status", "--store", store.location])
            XCTAssertEqual(text.status, 0, text.all)
            let usersLine = try XCTUnwrap(text.stdout.split(separator: "\n").first { $0.hasPrefix("users:") }, text.stdout)
            XCTAssertTrue(usersLine.hasSuffix(" (estimate)"), String(usersLine))
            XCTAssertTrue(text.stdout.contains("--exact counts every row"), text.stdout)
            let exactText = try cli.run(["status", "--exact", "--store", store.location])
            XCTAssertFalse(exactText.stdout.contains("estimate"), exactText.stdout)
            XCTAssertTrue(exactText.stdout.contains("users:         \(Self.users - 1200)\n"), exactText.stdout)
        }
    }

    func testSmallStoresAreCountedAndHelpShowsExact() throws {
        let scratch = try Scratch()
        let store = scratch.path("small.sqlite")
        XCTAssertEqual(try cli.run(["demo", "seed", "--store", store, "--users", "40", "-q"]).status, 0)
        let result = try cli.run(["status", "--store", store, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
        XCTAssertEqual(object["estimated"] as? Bool, false, "counts under 10,000 are counted: \(result.stdout)")
        XCTAssertEqual((object["counts"] as? [String: Int])?["users"], 40)
        let help = try cli.run(["status", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("--exact"), help.stdout)
    }
}
