import XCTest

/// Bad store files: each gets a clear message and a non-zero exit, and is left as it was.
final class StoreFileTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    func testMissingStore() throws {
        let result = try cli.run(["status", "--store", scratch.path("absent.sqlite")])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("no store at"), result.stderr)
        XCTAssertTrue(result.stderr.contains("gatehouse init --store"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("absent.sqlite")))
    }

    func testMissingFolder() throws {
        let result = try cli.run(["init", "--store", scratch.path("no/such/dir/s.sqlite")])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("does not exist"), result.stderr)
    }

    func testNotSQLiteAndTruncatedFilesAreRefusedAndUntouched() throws {
        let text = scratch.path("notes.sqlite")
        try String(repeating: "not a database\n", count: 100).write(toFile: text, atomically: true, encoding: .utf8)
        let truncated = scratch.path("truncated.sqlite")
        let good = scratch.path("good.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", good]).status, 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: good))
        try data.prefix(300).write(to: URL(fileURLWithPath: truncated))
        let cutMidway = scratch.path("cut.sqlite")
        try data.prefix(data.count / 2 + 1000).write(to: URL(fileURLWithPath: cutMidway))
        for (path, expected) in [(text, "not a SQLite database"), (truncated, "truncated"), (cutMidway, "damaged")] {
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            for command in [["init"], ["status"], ["audit"]] {
                let result = try cli.run(command + ["--store", path])
                XCTAssertEqual(result.status, 1, "\(command) on \(path): \(result.all)")
                XCTAssertTrue(result.stderr.contains(expected), result.stderr)
                XCTAssertFalse(result.stderr.contains("while running"), "no SQL in operator messages: \(result.stderr)")
            }
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, path)
        }
    }

    func testDirectoryAsStore() throws {
        let result = try cli.run(["status", "--store", scratch.url.path])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("is a directory"), result.stderr)
    }

    func testLockedStoreFailsClearlyAfterTheBusyTimeout() throws {
        let store = scratch.path("locked.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        // An independent process holds the write lock for three seconds.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        holder.arguments = [store]
        let input = Pipe()
        holder.standardInput = input
        holder.standardOutput = FileHandle.nullDevice
        try holder.run()
        input.fileHandleForWriting.write(Data("BEGIN EXCLUSIVE; INSERT INTO allow_list VALUES ('better_auth|x', 'dev', 'now');\n.shell sleep 3\nCOMMIT;\n".utf8))
        Thread.sleep(forTimeInterval: 0.5)
        let impatient = CLI(environment: ["GATEHOUSE_BUSY_TIMEOUT_MS": "500"])
        let result = try impatient.run(["demo", "seed", "--store", store, "--users", "5", "-q"])
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertTrue(result.stderr.contains("locked by another process"), result.stderr)
        // With the default timeout, the same command waits for the lock and succeeds.
        let patient = try cli.run(["demo", "seed", "--store", store, "--users", "5", "-q"])
        XCTAssertEqual(patient.status, 0, patient.all)
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM user"), "5")
    }

    func testReadOnlyStoreIsReportedForWrites() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") else {
            throw XCTSkip("needs root to run the binary as an unprivileged user")
        }
        let dir = scratch.path("ro")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let store = dir + "/s.sqlite"
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        _ = try sqlite3(store, "PRAGMA wal_checkpoint(TRUNCATE);")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.url.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: store)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir) }
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let process = try CLI().start(["--version"])
        _ = try process.finish()
        let result = try runAsNobody([CLI.binary, "demo", "seed", "--store", store, "--users", "3", "-q"])
        XCTAssertEqual(result.status, 1, result.output)
        XCTAssertTrue(result.output.contains("read-only") || result.output.contains("cannot open"), result.output)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before)
    }

    private func runAsNobody(_ command: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
        process.arguments = ["-u", "nobody", "--"] + command
        var env = ProcessInfo.processInfo.environment
        env["GATEHOUSE_MIGRATIONS"] = CLI.packageRoot.appendingPathComponent("migrations").path
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
