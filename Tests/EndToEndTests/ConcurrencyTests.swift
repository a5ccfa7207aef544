import XCTest

/// Several processes read and write one store at once, as the console, CLI commands and the timer do: on either
/// engine none sees a locked error, and the audit chain stays one chain (its head is read under the writer turn).
final class ConcurrencyTests: XCTestCase {
    func testConcurrentWriterProcessesNeverSeeLockedErrors() throws {
        // Not on D1: its writers are demo seeds, which D1 refuses (D1EngineTests); PolicyConcurrencyTests races D1's writers.
        for engine in TestStore.engines where engine != .d1 { try concurrentWriterProcessesNeverSeeLockedErrors(engine) }
    }

    func concurrentWriterProcessesNeverSeeLockedErrors(_ engine: TestStore.Engine) throws {
        let scratch = try Scratch()
        let shared = try TestStore.make(engine, in: scratch, name: "shared")
        defer { shared.drop() }
        let store = shared.location
        let cli = CLI(environment: TestStore.environment)
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
        XCTAssertEqual(try shared.query("SELECT count(*) FROM \"user\""), String(writers * rounds * usersEach), "\(engine)")
        XCTAssertEqual(try shared.query("SELECT count(*) FROM gatehouse_audit WHERE action = 'demo.seed'"), String(writers * rounds))
        if engine == .sqlite { XCTAssertEqual(try shared.query("PRAGMA integrity_check"), "ok") }
        let verify = try cli.run(["audit", "verify", "--store", store])
        XCTAssertEqual(verify.status, 0, verify.all)
        // Besides the seeds: init's store.init and the first console admin's admin.add.
        XCTAssertTrue(verify.stdout.contains("intact: \(writers * rounds + 2) entries"), verify.stdout)
    }
}
