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

    /// The bound of the held-lock matrix: a busy timeout of 3 s and a margin for the process's own start.
    static let matrixBusyMilliseconds = 3000
    static let matrixBound = 4.5

    /// A command of each family that reads or writes the store, with the status it answers "busy" with (the reads
    /// of a family share its tables: `audit verify` reads what `audit list` does, and more).
    static func storeCommands(user id: String, other: String) -> [(arguments: [String], status: Int32)] {
        [(["status"], 1), (["users", "show", id], 1), (["users", "search", "a"], 1), (["users", "duplicates"], 1), (["health"], 3),
         (["audit", "verify"], 1), (["policy", "history"], 1),
         (["policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "SUP-1"], 1),
         (["policy", "simulate", "signin", "--provider", "google", "--email", "ana@gmail.com", "--email-verified"], 1),
         (["gates", "show"], 1), (["admins", "unthrottle", "--all"], 1), (["providers", "show"], 1), (["apple", "key", "list"], 1),
         (["merge", "plan", "--from", other, "--into", id], 1), (["users", "delete", "plan", other, "--ticket", "SUP-2"], 1),
         (["accounts", "check"], 1), (["demo", "seed", "--users", "3", "-q"], 1)]
    }

    /// Runs every command against the store, four at a time, each timed from its start to its exit.
    static func runAll(_ cli: CLI, _ commands: [(arguments: [String], status: Int32)], store: String)
        -> [(arguments: [String], status: Int32, result: CLI.Result?, seconds: Double)] {
        let results = Collected<(arguments: [String], status: Int32, result: CLI.Result?, seconds: Double)>()
        let width = 4
        let group = DispatchGroup()
        for lane in 0..<width {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for index in stride(from: lane, to: commands.count, by: width) {
                    let started = Date()
                    let result = try? cli.run(commands[index].arguments + ["--store", store])
                    results.append((commands[index].arguments, commands[index].status, result, Date().timeIntervalSince(started)))
                }
            }
        }
        group.wait()
        return results.values
    }

    /// Each command answered within the bound, and one that met the lock answered the store's "busy" with its status.
    static func check(_ results: [(arguments: [String], status: Int32, result: CLI.Result?, seconds: Double)], while what: String,
                      locked: String, file: StaticString = #filePath, line: UInt = #line) -> Set<String> {
        var busy: Set<String> = []
        for (arguments, status, result, seconds) in results {
            let name = arguments.prefix(2).joined(separator: " ")
            XCTAssertLessThan(seconds, matrixBound, "\(name) while \(what): waited \(seconds) s", file: file, line: line)
            guard let result else { XCTFail("\(name) did not run", file: file, line: line); continue }
            if result.all.contains(locked) {
                busy.insert(name)
                XCTAssertEqual(result.status, status, "\(name) while \(what): \(result.all)", file: file, line: line)
            }
            XCTAssertFalse(result.all.contains("Fatal error"), "\(name) while \(what): \(result.all)", file: file, line: line)
        }
        return busy
    }

    func testEveryCommandGivesUpOnceWithinTheBusyTimeoutWhilePostgresHoldsEachTable() throws {
        let cli = CLI(environment: TestStore.environment.merging(["GATEHOUSE_BUSY_TIMEOUT_MS": "\(Self.matrixBusyMilliseconds)"]) { $1 })
        let store = try TestStore.make(.postgres, in: try Scratch())
        defer { store.drop() }
        XCTAssertEqual(try cli.run(["init", "--store", store.location]).status, 0)
        XCTAssertEqual(try cli.run(["demo", "seed", "--users", "30", "-q", "--store", store.location]).status, 0)
        let psql = { (sql: String) in try Tool.start("/usr/bin/psql", [store.location, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql]).finish().stdout }
        let ids = try psql(#"SELECT id FROM "user" ORDER BY id LIMIT 2"#).split(separator: "\n").map(String.init)
        guard ids.count == 2 else { return XCTFail("no users: \(ids)") }
        // Better Auth's tables and every gatehouse_ table, each held in turn by another session.
        let tables = ["user", "account", "session", "verification"]
            + (try psql(#"SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'gatehouse\_%' ORDER BY 1"#)
                .split(separator: "\n").map(String.init))
        XCTAssertGreaterThan(tables.count, 20)
        for table in tables {
            let holder = try Tool.start("/usr/bin/psql", [store.location, "-X", "-q", "-v", "ON_ERROR_STOP=1"],
                                        stdin: "BEGIN; LOCK TABLE \"\(table)\" IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(120);")
            // Until the lock is held: psql shows it in pg_locks.
            for _ in 0..<100 {
                let held = try psql("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = '\(table)' AND l.mode = 'AccessExclusiveLock' AND l.granted")
                if held.hasPrefix("1") { break }
                usleep(50_000)
            }
            let busy = Self.check(Self.runAll(cli, Self.storeCommands(user: ids[0], other: ids[1]), store: store.location),
                                  while: "\(table) is locked", locked: "stayed locked by another session")
            holder.process.terminate()
            _ = try? holder.finish()
            // The holder's backend sleeps on after psql is gone (a server notices a closed client only between
            // statements): end it, so the next table is the only one locked.
            _ = try psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(120)%' AND pid <> pg_backend_pid()")
            switch table {
            case "user": XCTAssertTrue(busy.contains("users show"), "\(busy.sorted())")
            case "gatehouse_policy": XCTAssertTrue(busy.contains("policy set"), "\(busy.sorted())")
            default: break
            }
        }
    }

    func testEveryCommandAnswersWithinTheBusyTimeoutWhileAnotherProcessHoldsTheSQLiteFileExclusively() throws {
        let cli = CLI(environment: ["GATEHOUSE_BUSY_TIMEOUT_MS": "\(Self.matrixBusyMilliseconds)"])
        let scratch = try Scratch()
        let store = try TestStore.make(.sqlite, in: scratch)
        let initialized = try cli.run(["init", "--store", store.location])
        XCTAssertEqual(initialized.status, 0, initialized.all)
        let seeded = try cli.run(["demo", "seed", "--users", "30", "-q", "--store", store.location])
        XCTAssertEqual(seeded.status, 0, seeded.all)
        let python = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"] ?? "/usr/bin/python3"
        let ids = try Tool.start(python, ["-c", """
            import sqlite3, sys
            for (id,) in sqlite3.connect(sys.argv[1]).execute('SELECT id FROM "user" ORDER BY id LIMIT 2'): print(id)
            """, store.location]).finish().stdout.split(separator: "\n").map(String.init)
        guard ids.count == 2 else { return XCTFail("no users: \(ids)") }
        let holder = try Tool.start(python, ["-c", """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN EXCLUSIVE")
            time.sleep(120)
            """, store.location])
        defer { holder.process.terminate(); _ = try? holder.finish() }
        usleep(700_000)
        let busy = Self.check(Self.runAll(cli, Self.storeCommands(user: ids[0], other: ids[1]), store: store.location),
                              while: "another process holds BEGIN EXCLUSIVE", locked: "stayed locked by another process")
        // Reads go on beside the writer (WAL); the writes meet the lock.
        for write in ["policy set", "demo seed"] { XCTAssertTrue(busy.contains(write), "\(busy.sorted())") }
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
