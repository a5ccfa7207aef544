import Foundation
import XCTest

/// The files in ops/ that run on real hosts are checked by the tools that will read them.
final class OpsFilesTests: XCTestCase {
    let ops = CLI.packageRoot.appendingPathComponent("ops")

    private func run(_ tool: String, _ arguments: [String]) throws -> (Int32, String) {
        let result = try Tool.run(tool, arguments)
        return (result.status, result.all)
    }

    func testSystemdUnitsVerify() throws {
        let tool = "/usr/bin/systemd-analyze"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: tool), "ops/test installs systemd for systemd-analyze")
        // The units name /usr/bin/gatehouse, where the package installs it; verify them against the built binary there.
        let scratch = try Scratch()
        for name in ["gatehouse-console.service", "gatehouse-health.service", "gatehouse-health.timer"] {
            let text = try String(contentsOf: ops.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
                .replacingOccurrences(of: "/usr/bin/gatehouse", with: CLI.binary)
            try text.write(toFile: scratch.path(name), atomically: true, encoding: .utf8)
        }
        let (status, output) = try run(tool, ["verify", "--man=no", scratch.path("gatehouse-console.service"),
                                              scratch.path("gatehouse-health.service"), scratch.path("gatehouse-health.timer")])
        let relevant = output.split(separator: "\n").filter { $0.contains("gatehouse") }
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(relevant, [], output)
    }

    func testConsoleUnitIsLoopbackOnlyAndHardened() throws {
        let unit = try String(contentsOf: ops.appendingPathComponent("systemd/gatehouse-console.service"), encoding: .utf8)
        for directive in ["NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "ReadWritePaths=/var/lib/gatehouse",
                          "--listen 127.0.0.1:", "IPAddressDeny=any"] {
            XCTAssertTrue(unit.contains(directive), directive)
        }
    }

    func testAlertRulesPassPromtool() throws {
        let tool = "/usr/bin/promtool"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: tool), "ops/test installs Debian's prometheus package for promtool")
        let (status, output) = try run(tool, ["check", "rules", ops.appendingPathComponent("prometheus/gatehouse-alerts.yml").path])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("SUCCESS"), output)
    }

    func testCronLineRunsTheHealthCommand() throws {
        let cron = try String(contentsOf: ops.appendingPathComponent("cron/gatehouse-health"), encoding: .utf8)
        let jobs = cron.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.split(separator: " ").count > 6 && !$0.contains("=") }
        XCTAssertEqual(jobs.count, 1)
        XCTAssertTrue(jobs[0].contains("gatehouse health --record --prometheus"))
        XCTAssertEqual(jobs[0].split(separator: " ").prefix(5).count, 5)
    }
}
