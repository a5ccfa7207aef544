import Foundation
import XCTest

/// A lock another session or process holds past the busy timeout ends a command with the store's one-line "busy"
/// answer, on both engines, within the same bound: never a command that prints nothing for as long as the lock is held.
final class HeldLockTests: XCTestCase {
    /// The busy timeout the commands run with: short, so the test is quick; the bound it checks is the same rule.
    static let busyMilliseconds = 1500

    func testEveryCommandGivesUpBusyWhenPostgresHoldsTheUserTable() throws {
        let cli = CLI(environment: TestStore.environment.merging(["GATEHOUSE_BUSY_TIMEOUT_MS": "\(Self.busyMilliseconds)"]) { $1 })
        let store = try TestStore.make(.postgres, in: try Scratch())
        defer { store.drop() }
        XCTAssertEqual(try cli.run(["init", "--store", store.location]).status, 0)
        XCTAssertEqual(try cli.run(["demo", "seed", "--users", "30", "-q", "--store", store.location]).status, 0)
        let users = try cli.run(["users", "search", "a", "--json", "--store", store.location])
        let found = (try JSONSerialization.jsonObject(with: Data(users.stdout.utf8)) as? [String: Any])?["users"] as? [[String: Any]]
        let ids = (found ?? []).compactMap { $0["id"] as? String }
        XCTAssertGreaterThanOrEqual(ids.count, 2, users.all)
        let (id, other) = (ids[0], ids[1])

        // Another session takes the user table for itself and keeps it (psql waits on its stdin until we close it).
        let holder = try Tool.start("/usr/bin/psql", [store.location, "-X", "-q", "-v", "ON_ERROR_STOP=1"],
                                    stdin: #"BEGIN; LOCK TABLE "user" IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(60);"#)
        defer { holder.process.terminate(); _ = try? holder.finish() }
        usleep(500_000)

        let commands: [(arguments: [String], status: Int32)] = [
            (["status"], 1), (["users", "show", id], 1), (["health"], 3),
            (["merge", "plan", "--from", other, "--into", id], 1), (["demo", "seed", "--users", "5", "-q"], 1),
        ]
        for command in commands {
            let started = Date()
            let run = try cli.run(command.arguments + ["--store", store.location])
            let seconds = Date().timeIntervalSince(started)
            XCTAssertEqual(run.status, command.status, "\(command.arguments): \(run.all)")
            XCTAssertTrue(run.all.contains("stayed locked by another session"), "\(command.arguments): \(run.all)")
            XCTAssertLessThan(seconds, Double(Self.busyMilliseconds) / 1000 * 3 + 2, "\(command.arguments) waited \(seconds) s")
        }
    }

    func testAWriteGivesUpBusyWhenAnotherProcessHoldsTheSQLiteWriteLock() throws {
        let cli = CLI(environment: ["GATEHOUSE_BUSY_TIMEOUT_MS": "\(Self.busyMilliseconds)"])
        let scratch = try Scratch()
        let store = try TestStore.make(.sqlite, in: scratch)
        XCTAssertEqual(try cli.run(["init", "--store", store.location]).status, 0)
        // Another process: Python's sqlite3 (the venv ops/test made, else the system's) holds BEGIN IMMEDIATE for a minute.
        let python = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"] ?? "/usr/bin/python3"
        let holder = try Tool.start(python, ["-c", """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            time.sleep(60)
            """, store.location])
        defer { holder.process.terminate(); _ = try? holder.finish() }
        usleep(500_000)
        let started = Date()
        let run = try cli.run(["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "SUP-1", "--store", store.location])
        XCTAssertEqual(run.status, 1, run.all)
        XCTAssertTrue(run.all.contains("stayed locked by another process"), run.all)
        XCTAssertLessThan(Date().timeIntervalSince(started), Double(Self.busyMilliseconds) / 1000 * 3 + 2)
    }
}
