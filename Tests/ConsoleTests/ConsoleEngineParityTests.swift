@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
import JOSE
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// The console's read pages answer alike on a SQLite store and a Postgres store holding the same seeded data, and
/// its policy switch writes on Postgres as on SQLite.
final class ConsoleEngineParityTests: XCTestCase {
    /// A response body with the times the console stamps as it answers (and the store's name) in common form.
    func normalized(_ response: RawResponse, store: String) -> String {
        let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
        return response.bodyText.replacingOccurrences(of: store, with: "STORE")
            .replacingOccurrences(of: store.replacingOccurrences(of: "/", with: "\\/"), with: "STORE")
            .replacingOccurrences(of: ", dates as timestamp with time zone", with: "")
            // A D1 console's rows were seeded in a SQLite file beside it, which the seed's audit entry names.
            .replacingOccurrences(of: #"[^"]*/gatehouse-console-[0-9A-F-]+/seed\.sqlite"#, with: "STORE", options: .regularExpression)
            .replacingOccurrences(of: today + #"T\d\d:\d\d:\d\d\.\d{3}Z"#, with: "NOW", options: .regularExpression)
            .replacingOccurrences(of: #""(hash|prevHash|family)":"[^"]*""#, with: #""$1":"X""#, options: .regularExpression)
            .replacingOccurrences(of: #""durationMs":\d+"#, with: #""durationMs":0"#, options: .regularExpression)
    }

    func testReadPagesAnswerAlikeOnSQLiteAndPostgres() throws {
        try readPagesAnswerAlike(on: .postgres)
    }

    func testReadPagesAnswerAlikeOnSQLiteAndD1() throws {
        try readPagesAnswerAlike(on: .d1)
    }

    func readPagesAnswerAlike(on engine: EngineKind) throws {
        let postgres = try ConsoleHarness(users: 60, engine: engine)
        let sqlite = try ConsoleHarness(users: 60)
        let tokens = (sqlite: try sqlite.tokens("vera").access, postgres: try postgres.tokens("vera").access)
        let found = try sqlite.json(try sqlite.request("GET", "/api/users?q=a&limit=5", token: tokens.sqlite))
        let id = try XCTUnwrap(((found["users"] as? [[String: Any]])?.first)?["id"] as? String)
        let paths = ["/api/status", "/api/users?q=ana", "/api/users?q=a&limit=5", "/api/users/\(id)", "/api/users/no-such-user",
                     "/api/users/duplicates", "/api/accounts/check", "/api/policy", "/api/policy/history", "/api/gates",
                     "/api/merges", "/api/apple/keys", "/api/audit?action=demo.seed"]
        for path in paths {
            let a = try sqlite.request("GET", path, token: tokens.sqlite), b = try postgres.request("GET", path, token: tokens.postgres)
            XCTAssertEqual(b.status, a.status, "\(path): \(b.bodyText.prefix(500))")
            XCTAssertEqual(normalized(b, store: postgres.storePath), normalized(a, store: sqlite.storePath), path)
        }
    }

    func testThePolicySwitchWritesOnPostgres() throws {
        try policySwitchWrites(on: .postgres)
    }

    func testThePolicySwitchWritesOnD1() throws {
        try policySwitchWrites(on: .d1)
    }

    func policySwitchWrites(on engine: EngineKind) throws {
        let console = try ConsoleHarness(users: 10, engine: engine)
        let token = try console.tokens("root").access
        let set = try console.request("POST", "/api/policy", token: token, body: try console.body([
            "key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-1 explicit linking", "ifVersion": 0,
        ]))
        XCTAssertEqual(set.status, 200, set.bodyText)
        XCTAssertEqual(try console.json(set)["version"] as? Int, 1)
        // The same condition again: the version moved on, so it is refused.
        let stale = try console.request("POST", "/api/policy", token: token, body: try console.body([
            "key": "linkSocial.allowDifferentEmails", "value": false, "reason": "x", "ifVersion": 0,
        ]))
        XCTAssertEqual(stale.status, 409, stale.bodyText)
        let history = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try console.request("GET", "/api/policy/history", token: token).body)) as? [[String: Any]])
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual(history.first?["actor"] as? String, "console:root")
        XCTAssertTrue(try console.auditText().contains("policy.set"))
    }
}

/// Secrets on a store are sealed or hashed before they leave the process: a dump of the database (`pg_dump`, `sqlite3
/// .dump`, of the file behind a D1 database too) holds no `.p8` line, no console token and no admin password.
final class PostgresSecretsAtRestTests: XCTestCase {
    func testAPgDumpHoldsNoKeyTokenOrPassword() throws {
        try dumpHoldsNoKeyTokenOrPassword(on: .postgres)
    }

    func testASQLiteDumpHoldsNoKeyTokenOrPassword() throws {
        try dumpHoldsNoKeyTokenOrPassword(on: .sqlite)
    }

    func testAD1DatabasesDumpHoldsNoKeyTokenOrPassword() throws {
        try dumpHoldsNoKeyTokenOrPassword(on: .d1)
    }

    func dumpHoldsNoKeyTokenOrPassword(on engine: EngineKind) throws {
        let console = try ConsoleHarness(users: 5, engine: engine)
        let (access, refresh) = try console.tokens("root")
        let pem = try P256.PrivateKey.generate().pemRepresentation
        let store = try Store.open(path: console.storePath)
        _ = try ProviderConfiguration(store: store).setApple(AppleProviderChange(teamID: "TEAM123456", servicesID: "com.example.web"),
                                                             actor: Actor("tester"), now: .now())
        let imported = try console.request("POST", "/api/apple/keys", token: access,
                                           body: try console.body(["pem": pem, "fileName": "AuthKey_ABCDEFGHIJ.p8"]))
        XCTAssertEqual(imported.status, 201, imported.bodyText)

        let dump = engine == .postgres ? try Self.run(try Self.pgDump(), [console.storePath, "--data-only", "--no-owner"])
            : try Self.run("/usr/bin/sqlite3", [console.d1File ?? console.storePath, ".dump"])
        // The dump is real: it holds the key's id and the admin's name.
        XCTAssertTrue(dump.stdout.contains("ABCDEFGHIJ") && dump.stdout.contains("root"), String(dump.stdout.prefix(500)))
        for line in pem.split(separator: "\n") where !line.hasPrefix("-----") {
            XCTAssertFalse(dump.stdout.contains(String(line.prefix(32))), "a line of the .p8")
        }
        XCTAssertFalse(dump.stdout.contains("PRIVATE KEY"))
        XCTAssertFalse(dump.stdout.contains(access), "the access token")
        XCTAssertFalse(dump.stdout.contains(refresh), "the refresh token")
        XCTAssertFalse(dump.stdout.contains(ConsoleHarness.password), "an admin password")
    }

    /// Runs a program to completion and returns its exit status (its output discarded).
    static func runStatus(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs a program to completion and returns its standard output, failing the test on a non-zero exit.
    static func run(_ executable: String, _ arguments: [String]) throws -> (stdout: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(executable) exited \(process.terminationStatus)")
        return (String(decoding: data, as: UTF8.self), process.terminationStatus)
    }

    /// Debian's pg_dump: on PATH (postgresql-client-common's wrapper) or in the server's bin folder.
    static func pgDump() throws -> String {
        for candidate in ["/usr/bin/pg_dump"] + (1...30).reversed().map({ "/usr/lib/postgresql/\($0)/bin/pg_dump" })
        where FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        throw XCTSkip("pg_dump is not installed (Debian's postgresql-client)")
    }
}

/// The console's connections to a Postgres store are bounded, and a server that cannot give them is a clear
/// start-up error rather than requests failing later.
final class ConsolePostgresPoolTests: XCTestCase {
    func testTheConsoleNeedsNoMoreThanItsThreadsPlusOneAndSaysWhenTheServerHasFewer() throws {
        let console = try ConsoleHarness(users: 5, threads: 3, transport: .socket, engine: .postgres)
        // Every handler thread busy at once (12 requests sent before any answer is read), then count this database's
        // connections.
        let token = try console.tokens("root").access
        let port = console.port
        let clients = try (0..<12).map { _ -> RawHTTPClient in
            let client = try RawHTTPClient(port: port)
            try client.send("GET /api/users/duplicates HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
            return client
        }
        XCTAssertEqual(try clients.map { try $0.readResponse(timeout: 30).status }, Array(repeating: 200, count: 12))
        let db = try PostgresConnection(uri: console.storePath)
        let open = try db.scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").int64 ?? 0
        XCTAssertLessThanOrEqual(open, 3 + 1, "connections held by a console with 3 handler threads")

        // gatehouse_limited (ops/lib/postgres.sh) may hold 3 connections: a console of 4 threads needs 5.
        let limited = console.storePath.replacingOccurrences(of: "postgresql://gatehouse@", with: "postgresql://gatehouse_limited@")
        XCTAssertThrowsError(try ConsoleServer(options: .init(storePath: limited, publicDirectory: ConsoleHarness.packageRoot.appendingPathComponent("Public").path,
                                                              port: 0, threads: 4, logRequests: false))) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("can give this process 3 connection(s)") && text.contains("the console needs 5"), text)
        }
        XCTAssertNoThrow(try ConsoleServer(options: .init(storePath: limited, publicDirectory: ConsoleHarness.packageRoot.appendingPathComponent("Public").path,
                                                          port: 0, threads: 2, logRequests: false)))
    }
}
