import Foundation
import XCTest

/// `gatehouse health` as a timer runs it: statuses, exit codes, the textfile, the recorded history.
final class HealthCLITests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    var store: String!

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = scratch.path("h.sqlite")
        XCTAssertEqual(try cli.run(["demo", "seed", "--store", store, "--users", "30", "-q"]).status, 0)
    }

    func testHealthyStoreExitsZero() throws {
        let result = try cli.run(["health", "--store", store])
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertTrue(result.stdout.hasPrefix("OK: "), result.stdout)
        XCTAssertTrue(result.stdout.contains("[ok] store.integrity"), result.stdout)
    }

    func testLinkSocialSwitchWithoutExpiryWarns() throws {
        XCTAssertEqual(try cli.run(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "INC-1", "--store", store]).status, 0)
        let result = try cli.run(["health", "--store", store, "--json"])
        XCTAssertEqual(result.status, 1, result.all)
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(report?["status"] as? String, "warning")
        let timed = try cli.run(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--for", "2h", "--reason", "INC-1 window", "--store", store])
        XCTAssertEqual(timed.status, 0, timed.all)
        XCTAssertEqual(try cli.run(["health", "--store", store]).status, 0)
    }

    func testAutoLinkTakeoverRiskIsCritical() throws {
        let set = try cli.run(["policy", "set", "autoLink.allowDifferentEmails", "true", "--reason", "test", "--accept-takeover-risk", "--store", store])
        XCTAssertEqual(set.status, 0, set.all)
        let result = try cli.run(["health", "--store", store])
        XCTAssertEqual(result.status, 2, result.all)
        XCTAssertTrue(result.stdout.hasPrefix("CRITICAL: "), result.stdout)
        XCTAssertTrue(result.stdout.contains("do: gatehouse policy set autoLink.allowDifferentEmails false"), result.stdout)
    }

    func testBrokenAuditChainIsCritical() throws {
        _ = try sqlite3(store, "DROP TRIGGER gatehouse_audit_no_update; UPDATE gatehouse_audit SET actor = 'x' WHERE id = 1;")
        let result = try cli.run(["health", "--store", store])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stdout.contains("[critical] store.audit_chain"), result.stdout)
    }

    func testUnopenableStoreIsUnknown() throws {
        XCTAssertEqual(try cli.run(["health", "--store", scratch.path("absent.sqlite")]).status, 3)
        let garbage = scratch.path("garbage.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: garbage))
        let result = try cli.run(["health", "--store", garbage, "--json"])
        XCTAssertEqual(result.status, 3)
        XCTAssertTrue(result.stdout.contains("\"unknown\""), result.stdout)
    }

    func testPrometheusTextfileIsWrittenAtomicallyWithoutTimestamps() throws {
        let dir = scratch.path("textfile")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/gatehouse.prom"
        XCTAssertEqual(try cli.run(["health", "--store", store, "--prometheus", file]).status, 0)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(text.contains("gatehouse_check_status{check=\"store.integrity\"} 0\n"), text)
        XCTAssertTrue(text.contains("gatehouse_build_info{version="), text)
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            XCTAssertEqual(line.split(separator: " ").count, 2, "a sample has a name and a value, no timestamp: \(line)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["gatehouse.prom"], "no temporary file left behind")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool") {
            let check = Process()
            check.executableURL = URL(fileURLWithPath: "/usr/bin/promtool")
            check.arguments = ["check", "metrics"]
            check.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: file))
            let pipe = Pipe()
            check.standardOutput = pipe
            check.standardError = pipe
            try check.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            check.waitUntilExit()
            XCTAssertEqual(check.terminationStatus, 0, output)
        }
        let missing = try cli.run(["health", "--store", store, "--prometheus", scratch.path("nowhere/g.prom")])
        XCTAssertEqual(missing.status, 3, "results that cannot be written are not OK")
        XCTAssertTrue(missing.stderr.contains("does not exist"), missing.stderr)
    }

    func testRecordedRunsAndStoppedTimer() throws {
        XCTAssertEqual(try cli.run(["health", "--store", store, "--record"]).status, 0)
        let history = try cli.run(["health", "history", "--store", store, "--json"])
        let runs = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]]
        XCTAssertEqual(runs?.count, 1)
        _ = try sqlite3(store, "UPDATE gatehouse_health_runs SET at = '2020-01-01T00:00:00.000Z';")
        let stale = try cli.run(["health", "--store", store])
        XCTAssertEqual(stale.status, 1, stale.all)
        XCTAssertTrue(stale.stdout.contains("[warning] health.last_run"), stale.stdout)
    }

    func testBadOptionsAreUsageErrors() throws {
        XCTAssertEqual(try cli.run(["health", "--store", store, "--warn-days", "5", "--crit-days", "10"]).status, 2)
        XCTAssertEqual(try cli.run(["health", "--store", store, "--warn-days", "-1"]).status, 2)
        XCTAssertEqual(try cli.run(["health", "--store", store, "--expect-every", "10s"]).status, 2)
    }
}
