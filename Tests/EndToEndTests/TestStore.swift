import Foundation
import XCTest

/// A store for an end-to-end test on any engine: a SQLite file in the test's scratch folder, a database of its own
/// on the throw-away Postgres cluster ops/test starts (GATEHOUSE_TEST_PG_URI), dropped by `drop()`, or a database of
/// its own on the local D1 API server ops/test starts (GATEHOUSE_TEST_D1_URL, Tests/Fixtures/d1_server.py).
struct TestStore {
    enum Engine: String, CaseIterable { case sqlite, postgres, d1 }

    let engine: Engine
    /// What `--store` is given: a path or a URI.
    let location: String
    private let database: String?

    /// The environment a CLI on this store needs: a Postgres or D1 store's master key file lives in GATEHOUSE_KEY_DIR;
    /// D1's API is the local server's (the token, CLOUDFLARE_API_TOKEN, comes from ops/test).
    static let environment: [String: String] = {
        var environment = ["GATEHOUSE_KEY_DIR": NSTemporaryDirectory() + "gatehouse-test-keys"]
        if let url = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_D1_URL"], !url.isEmpty { environment["CLOUDFLARE_API_BASE_URL"] = url }
        return environment
    }()

    /// The local D1 API server's test endpoints, or nil when ops/test started none.
    static var d1Control: String? { ProcessInfo.processInfo.environment["GATEHOUSE_TEST_D1_CONTROL"].flatMap { $0.isEmpty ? nil : $0 } }

    /// Every engine this run can reach: SQLite always, Postgres when ops/test started a cluster
    /// (GATEHOUSE_TEST_PG_URI), D1 when it started the local D1 API server (GATEHOUSE_TEST_D1_CONTROL).
    static var engines: [Engine] {
        let postgres = !(ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"] ?? "").isEmpty
        return [.sqlite] + (postgres ? [.postgres] : []) + (d1Control != nil ? [.d1] : [])
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
        case .d1:
            guard let control = d1Control, let account = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_D1_ACCOUNT"] else {
                throw XCTSkip("GATEHOUSE_TEST_D1_CONTROL is not set: run ops/test, which starts a local D1 API server for these tests")
            }
            let made = try D1Control.post(control + "/databases", ["wrangler_migrations": true])
            guard let id = made["database"] as? String, let file = made["file"] as? String else { throw XCTSkip("the D1 test server made no database: \(made)") }
            return TestStore(engine: engine, location: "d1://\(account)/\(id)", database: file)
        }
    }

    /// The SQLite file behind a D1 store on the local API server.
    var d1File: String? { engine == .d1 ? database : nil }

    /// A copy of this store as it is now, named `name` (a Postgres database made from this one as its template;
    /// nothing may be connected to this one meanwhile; a new D1 database holding this one's file and master key).
    func copy(in scratch: Scratch, name: String) throws -> TestStore {
        switch engine {
        case .d1:
            let copy = try TestStore.make(.d1, in: scratch, name: name)
            try copy.fillD1(from: database ?? "", key: masterKeyPath)
            return copy
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

    /// Where a CLI on this store keeps its master key file (MasterKey.defaultPath's rule for a D1 store).
    private var masterKeyPath: String {
        guard engine == .d1 else { return location + ".key" }
        let parts = location.dropFirst("d1://".count).split(separator: "/")
        return Self.environment["GATEHOUSE_KEY_DIR"]! + "/d1_\(parts[0])_\(parts[1]).key"
    }

    /// Makes the file behind this D1 database a copy of the SQLite file `file` (with the table D1 keeps in every
    /// database), and its master key file a copy of `key`, as an operator's rows would be there before Gatehouse.
    func fillD1(from file: String, key: String) throws {
        let target = try XCTUnwrap(d1File, "\(engine) is not D1")
        _ = try sqlite3(file, ".backup '\(target)'")
        _ = try sqlite3(target, "PRAGMA journal_mode = DELETE; CREATE TABLE IF NOT EXISTS _cf_KV (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID;")
        try FileManager.default.createDirectory(atPath: (masterKeyPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: masterKeyPath)
        try FileManager.default.copyItem(atPath: key, toPath: masterKeyPath)
    }

    /// `gatehouse demo seed ARGUMENTS` on this store. D1 refuses the seed (it reads back ids inside its writes), so
    /// there the same seed fills a SQLite store in `scratch` whose file and key then become the D1 database's.
    func seedDemo(_ arguments: [String], cli: CLI, in scratch: Scratch) throws -> CLI.Result {
        guard engine == .d1 else { return try cli.run(["demo", "seed"] + arguments + ["--store", location]) }
        let sqlite = scratch.path("d1-seed-\(UUID().uuidString).sqlite")
        let seeded = try cli.run(["demo", "seed"] + arguments + ["--store", sqlite])
        if seeded.status == 0 { try fillD1(from: sqlite, key: sqlite + ".key") }
        return seeded
    }

    /// Runs `script` on this D1 database as `wrangler d1 execute --file` sends it (the whole file as one `sql`, which D1
    /// runs as one batch): nil when it ran through, else D1's answer.
    func d1Execute(_ script: String) throws -> String? {
        let base = try XCTUnwrap(Self.environment["CLOUDFLARE_API_BASE_URL"]), token = try XCTUnwrap(ProcessInfo.processInfo.environment["CLOUDFLARE_API_TOKEN"])
        let parts = location.dropFirst("d1://".count).split(separator: "/")
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["sql": script]), as: UTF8.self)
        let result = try Tool.run("/usr/bin/curl", ["-s", "-X", "POST", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                                                      "--data-binary", "@-", "\(base)/accounts/\(parts[0])/d1/database/\(parts[1])/query"], stdin: body)
        let answer = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return answer?["success"] as? Bool == true ? nil : result.all
    }

    /// Drops the Postgres database (the scratch folder removes a SQLite file).
    func drop() {
        guard engine == .postgres, let database, let base = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"] else { return }
        _ = try? Tool.run("/usr/bin/psql", [base, "-X", "-q", "-c", "DROP DATABASE IF EXISTS \(database) WITH (FORCE)"])
    }

    /// The rows of `sql` as the engine's shell prints them (columns separated by `|`, one row per line).
    func query(_ sql: String) throws -> String {
        switch engine {
        case .sqlite:
            return try sqlite3(location, sql)
        case .d1:
            return try sqlite3(database ?? "", sql)
        case .postgres:
            let result = try Tool.run("/usr/bin/psql", [location, "-X", "-q", "-At", "-c", sql])
            return (result.stdout + result.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}

/// The local D1 API server's test endpoints (`/test/...`): no token, JSON in and out.
enum D1Control {
    static func post(_ url: String, _ body: [String: Any]) throws -> [String: Any] {
        try request("POST", url, body)
    }

    static func get(_ url: String) throws -> [String: Any] {
        try request("GET", url, nil)
    }

    static func request(_ method: String, _ url: String, _ body: [String: Any]?) throws -> [String: Any] {
        var arguments = ["-s", "-X", method, url]
        if let body { arguments += ["-H", "Content-Type: application/json", "-d", String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)] }
        let result = try Tool.run("/usr/bin/curl", arguments)
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw XCTSkip("the D1 test server did not answer \(method) \(url): \(result.all)")
        }
        return object
    }

    /// Queues a fault for the next `count` API requests (see d1_server.py's header).
    static func fault(_ kind: String, count: Int = 1, _ extra: [String: Any] = [:]) throws {
        guard let control = TestStore.d1Control else { throw XCTSkip("no D1 test server") }
        _ = try post(control + "/faults", extra.merging(["fault": kind, "count": count]) { $1 })
    }

    /// Clears the request count and the fault queue.
    static func reset() throws {
        guard let control = TestStore.d1Control else { throw XCTSkip("no D1 test server") }
        _ = try post(control + "/reset", [:])
    }

    /// API requests since the last reset.
    static func requests() throws -> Int {
        guard let control = TestStore.d1Control else { throw XCTSkip("no D1 test server") }
        return try get(control + "/requests")["count"] as? Int ?? -1
    }
}
