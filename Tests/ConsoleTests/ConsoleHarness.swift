@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPServer
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// A clock the tests move by hand: tokens expire and locks lift without waiting.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Timestamp(milliseconds: 1_800_000_000_000)
    var now: Timestamp { lock.withLock { current } }
    func advance(seconds: Int64) { lock.withLock { current = current.adding(seconds: seconds) } }
}

/// A console on a free loopback port over a small seeded store, torn down after the test. It has three
/// admins, one per role, all with `ConsoleHarness.password`.
///
/// Requests go to the console's request handler in-process by default (`ConsoleServer.handle`: the same guard,
/// router, middleware and handlers, without a socket), as Hummingbird's test client does; tests of the server's
/// own behaviour (framing, connections, Host handling at the socket) pass `transport: .socket`.
final class ConsoleHarness {
    /// How requests reach the console.
    enum Transport { case inProcess, socket }
    let transport: Transport
    let directory: URL
    let storePath: String
    let console: ConsoleServer
    let clock = TestClock()
    var port: UInt16 { console.port }

    static let password = "correct horse battery staple"
    /// Cheap hashes for test admins: verification reads the cost from the stored hash.
    static let testHasher = PasswordHasher(iterations: 1000)

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Postgres database made for this console (dropped when it is torn down), when it runs on Postgres.
    private let postgresDatabase: String?
    /// The SQLite file behind this console's D1 database on the local API server, when it runs on D1.
    private(set) var d1File: String?

    /// With `immutableStore`: an access token of root's, issued before the store was made immutable.
    private(set) var preIssuedToken: String?
    /// Paths made immutable (`chattr +i`), made mutable again when the harness goes.
    private var immutablePaths: [String] = []

    /// `immutableStore` (SQLite): the store file and its folder are made immutable (`chattr +i`) before the console
    /// opens them, so it can only read them, as on a read-only mount (root ignores file modes); skipped where `chattr`
    /// is not allowed. Logging in writes, so `preIssuedToken` is issued before.
    init(users: Int = 50, lifetimes: TokenLifetimes = .standard, throttle: LoginThrottle.Rules = .standard, threads: Int = 2,
         transport: Transport = .inProcess, engine: EngineKind = .sqlite, immutableStore: Bool = false,
         webauthn: (any WebAuthnAssertionVerifier)? = nil, origin: String? = nil) throws {
        // GATEHOUSE_CONSOLE_TESTS_OVER=socket runs every console test over a real socket, to compare both paths.
        self.transport = ProcessInfo.processInfo.environment["GATEHOUSE_CONSOLE_TESTS_OVER"] == "socket" ? .socket : transport
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-console-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        switch engine {
        case .sqlite:
            storePath = directory.appendingPathComponent("console.sqlite").path
            postgresDatabase = nil
        case .postgres:
            let (uri, name) = try Self.newPostgresDatabase()
            storePath = uri
            postgresDatabase = name
            // A Postgres store's master key file is kept in GATEHOUSE_KEY_DIR (this console's folder).
            setenv("GATEHOUSE_KEY_DIR", directory.path, 1)
        case .d1:
            // A database of its own on the local D1 API server; seeded as a SQLite file first (the demo seeder reads
            // back ids inside its writes, which D1 cannot answer), then copied into the database's file.
            let (uri, file) = try Self.newD1Database()
            storePath = uri
            postgresDatabase = nil
            d1File = file
            setenv("GATEHOUSE_KEY_DIR", directory.path, 1)
        }
        if engine != .d1 { d1File = nil }
        let seedPath = engine == .d1 ? directory.appendingPathComponent("seed.sqlite").path : storePath
        let (store, _) = try Store.initialize(path: seedPath, actor: Actor("tester"))
        _ = try DemoSeeder(seed: 1, anchor: Timestamp(milliseconds: 1_764_460_800_000)).seed(store, users: users)
        let admins = AdminDirectory(store: store, hasher: Self.testHasher)
        for (name, role) in [("root", AdminRole.admin), ("sam", .support), ("vera", .viewer)] {
            try admins.add(try AdminUsername(name), role: role, password: try AdminPassword(Self.password), actor: Actor("tester"), now: .now())
        }
        if let d1File {
            try Self.copySQLite(seedPath, into: d1File)
            try FileManager.default.copyItem(atPath: seedPath + ".key", toPath: MasterKey.defaultPath(forStore: storePath))
        }
        if immutableStore {
            preIssuedToken = try TokenService(store: store, hasher: Self.testHasher)
                .login(username: "root", password: try AdminPassword(Self.password), client: "harness", now: clock.now).accessToken
            // A rollback journal: a reader of a WAL file must write its -shm.
            _ = try store.db.scalar("PRAGMA journal_mode = DELETE")
            for path in [storePath, directory.path] {
                guard try PostgresSecretsAtRestTests.runStatus("/usr/bin/chattr", ["+i", path]) == 0 else {
                    throw XCTSkip("chattr +i is not allowed here (it needs CAP_LINUX_IMMUTABLE)")
                }
                immutablePaths.append(path)
            }
        }
        let clock = self.clock
        console = try ConsoleServer(options: .init(storePath: storePath, publicDirectory: Self.packageRoot.appendingPathComponent("Public").path,
                                                   port: 0, threads: threads, logRequests: false,
                                                   auth: AuthSettings(lifetimes: lifetimes, throttle: throttle, clock: { clock.now }, webauthn: webauthn),
                                                   origin: origin))
        try console.start()
    }

    deinit {
        console.stop()
        for path in immutablePaths.reversed() { _ = try? PostgresSecretsAtRestTests.runStatus("/usr/bin/chattr", ["-i", path]) }
        try? FileManager.default.removeItem(at: directory)
        if let postgresDatabase, let base = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"] {
            try? PostgresConnection(uri: base).executeScript("DROP DATABASE IF EXISTS \(postgresDatabase) WITH (FORCE)")
        }
    }

    /// A new database on the local D1 API server ops/test starts (GATEHOUSE_TEST_D1_CONTROL), or a skip without one;
    /// this process's CLOUDFLARE_API_BASE_URL is pointed at the server.
    static func newD1Database() throws -> (uri: String, file: String) {
        let environment = ProcessInfo.processInfo.environment
        guard let control = environment["GATEHOUSE_TEST_D1_CONTROL"], !control.isEmpty, let account = environment["GATEHOUSE_TEST_D1_ACCOUNT"],
              let url = environment["GATEHOUSE_TEST_D1_URL"] else {
            throw XCTSkip("GATEHOUSE_TEST_D1_CONTROL is not set: run ops/test, which starts a local D1 API server")
        }
        setenv("CLOUDFLARE_API_BASE_URL", url, 1)
        let output = try run("/usr/bin/curl", ["-s", "-X", "POST", "-H", "Content-Type: application/json", "-d", "{}", control + "/databases"])
        guard let made = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
              let id = made["database"] as? String, let file = made["file"] as? String else {
            throw XCTSkip("the D1 test server made no database: \(output)")
        }
        return ("d1://\(account)/\(id)", file)
    }

    /// Copies a SQLite store into the file behind a D1 database (whose `_cf_KV` the copy brings back).
    static func copySQLite(_ source: String, into file: String) throws {
        _ = try run("/usr/bin/sqlite3", [source, ".backup '\(file)'"])
        _ = try run("/usr/bin/sqlite3", [file, "PRAGMA journal_mode = DELETE; CREATE TABLE IF NOT EXISTS _cf_KV (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID;"])
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        try PostgresSecretsAtRestTests.run(executable, arguments).stdout
    }

    /// A new database on the throw-away cluster ops/test starts (GATEHOUSE_TEST_PG_URI), or a skip without one.
    static func newPostgresDatabase() throws -> (uri: String, name: String) {
        guard let base = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"], !base.isEmpty else {
            throw XCTSkip("GATEHOUSE_TEST_PG_URI is not set: run ops/test, which starts a throw-away Postgres for these tests")
        }
        let name = "gh_console_\(UInt32.random(in: .min ... .max))"
        try PostgresConnection(uri: base).executeScript("CREATE DATABASE \(name)")
        let uri = try PostgresURI(base)
        return (base.replacingOccurrences(of: "/\(uri.database ?? "")?", with: "/\(name)?"), name)
    }

    /// Sends raw request text (with `\r\n` line ends) and reads the response.
    func exchange(_ request: String, over: Transport? = nil) throws -> RawResponse {
        if (over ?? transport) == .inProcess { return try Self.handleInProcess(request, console: console) }
        let client = try RawHTTPClient(port: port)
        do {
            try client.send(request)
        } catch let error as RawClientError where error.code == EPIPE || error.code == ECONNRESET {
            // The server may answer and close before the whole request is sent (a 413 for a body over the cap):
            // its answer is already in the socket, so read it; with none there, reading fails as the send did.
        }
        return try client.readResponse(hasBody: !request.hasPrefix("HEAD "))
    }

    struct InProcessRequestError: Error { let message: String }

    /// Parses request text as the server would receive it and answers it with the console's handler, no socket.
    static func handleInProcess(_ text: String, console: ConsoleServer) throws -> RawResponse {
        let bytes = Array(text.utf8)
        let separator = Array("\r\n\r\n".utf8)
        guard let end = (0...(max(0, bytes.count - separator.count))).first(where: { Array(bytes[$0..<min(bytes.count, $0 + separator.count)]) == separator })
        else { throw InProcessRequestError(message: "no end of the request head in \(text.prefix(60))") }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let parts = head[0].split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { throw InProcessRequestError(message: "not a request line: \(head[0])") }
        let target = parts[1]
        let question = target.firstIndex(of: "?")
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let request = HTTPRequest(method: parts[0], path: question.map { String(target[..<$0]) } ?? target,
                                  query: question.map { String(target[target.index(after: $0)...]) },
                                  headers: HTTPHeaders(headers), body: Array(bytes[(end + separator.count)...]))
        let response = ConsoleServer.handle(request, state: console.state)
        return RawResponse(status: response.status, reason: "", headers: response.headers.map { (name: $0.name, value: $0.value) },
                           body: parts[0] == "HEAD" ? [] : response.body)
    }

    /// A GET with the right Host header.
    func get(_ path: String, host: String? = nil) throws -> RawResponse {
        try exchange("GET \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: close\r\n\r\n")
    }

    func json(_ response: RawResponse) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    /// A request with the right Host, an optional bearer token and an optional body.
    func request(_ method: String, _ path: String, token: String? = nil, body: String? = nil,
                 contentType: String? = "application/json", headers: [String] = [], over: Transport? = nil) throws -> RawResponse {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let token { text += "Authorization: Bearer \(token)\r\n" }
        for header in headers { text += header + "\r\n" }
        if let body {
            if let contentType { text += "Content-Type: \(contentType)\r\n" }
            text += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            text += "\r\n"
        }
        return try exchange(text, over: over)
    }

    /// A JSON body from an Encodable-ish dictionary.
    func body(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// `POST /api/auth/login`.
    func login(_ username: String, _ password: String = ConsoleHarness.password) throws -> RawResponse {
        try request("POST", "/api/auth/login", body: try body(["username": username, "password": password]))
    }

    /// Logs in and returns the token bundle, failing the test if the login is refused.
    func tokens(_ username: String, file: StaticString = #filePath, line: UInt = #line) throws -> (access: String, refresh: String) {
        let response = try login(username)
        XCTAssertEqual(response.status, 200, response.bodyText, file: file, line: line)
        let bundle = try json(response)
        return (try XCTUnwrap(bundle["accessToken"] as? String), try XCTUnwrap(bundle["refreshToken"] as? String))
    }

    /// `POST /api/auth/refresh`.
    func refresh(_ refreshToken: String) throws -> RawResponse {
        try request("POST", "/api/auth/refresh", body: try body(["refreshToken": refreshToken]))
    }

    /// The `error.code` of a JSON error response.
    func errorCode(_ response: RawResponse) -> String? {
        ((try? json(response))?["error"] as? [String: Any])?["code"] as? String
    }

    /// Every audit entry's actor, action, subject and details as text, for "no secret here" checks.
    func auditText() throws -> String {
        let store = try Store.open(path: storePath)
        return try store.db.rows("SELECT actor, action, subject, details FROM gatehouse_audit").map { row in
            [row["actor"].string, row["action"].string, row["subject"].string, row["details"].string].compactMap { $0 }.joined(separator: " ")
        }.joined(separator: "\n")
    }
}
