import XCTest

/// Several processes read and write one store at once, as the console, CLI commands and the timer do.
final class ConcurrencyTests: XCTestCase {
    func testConcurrentWriterProcessesNeverSeeLockedErrors() throws {
        let scratch = try Scratch()
        let store = scratch.path("shared.sqlite")
        let cli = CLI()
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        var running: [CLI.Running] = []
        let writers = 8, rounds = 3, usersEach = 40
        for writer in 0..<writers {
            for round in 0..<rounds {
                running.append(try cli.start(["demo", "seed", "--store", store, "--users", String(usersEach), "--seed", String(writer * 100 + round), "-q",
                                              "--actor", "writer-\(writer)"]))
            }
            running.append(try cli.start(["status", "--store", store, "--json"]))
            running.append(try cli.start(["audit", "verify", "--store", store]))
        }
        for process in running {
            let result = try process.finish()
            XCTAssertEqual(result.status, 0, result.all)
            XCTAssertFalse(result.all.contains("locked"), result.all)
        }
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM user"), String(writers * rounds * usersEach))
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_audit WHERE action = 'demo.seed'"), String(writers * rounds))
        XCTAssertEqual(try sqlite3(store, "PRAGMA integrity_check"), "ok")
        let verify = try cli.run(["audit", "verify", "--store", store])
        XCTAssertEqual(verify.status, 0, verify.all)
        // Besides the seeds: init's store.init and the first console admin's admin.add.
        XCTAssertTrue(verify.stdout.contains("intact: \(writers * rounds + 2) entries"), verify.stdout)
    }
}
