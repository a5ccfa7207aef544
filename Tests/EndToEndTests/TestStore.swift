import Foundation
import XCTest

/// A store for an end-to-end test on either engine: a SQLite file in the test's scratch folder, or a database of its
/// own on the throw-away Postgres cluster ops/test starts (GATEHOUSE_TEST_PG_URI), dropped by `drop()`. One test
/// body runs on both: `for store in try TestStore.each(scratch) { … }`.
struct TestStore {
    enum Engine: String, CaseIterable { case sqlite, postgres }

    let engine: Engine
    /// What `--store` is given: a path or a URI.
    let location: String
    private let database: String?

    /// The environment a CLI on this store needs: a Postgres store's master key file lives in GATEHOUSE_KEY_DIR.
    static let environment = ["GATEHOUSE_KEY_DIR": NSTemporaryDirectory() + "gatehouse-test-keys"]

    /// SQLite always; Postgres too when ops/test started a cluster.
    static var engines: [Engine] {
        ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"].map { $0.isEmpty ? [.sqlite] : [.sqlite, .postgres] } ?? [.sqlite]
    }

    /// A new, empty store on `engine` (not yet initialised).
    static func make(_ engine: Engine, in scratch: Scratch, name: String = "store") throws -> TestStore {
        switch engine {
        case .sqlite:
            return TestStore(engine: engine, location: scratch.path(name + ".sqlite"), database: nil)
        case .postgres:
            guard let base = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"], !base.isEmpty else {
                throw XCTSkip("GATEHOUSE_TEST_PG_URI is not set: run ops/test, which starts a throw-away Postgres for these tests")
            }
            let database = "gh_e2e_\(UInt32.random(in: .min ... .max))"
            let created = try Tool.run("/usr/bin/psql", [base, "-X", "-q", "-c", "CREATE DATABASE \(database)"])
            guard created.status == 0 else { throw XCTSkip("could not create a test database: \(created.all)") }
            return TestStore(engine: engine, location: base.replacingOccurrences(of: "/gatehouse_test?", with: "/\(database)?"), database: database)
        }
    }

    /// A copy of this store as it is now, named `name` (a Postgres database made from this one as its template;
    /// nothing may be connected to this one meanwhile).
    func copy(in scratch: Scratch, name: String) throws -> TestStore {
        switch engine {
        case .sqlite:
            let path = scratch.path(name + ".sqlite")
            _ = try sqlite3(location, ".backup '\(path)'")
            return TestStore(engine: engine, location: path, database: nil)
        case .postgres:
            guard let database, let base = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"] else { throw XCTSkip("no test cluster") }
            let copy = "\(database)_\(name)"
            let created = try Tool.run("/usr/bin/psql", [base, "-X", "-q", "-c", "CREATE DATABASE \(copy) TEMPLATE \(database)"])
            guard created.status == 0 else { throw XCTSkip("could not copy the test database: \(created.all)") }
            return TestStore(engine: engine, location: location.replacingOccurrences(of: "/\(database)?", with: "/\(copy)?"), database: copy)
        }
    }

    /// Drops the Postgres database (the scratch folder removes a SQLite file).
    func drop() {
        guard let database, let base = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"] else { return }
        _ = try? Tool.run("/usr/bin/psql", [base, "-X", "-q", "-c", "DROP DATABASE IF EXISTS \(database) WITH (FORCE)"])
    }

    /// The rows of `sql` as the engine's shell prints them (columns separated by `|`, one row per line).
    func query(_ sql: String) throws -> String {
        switch engine {
        case .sqlite:
            return try sqlite3(location, sql)
        case .postgres:
            let result = try Tool.run("/usr/bin/psql", [location, "-X", "-q", "-At", "-c", sql])
            return (result.stdout + result.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
