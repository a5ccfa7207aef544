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

    /// Neither service can leave a core file (it could hold the master key or a store password), see other users'
    /// processes, or make system calls outside an ordinary service's set.
    func testServiceUnitsLeaveNoCoreFileAndFilterSystemCalls() throws {
        for name in ["gatehouse-console.service", "gatehouse-health.service"] {
            let unit = try String(contentsOf: ops.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
            for directive in ["LimitCORE=0", "ProtectProc=invisible", "SystemCallFilter=@system-service", "NoNewPrivileges=yes"] {
                XCTAssertTrue(unit.contains("\n\(directive)\n"), "\(name): \(directive)")
            }
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

    /// Both service units reach a Postgres store over TCP on this host, as gatehouse.env lets an operator configure.
    /// The units' network sandbox is applied as systemd applies it: `PrivateNetwork=yes` is a network namespace of the
    /// process's own (`unshare -n`, its own loopback up), where the host's 127.0.0.1 is not reachable; the address
    /// families and the IP allow-list must admit loopback TCP. The store is the test cluster behind a TCP port (a
    /// forwarder to its socket: the cluster itself listens on no TCP port).
    func testBothServiceUnitsReachAPostgresStoreOverTCP() throws {
        let scratch = try Scratch()
        let store = try TestStore.make(.postgres, in: scratch)
        defer { store.drop() }
        XCTAssertEqual(try CLI().run(["init", "--store", store.location]).status, 0)
        let uri = try XCTUnwrap(URLComponents(string: store.location))
        let items = Dictionary((uri.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { $1 }
        let socket = "\(try XCTUnwrap(items["host"]))/.s.PGSQL.\(items["port"] ?? "5432")"
        let python = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"] ?? "/usr/bin/python3"
        let forwarder = try Tool.start(python, ["-c", """
            import socket, sys, threading
            server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(16)
            print(server.getsockname()[1], flush=True)
            def pipe(source, sink):
                try:
                    while data := source.recv(65536): sink.sendall(data)
                except OSError: pass
                for end in (source, sink):
                    try: end.shutdown(socket.SHUT_RDWR)
                    except OSError: pass
            while True:
                client, _ = server.accept()
                upstream = socket.socket(socket.AF_UNIX); upstream.connect(sys.argv[1])
                threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
                threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
            """, socket])
        defer { forwarder.process.terminate() }
        var port = ""
        for _ in 0..<100 where port.isEmpty {
            port = ((try? String(contentsOf: forwarder.out, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            if port.isEmpty { usleep(50_000) }
        }
        XCTAssertFalse(port.isEmpty, "the forwarder did not start")
        let tcpStore = "postgresql://\(uri.user ?? "gatehouse")@127.0.0.1:\(port)\(uri.path)"

        for name in ["gatehouse-console.service", "gatehouse-health.service"] {
            let unit = try String(contentsOf: ops.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
            let directives = unit.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line -> (String, String)? in
                guard let equals = line.firstIndex(of: "=") else { return nil }
                return (String(line[..<equals]), String(line[line.index(after: equals)...]))
            }
            func values(_ key: String) -> [String] { directives.filter { $0.0 == key }.flatMap { $0.1.split(separator: " ").map(String.init) } }
            if !values("RestrictAddressFamilies").isEmpty {
                XCTAssertTrue(values("RestrictAddressFamilies").contains("AF_INET"), "\(name): TCP over IPv4 is not allowed")
            }
            if values("IPAddressDeny").contains("any") {
                XCTAssertFalse(Set(values("IPAddressAllow")).isDisjoint(with: ["localhost", "127.0.0.1", "127.0.0.0/8"]), "\(name): loopback is not allowed")
            }
            var command = [CLI.binary, "health", "--record", "--store", tcpStore]
            if values("PrivateNetwork").last == "yes" {
                command = ["/usr/bin/unshare", "-n", "/bin/sh", "-c", "ip link set lo up 2>/dev/null; exec \"$@\"", "sh"] + command
            }
            var environment = ProcessInfo.processInfo.environment
            environment.removeValue(forKey: "GATEHOUSE_STORE")
            let run = try Tool.run(command[0], Array(command.dropFirst()), environment: environment)
            XCTAssertTrue([0, 1, 2].contains(run.status), "\(name): health --record on a Postgres store over TCP: \(run.all)")
            XCTAssertFalse(run.all.contains("cannot connect"), "\(name): \(run.all)")
        }
    }

    /// The cron line run as cron runs it (sh -c, the file's variables in the environment), with gatehouse.env holding
    /// what a shell would misread: a store path with `&` in it and a value with backticks. gatehouse reads the file as
    /// data: the checks run on that store, and nothing in the file runs.
    func testCronLineReadsTheEnvironmentFileAsData() throws {
        let scratch = try Scratch()
        let store = scratch.path("a&b `x`.sqlite")
        XCTAssertEqual(try CLI().run(["init", "--store", store]).status, 0)
        let marker = scratch.path("ran")
        let envFile = scratch.path("gatehouse.env")
        try """
            # the operator's settings
            GATEHOUSE_STORE=\(store)
            GATEHOUSE_NOTE="`touch \(marker)`$(touch \(marker))"
            GATEHOUSE_OTHER='`touch \(marker)`'

            """.write(toFile: envFile, atomically: true, encoding: .utf8)
        let cron = try String(contentsOf: ops.appendingPathComponent("cron/gatehouse-health"), encoding: .utf8)
        var environment = ["PATH": "/usr/bin:/bin", "HOME": scratch.url.path]
        var job = ""
        for line in cron.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ", maxSplits: 6)
            if fields.count == 7, !line.contains("=") || fields[0] == "17" {
                job = String(fields[6])
            } else if let equals = line.firstIndex(of: "="), !line.contains(" ") {
                environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
        }
        XCTAssertEqual(environment["GATEHOUSE_ENV_FILE"], "-/etc/gatehouse/gatehouse.env")
        environment["GATEHOUSE_ENV_FILE"] = "-" + envFile
        job = job.replacingOccurrences(of: "/usr/bin/gatehouse", with: CLI.binary)
            .replacingOccurrences(of: "/var/lib/node_exporter/textfile_collector/gatehouse.prom", with: scratch.path("gatehouse.prom"))
        let run = try Tool.run("/bin/sh", ["-c", job], environment: environment)
        XCTAssertEqual(run.status, 0, run.all)
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_health_runs;"), "1", "the checks ran on the store the file names")
        XCTAssertTrue(FileManager.default.fileExists(atPath: scratch.path("gatehouse.prom")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "a command in the settings file ran")

        // A file that is named without - must exist; a malformed line is refused by its number, its value unshown.
        environment["GATEHOUSE_ENV_FILE"] = scratch.path("missing.env")
        let missing = try Tool.run(CLI.binary, ["status"], environment: environment)
        XCTAssertEqual(missing.status, 1, missing.all)
        XCTAssertTrue(missing.stderr.contains("GATEHOUSE_ENV_FILE names \(scratch.path("missing.env")), which does not exist"), missing.stderr)
        try "GATEHOUSE_STORE=\(store)\nsecret-password-line\n".write(toFile: envFile, atomically: true, encoding: .utf8)
        environment["GATEHOUSE_ENV_FILE"] = envFile
        let malformed = try Tool.run(CLI.binary, ["status"], environment: environment)
        XCTAssertEqual(malformed.status, 1, malformed.all)
        XCTAssertTrue(malformed.stderr.contains("line 2 is not NAME=VALUE"), malformed.stderr)
        XCTAssertFalse(malformed.all.contains("secret-password"), malformed.all)
    }

    /// The binary marks itself undumpable at start: another process of the same user cannot read its environment
    /// (or memory) through /proc, and it leaves no core file. Checked as the user nobody, on a command that waits
    /// for its password on stdin.
    func testTheProcessIsNotDumpable() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
        process.arguments = ["-u", "nobody", "--", CLI.binary, "admins", "add", "someone", "--password-file", "-", "--store", "/nonexistent/x.sqlite"]
        process.environment = ["PATH": "/usr/bin:/bin", "GATEHOUSE_MASTER_KEY": "not-a-real-key-but-secret"]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { try? input.fileHandleForWriting.close(); process.waitUntilExit() }
        // runuser's child is gatehouse: find it, waiting until it has started.
        var pid = ""
        for _ in 0..<100 where pid.isEmpty {
            pid = (try Tool.run("/usr/bin/pgrep", ["-u", "nobody", "-f", "admins add someone"]).stdout)
                .split(separator: "\n").first.map(String.init) ?? ""
            if pid.isEmpty { usleep(50_000) }
        }
        XCTAssertFalse(pid.isEmpty, "gatehouse did not start")
        usleep(200_000)
        let read = try Tool.run("/usr/sbin/runuser", ["-u", "nobody", "--", "/bin/cat", "/proc/\(pid)/environ"])
        XCTAssertNotEqual(read.status, 0, "the same user read the process's environment")
        XCTAssertFalse(read.stdout.contains("not-a-real-key"), "the environment leaked")
    }
}
