import Foundation
import XCTest

/// The console and CLI processes change the policy at once: no change is ever lost, on every engine (Postgres's
/// writers take turns on an advisory lock as SQLite's take the write lock).
final class PolicyConcurrencyTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)

    func testConcurrentSetsAllLandWithGaplessVersions() throws {
        for engine in TestStore.engines { try concurrentSetsAllLandWithGaplessVersions(engine) }
    }

    func concurrentSetsAllLandWithGaplessVersions(_ engine: TestStore.Engine) throws {
        let scratch = try Scratch()
        let shared = try TestStore.make(engine, in: scratch, name: "shared")
        defer { shared.drop() }
        let store = shared.location
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        let writers = 12
        var running: [CLI.Running] = []
        for writer in 0..<writers {
            let key = writer % 2 == 0 ? "linkSocial.allowDifferentEmails" : "accountLinking.allowUnlinkingAll"
            running.append(try cli.start(["policy", "set", key, writer % 3 == 0 ? "true" : "false", "--reason", "writer-\(writer)",
                                          "--store", store, "--actor", "ops-\(writer)"]))
            running.append(try cli.start(["policy", "show", "--store", store, "--json"]))
        }
        for process in running {
            let result = try process.finish()
            XCTAssertEqual(result.status, 0, result.all)
        }
        XCTAssertEqual(try shared.query("SELECT version FROM gatehouse_policy_history ORDER BY version").split(separator: "\n").joined(separator: ","),
                       (1...writers).map(String.init).joined(separator: ","), "\(engine)")
        XCTAssertEqual(try shared.query("SELECT count(DISTINCT reason) FROM gatehouse_policy_history"), String(writers))
        XCTAssertEqual(try shared.query("SELECT version FROM gatehouse_policy_version"), String(writers))
        XCTAssertEqual(try shared.query("SELECT count(*) FROM gatehouse_audit WHERE action = 'policy.set'"), String(writers))
        // Each history row's old value is the value the previous change to that key left: no lost update.
        XCTAssertEqual(try shared.query("""
            SELECT count(*) FROM gatehouse_policy_history h
            WHERE h.old_value_json <> coalesce((SELECT p.new_value_json FROM gatehouse_policy_history p
                                                WHERE p.key = h.key AND p.version < h.version ORDER BY p.version DESC LIMIT 1), 'false')
            """), "0", "\(engine)")
        let history = try cli.run(["policy", "history", "--store", store, "--json"])
        let entries = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as! [[String: Any]]
        XCTAssertEqual(Set(entries.compactMap { $0["reason"] as? String }), Set((0..<writers).map { "writer-\($0)" }))
        let verify = try cli.run(["audit", "verify", "--store", store])
        XCTAssertEqual(verify.status, 0, verify.all)
        XCTAssertTrue(verify.stdout.contains("audit chain intact"), verify.stdout)
    }

    func testConcurrentConditionalSetsExactlyOneWins() throws {
        for engine in TestStore.engines { try concurrentConditionalSetsExactlyOneWins(engine) }
    }

    func concurrentConditionalSetsExactlyOneWins(_ engine: TestStore.Engine) throws {
        let scratch = try Scratch()
        let shared = try TestStore.make(engine, in: scratch, name: "shared")
        defer { shared.drop() }
        let store = shared.location
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        let racers = 8
        let running = try (0..<racers).map { racer in
            try cli.start(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--if-version", "0", "--reason", "racer-\(racer)", "--store", store])
        }
        let results = try running.map { try $0.finish() }
        XCTAssertEqual(results.filter { $0.status == 0 }.count, 1, "\(engine): " + results.map(\.all).joined(separator: "\n"))
        for loser in results where loser.status != 0 {
            XCTAssertEqual(loser.status, 1)
            XCTAssertTrue(loser.stderr.contains("the policy is at version 1, not 0"), loser.stderr)
        }
        XCTAssertEqual(try shared.query("SELECT count(*) FROM gatehouse_policy_history"), "1", "\(engine)")
    }
}
