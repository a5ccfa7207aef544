@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// The console on a store that fails as production stores do: backends ended under load, the server restarted, a
/// lock held by another session, a store gone read-only. Every failure is a 503 (or 409) with a code and, where it
/// passes by itself, `Retry-After`; never a hang, never 500 `internal`; and the console recovers without a restart.
final class ConsoleNetworkFaultTests: XCTestCase {
    override func tearDown() {
        unsetenv("GATEHOUSE_BUSY_TIMEOUT_MS")
        super.tearDown()
    }

    // MARK: - Postgres

    func testEndedBackendsAreReplacedUnderLoadAndNothingIsHalfWritten() throws {
        let console = try ConsoleHarness(users: 30, threads: 2, transport: .socket, engine: .postgres)
        let token = try console.tokens("root").access
        let id = try firstUserID(console, token: token)
        let database = try PostgresFaults(console)
        let load = Load()
        let port = console.port
        // Readers of the user detail and a writer of the policy switch, while the console's backends are ended twice.
        let workers = (0..<3).map { worker in
            Thread {
                var flip = false
                while !load.stopped {
                    if worker == 0 {
                        flip.toggle()
                        load.record(Self.send(port: port, "POST", "/api/policy", token: token,
                                              body: #"{"key":"linkSocial.allowDifferentEmails","value":\#(flip),"reason":"SUP-9 fault test"}"#))
                    } else {
                        load.record(Self.send(port: port, "GET", "/api/users/\(id)", token: token))
                    }
                }
            }
        }
        workers.forEach { $0.start() }
        for _ in 0..<2 {
            usleep(400_000)
            XCTAssertGreaterThan(try database.endConsoleBackends(), 0)
        }
        usleep(400_000)
        load.stop()
        while workers.contains(where: { !$0.isFinished }) { usleep(10_000) }

        XCTAssertEqual(load.statuses.subtracting([200, 503]), [], "only 200 and 503 may answer a lost connection: \(load.samples)")
        XCTAssertGreaterThan(load.count(200), 10)
        XCTAssertTrue(load.retryAfterOnEvery503, "a 503 without Retry-After")
        XCTAssertEqual(try console.request("GET", "/api/users/\(id)", token: token).status, 200)
        XCTAssertLessThanOrEqual(try database.consoleBackends(), 3, "the console leaked connections")
        // A write cut off mid-way left nothing half done: the audit chain is whole and matches the policy's history.
        let store = try Store.open(path: console.storePath)
        XCTAssertTrue(try store.audit.verify(store.db).isIntact)
        let audited = try store.db.scalar("SELECT count(*) FROM gatehouse_audit WHERE action = 'policy.set'").int64
        let changes = try store.db.scalar("SELECT count(*) FROM gatehouse_policy_history").int64
        XCTAssertEqual(audited, changes)
    }

    func testTheConsoleAnswersAgainSoonAfterTheServerRestarts() throws {
        let console = try ConsoleHarness(users: 20, threads: 2, transport: .socket, engine: .postgres)
        let token = try console.tokens("root").access
        let id = try firstUserID(console, token: token)
        let server = try PostgresServerControl()
        // The test cluster commits without waiting for the disk: write the login's token to it before the crash.
        try PostgresFaults(console).superuser.executeScript("CHECKPOINT")
        try server.stop()
        var started = false
        defer { if !started { try? server.start() } }

        for path in ["/api/auth/me", "/api/users/\(id)", "/api/health", "/api/status"] {
            let response = try console.request("GET", path, token: token)
            XCTAssertEqual(response.status, 503, "\(path) during the outage: \(response.bodyText)")
            XCTAssertEqual(console.errorCode(response), "store_unavailable", path)
            XCTAssertNotNil(response.header("Retry-After"), path)
        }
        let login = try console.login("root")
        XCTAssertEqual(login.status, 503, login.bodyText)

        try server.start()
        started = true
        let back = Date()
        var answered: RawResponse?
        while Date().timeIntervalSince(back) < 10 {
            answered = try console.request("GET", "/api/users/\(id)", token: token)
            if answered?.status == 200 { break }
            usleep(200_000)
        }
        XCTAssertEqual(answered?.status, 200, answered?.bodyText ?? "")
        XCTAssertLessThan(Date().timeIntervalSince(back), 5, "the console took too long to come back")
        XCTAssertEqual(try console.request("GET", "/api/auth/me", token: token).status, 200)
        XCTAssertEqual(try console.login("sam").status, 200)
        XCTAssertLessThanOrEqual(try PostgresFaults(console).consoleBackends(), 3, "the console leaked connections")
    }

    /// `LOCK TABLE "user"` held by another session: pages that read users answer 503 busy once the busy timeout has
    /// passed (never a hang), the login still answers, and everything is served again once the lock goes.
    func testALockHeldByAnotherSessionIsABusyAnswerAndLoginStillWorks() throws {
        setenv("GATEHOUSE_BUSY_TIMEOUT_MS", "1500", 1)
        let console = try ConsoleHarness(users: 20, threads: 2, transport: .socket, engine: .postgres)
        let token = try console.tokens("root").access
        let id = try firstUserID(console, token: token)
        let holder = try PostgresConnection(uri: console.storePath)
        try holder.executeScript(#"BEGIN; LOCK TABLE "user" IN ACCESS EXCLUSIVE MODE"#)

        for path in ["/api/users/\(id)", "/api/status", "/api/users?q=a"] {
            let started = Date()
            let response = try console.request("GET", path, token: token)
            XCTAssertLessThan(Date().timeIntervalSince(started), 6, "\(path) waited past the busy timeout")
            XCTAssertEqual(response.status, 503, "\(path): \(response.bodyText)")
            XCTAssertEqual(console.errorCode(response), "busy", path)
            XCTAssertEqual(response.header("Retry-After"), "5", path)
        }
        let started = Date()
        XCTAssertEqual(try console.login("sam").status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "the login waited for the lock")

        // Gatehouse's own writer lock held by another session: a write is refused busy, not queued forever.
        let writer = try PostgresConnection(uri: console.storePath)
        _ = try writer.scalar("SELECT pg_advisory_lock(\(PostgresConnection.writerLockKey))")
        let write = try console.request("POST", "/api/policy", token: token, body: try console.body([
            "key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-9"]))
        XCTAssertEqual(write.status, 503, write.bodyText)
        XCTAssertEqual(console.errorCode(write), "busy")
        _ = try writer.scalar("SELECT pg_advisory_unlock(\(PostgresConnection.writerLockKey))")

        try holder.executeScript("ROLLBACK")
        XCTAssertEqual(try console.request("GET", "/api/users/\(id)", token: token).status, 200)
    }

    /// A store that turned read-only (a failover onto a standby, `default_transaction_read_only`): a write answers
    /// 409 `read_only` naming it, not 500 `internal`; reads go on.
    func testAStoreTurnedReadOnlyRefusesWritesWith409() throws {
        let console = try ConsoleHarness(users: 10, threads: 2, transport: .socket, engine: .postgres)
        let token = try console.tokens("root").access
        let database = try PostgresFaults(console)
        try database.superuser.executeScript("ALTER DATABASE \(database.name) SET default_transaction_read_only = on")
        _ = try database.endConsoleBackends()
        // pg_terminate_backend only signals: on a busy machine a backend may still answer one statement before it
        // exits, which is the lost-connection case (503, tested above), not this one.
        for _ in 0..<100 where try database.consoleBackends() > 0 { usleep(50_000) }
        let write = try console.request("POST", "/api/policy", token: token, body: try console.body([
            "key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-9"]))
        XCTAssertEqual(write.status, 409, write.bodyText)
        XCTAssertEqual(console.errorCode(write), "read_only")
        XCTAssertTrue(write.bodyText.contains("read-only"), write.bodyText)
        XCTAssertEqual(try console.request("GET", "/api/policy", token: token).status, 200)
    }

    /// A role that lost a right it needs answers 403 `permission_denied` naming what to grant.
    func testARoleWithoutTheRightIsA403() throws {
        let console = try ConsoleHarness(users: 10, threads: 2, transport: .socket, engine: .postgres)
        let token = try console.tokens("root").access
        let database = try PostgresFaults(console)
        try database.superuser.executeScript("REVOKE INSERT, UPDATE ON gatehouse_policy FROM PUBLIC, gatehouse")
        let write = try console.request("POST", "/api/policy", token: token, body: try console.body([
            "key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-9"]))
        XCTAssertEqual(write.status, 403, write.bodyText)
        XCTAssertEqual(console.errorCode(write), "permission_denied")
        XCTAssertTrue(write.bodyText.contains("grant"), write.bodyText)
    }

    // MARK: - D1

    /// A policy change whose answer from D1 is a malformed status line after D1 ran it: 503 `outcome_unknown`, without a
    /// `Retry-After` that would invite a blind retry, and the change made once — never sent again by the console.
    func testAD1WriteOfUnknownOutcomeIsA503WithoutRetryAfterAndIsMadeOnce() throws {
        let console = try ConsoleHarness(users: 10, threads: 2, transport: .socket, engine: .d1)
        let file = try XCTUnwrap(console.d1File)
        let token = try console.tokens("root").access
        let version = try Self.sqlite(file, "SELECT version FROM gatehouse_policy_version")
        let audited = Int(try Self.sqlite(file, "SELECT count(*) FROM gatehouse_audit WHERE action = 'policy.set'")) ?? -1
        try Self.d1Control("POST", "faults", ["fault": "badstatus", "execute": true, "writes_only": true])
        defer { _ = try? Self.d1Control("DELETE", "faults", nil) }
        let write = try console.request("POST", "/api/policy", token: token, body: try console.body([
            "key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-40 weird"]))
        XCTAssertEqual(write.status, 503, write.bodyText)
        XCTAssertEqual(console.errorCode(write), "outcome_unknown", write.bodyText)
        XCTAssertNil(write.header("Retry-After"), "a Retry-After invites a blind retry of a change that may have been made")
        XCTAssertTrue(write.bodyText.contains("gatehouse audit"), write.bodyText)
        XCTAssertEqual(try Self.sqlite(file, "SELECT count(*) FROM gatehouse_policy_history WHERE reason = 'SUP-40 weird'"), "1", "made once")
        XCTAssertEqual(try Self.sqlite(file, "SELECT version FROM gatehouse_policy_version"), String((Int(version) ?? 0) + 1))
        XCTAssertEqual(Int(try Self.sqlite(file, "SELECT count(*) FROM gatehouse_audit WHERE action = 'policy.set'")), audited + 1, "one audit entry")
    }

    /// D1 stalling (an answer that never comes in time) is one bounded wait: a console request gives up within its
    /// busy timeout, retries and their waits included, with 503 `store_unavailable` — not after D1's 45 s a try.
    func testAStalledD1AnswersWithinTheBusyTimeout() throws {
        setenv("GATEHOUSE_BUSY_TIMEOUT_MS", "2000", 1)
        let console = try ConsoleHarness(users: 10, threads: 2, transport: .socket, engine: .d1)
        let token = try console.tokens("root").access
        XCTAssertEqual(try console.request("GET", "/api/policy", token: token).status, 200)
        try Self.d1Control("POST", "faults", ["fault": "slow", "delay_ms": 20_000, "count": 3])
        defer { _ = try? Self.d1Control("DELETE", "faults", nil) }
        let started = Date()
        let stalled = try console.request("GET", "/api/policy", token: token)
        let waited = Date().timeIntervalSince(started)
        XCTAssertEqual(stalled.status, 503, stalled.bodyText)
        XCTAssertEqual(console.errorCode(stalled), "store_unavailable", stalled.bodyText)
        XCTAssertNotNil(stalled.header("Retry-After"), "a read that did not answer may be asked again")
        XCTAssertLessThan(waited, 3.5, "the console waited past its busy timeout")
        XCTAssertGreaterThan(waited, 1.5)
    }

    /// The local D1 API server's test endpoints (GATEHOUSE_TEST_D1_CONTROL).
    @discardableResult
    static func d1Control(_ method: String, _ path: String, _ body: [String: Any]?) throws -> String {
        guard let control = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_D1_CONTROL"], !control.isEmpty else {
            throw XCTSkip("no D1 test server")
        }
        var arguments = ["-s", "-X", method, control + "/" + path]
        if let body { arguments += ["-H", "Content-Type: application/json", "-d", String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)] }
        return try tool("/usr/bin/curl", arguments)
    }

    /// One value from the SQLite file behind a D1 database.
    static func sqlite(_ file: String, _ sql: String) throws -> String {
        try tool("/usr/bin/sqlite3", [file, sql]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func tool(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Standard-lane requests slowed by a lock (each waits the busy timeout) from eight loops fill the console's handler
    /// threads: an admin's login is still answered at once on the thread kept for the login lane. Without that thread the
    /// login queued behind every standard request and answered 503 after the queue wait.
    func testStandardRequestsThatFillTheHandlerThreadsLeaveTheLoginAThread() throws {
        setenv("GATEHOUSE_BUSY_TIMEOUT_MS", "3000", 1)
        let console = try ConsoleHarness(users: 20, threads: 4, transport: .socket, engine: .postgres)
        let token = try console.tokens("vera").access
        let id = try firstUserID(console, token: token)
        let holder = try PostgresConnection(uri: console.storePath)
        try holder.executeScript(#"BEGIN; LOCK TABLE "user" IN ACCESS EXCLUSIVE MODE"#)
        let port = console.port
        let load = Load()
        let loops = (0..<8).map { _ in
            Thread {
                while !load.stopped { load.record(Self.send(port: port, "GET", "/api/users/\(id)", token: token)) }
            }
        }
        loops.forEach { $0.start() }
        usleep(1_000_000)
        for attempt in 0..<2 {
            let started = Date()
            XCTAssertEqual(try console.login("root").status, 200, "attempt \(attempt)")
            XCTAssertLessThan(Date().timeIntervalSince(started), 2, "attempt \(attempt): the login waited for standard work")
        }
        load.stop()
        try holder.executeScript("ROLLBACK")
        while loops.contains(where: { !$0.isFinished }) { usleep(10_000) }
        XCTAssertEqual(try console.request("GET", "/api/users/\(id)", token: token).status, 200)
    }

    // MARK: - SQLite

    /// A store file this process cannot write (a read-only mount, an immutable file): the console opens it read-only,
    /// reads answer, and a write answers 409 `read_only` naming it, never 500 `internal`.
    func testAReadOnlyStoreFileRefusesWritesWith409() throws {
        let console = try ConsoleHarness(users: 10, threads: 2, transport: .socket, immutableStore: true)
        let token = try XCTUnwrap(console.preIssuedToken)
        XCTAssertEqual(try console.request("GET", "/api/policy", token: token).status, 200)
        XCTAssertEqual(try console.request("GET", "/api/users?q=a", token: token).status, 200)
        let write = try console.request("POST", "/api/policy", token: token, body: try console.body([
            "key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-9"]))
        XCTAssertEqual(write.status, 409, write.bodyText)
        XCTAssertEqual(console.errorCode(write), "read_only")
        XCTAssertTrue(write.bodyText.contains("read-only"), write.bodyText)
    }

    /// `BEGIN IMMEDIATE` held by another connection past the busy timeout: a write answers 503 busy with Retry-After.
    func testAWriteLockHeldOnSQLiteIsABusyAnswer() throws {
        setenv("GATEHOUSE_BUSY_TIMEOUT_MS", "1000", 1)
        let console = try ConsoleHarness(users: 10, threads: 2, transport: .socket)
        let token = try console.tokens("root").access
        let holder = try SQLiteDatabase(path: console.storePath)
        try holder.executeScript("BEGIN IMMEDIATE")
        defer { try? holder.executeScript("ROLLBACK") }
        let write = try console.request("POST", "/api/policy", token: token, body: try console.body([
            "key": "linkSocial.allowDifferentEmails", "value": true, "reason": "SUP-9"]))
        XCTAssertEqual(write.status, 503, write.bodyText)
        XCTAssertEqual(console.errorCode(write), "busy")
        XCTAssertEqual(write.header("Retry-After"), "5")
        XCTAssertEqual(try console.request("GET", "/api/policy", token: token).status, 200, "a read waited for the writer")
    }

    // MARK: - Flood

    /// A signed-in viewer floods `GET /api/health` from many short-lived connections (each sends and leaves): the
    /// surplus is refused or dropped, never worked through; an admin's login is answered during the flood and right
    /// after it. Without bounded lanes the login would queue behind every health check the flood sent.
    func testAViewerFloodDoesNotKeepAnAdminOut() throws {
        let console = try ConsoleHarness(users: 200, threads: 2, transport: .socket)
        let viewer = try console.tokens("vera").access
        let request = "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:\(console.port)\r\nAuthorization: Bearer \(viewer)\r\n\r\n"
        let port = console.port
        let flood = Load()
        let senders = (0..<2).map { _ in
            Thread {
                while !flood.stopped {
                    guard let client = try? RawHTTPClient(port: port) else { usleep(1000); continue }
                    try? client.send(request)
                    usleep(500)
                }
            }
        }
        senders.forEach { $0.start() }
        usleep(1_500_000)
        let during = Date()
        XCTAssertEqual(try console.login("root").status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(during), 3, "the admin's login waited behind the flood")
        flood.stop()
        while senders.contains(where: { !$0.isFinished }) { usleep(10_000) }
        let after = Date()
        XCTAssertEqual(try console.login("root").status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(after), 2, "the admin's login waited for the flood's backlog")
        XCTAssertEqual(try console.request("GET", "/api/health", token: viewer).status, 200)
    }

    // MARK: - Helpers

    /// One request over a new connection to the console on `port`; nil when the connection itself failed.
    static func send(port: UInt16, _ method: String, _ path: String, token: String, body: String? = nil) -> RawResponse? {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nAuthorization: Bearer \(token)\r\n"
        if let body { text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)" } else { text += "\r\n" }
        guard let client = try? RawHTTPClient(port: port), (try? client.send(text)) != nil else { return nil }
        return try? client.readResponse(timeout: 30)
    }

    func firstUserID(_ console: ConsoleHarness, token: String) throws -> String {
        let found = try console.json(try console.request("GET", "/api/users?q=a&limit=1", token: token))
        return try XCTUnwrap(((found["users"] as? [[String: Any]])?.first)?["id"] as? String)
    }
}

/// Responses seen by the load threads, thread-safe.
final class Load: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [Int] = []
    private var missingRetryAfter = false
    private var done = false
    private(set) var samples: [String] = []

    var stopped: Bool { lock.withLock { done } }
    func stop() { lock.withLock { done = true } }

    func record(_ response: RawResponse?) {
        lock.withLock {
            let status = response?.status ?? 0
            seen.append(status)
            if status == 503, response?.header("Retry-After") == nil { missingRetryAfter = true }
            if status != 200, samples.count < 5 { samples.append("\(status) \(response?.bodyText.prefix(200) ?? "no response")") }
        }
    }

    var statuses: Set<Int> { lock.withLock { Set(seen) } }
    func count(_ status: Int) -> Int { lock.withLock { seen.filter { $0 == status }.count } }
    var retryAfterOnEvery503: Bool { lock.withLock { !missingRetryAfter } }
}

/// The console's database on the test cluster, seen by the cluster's superuser.
struct PostgresFaults {
    let name: String
    let superuser: PostgresConnection

    init(_ console: ConsoleHarness) throws {
        let uri = try PostgresURI(console.storePath)
        name = try XCTUnwrap(uri.database)
        // The console's database as the cluster's bootstrap superuser `postgres` (trusted on the private socket).
        superuser = try PostgresConnection(uri: console.storePath.replacingOccurrences(of: "://\(uri.user ?? "")@", with: "://postgres@"))
    }

    /// Ends the console's backends (`pg_terminate_backend`), as a failover or an idle-session killer would; returns how many.
    func endConsoleBackends() throws -> Int {
        Int(try superuser.scalar("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                                 [name]).int64 ?? 0)
    }

    /// The console's connections open on the server now.
    func consoleBackends() throws -> Int {
        Int(try superuser.scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'gatehouse'", [name]).int64 ?? 0)
    }
}

/// Stops and starts the test cluster (`pg_ctl`, as the cluster's owner), with the options ops/test started it with.
struct PostgresServerControl {
    let binaries: String
    let data: String
    let options: String
    let runAs: String?

    init() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let binaries = environment["GATEHOUSE_TEST_PG_BINDIR"], let directory = environment["GATEHOUSE_TEST_PG_DIR"],
              let options = environment["GATEHOUSE_TEST_PG_OPTIONS"] else {
            throw XCTSkip("GATEHOUSE_TEST_PG_BINDIR/_DIR/_OPTIONS are not set: run ops/test, which starts the test cluster")
        }
        self.binaries = binaries
        data = directory + "/data"
        self.options = options
        runAs = environment["GATEHOUSE_TEST_PG_RUN_AS"]
    }

    /// An immediate stop, as a crash or `pg_ctl -m immediate` is: backends are cut off mid-answer.
    func stop() throws { try pgctl(["--pgdata=\(data)", "--mode=immediate", "--wait", "stop"]) }

    func start() throws {
        try pgctl(["--pgdata=\(data)", "--log=\(data)/../server.log", "--wait", "--timeout=60", "-o", options, "start"])
    }

    struct ControlError: Error { let message: String }

    /// Runs pg_ctl with posix_spawn and waitpid: Foundation's `Process.waitUntilExit` was seen never to return once
    /// `pg_ctl start` had left the server running (the runuser child reaped by nobody).
    private func pgctl(_ arguments: [String]) throws {
        let argv = (runAs.map { ["/usr/sbin/runuser", "-u", $0, "--"] } ?? []) + [binaries + "/pg_ctl"] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ) == 0 else {
            throw ControlError(message: "could not start \(argv[0])")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else { throw ControlError(message: "pg_ctl \(arguments.last ?? "") failed (status \(status))") }
    }
}
