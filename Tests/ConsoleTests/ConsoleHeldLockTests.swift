@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
import Locking
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// While another session (Postgres) or process (SQLite) holds a lock on the store, every console route answers over
/// a real socket within the busy timeout plus a margin, and a route that meets the lock answers 503 "busy" once:
/// never one wait per statement, per connection checked out, or per retry.
final class ConsoleHeldLockTests: XCTestCase {
    /// The busy timeout the console runs with, and the bound every answer must come within.
    static let busyMilliseconds = 3000
    static let bound = 4.5
    /// Handler threads, and how many requests go at a time: as many as the slow lane may run at once (all threads
    /// but two), so that no request waits in the handler pool's queue, whose bound is its own.
    static let threads = 12
    static let width = threads - 2

    override func setUp() { setenv("GATEHOUSE_BUSY_TIMEOUT_MS", "\(Self.busyMilliseconds)", 1) }
    override func tearDown() { unsetenv("GATEHOUSE_BUSY_TIMEOUT_MS") }

    func testEveryRouteAnswersOnceWithinTheBusyTimeoutWhilePostgresHoldsEachTable() throws {
        let harness = try ConsoleHarness(users: 20, threads: Self.threads, transport: .socket, engine: .postgres)
        let db = try PostgresConnection(uri: harness.storePath)
        let users = try db.rows(#"SELECT id FROM "user" ORDER BY id LIMIT 2"#).compactMap { $0[0].string }
        XCTAssertEqual(users.count, 2)
        // Better Auth's tables and every gatehouse_ table, each held in turn by another session.
        let tables = ["user", "account", "session", "verification"]
            + (try db.rows("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'gatehouse\\_%' ORDER BY 1")
                .compactMap { $0[0].string })
        XCTAssertGreaterThan(tables.count, 20)
        for table in tables {
            let (admin, session) = (try harness.tokens("root"), try harness.tokens("sam"))
            let holder = try PostgresConnection(uri: harness.storePath)
            try holder.executeScript("BEGIN; LOCK TABLE \(PostgresConnection.quote(table)) IN ACCESS EXCLUSIVE MODE")
            let answers = try Self.answer(Self.requests(users: users, admin: admin.access, session: session), on: harness)
            try holder.executeScript("ROLLBACK")
            Self.check(answers, while: "\(table) is locked")
            let busy = Set(answers.filter { $0.status == 503 }.map(\.request))
            switch table {
            case "user": XCTAssertTrue(busy.contains("GET /api/users/\(users[0])"), "the user detail with \(table) locked: \(busy.sorted())")
            case "gatehouse_tokens": XCTAssertTrue(busy.contains("GET /api/status"), "a signed-in route with \(table) locked: \(busy.sorted())")
            case "gatehouse_policy": XCTAssertTrue(busy.contains("POST /api/policy"), "a policy change with \(table) locked: \(busy.sorted())")
            default: break
            }
        }
    }

    /// A request that waited for a handler thread has spent that time of its budget: requests queued behind one that
    /// waits out the lock give up within the same bound, not after their queue wait and a lock wait of their own.
    func testRequestsQueuedForAHandlerThreadGiveUpWithinTheSameBound() throws {
        let harness = try ConsoleHarness(users: 20, threads: 2, transport: .socket, engine: .postgres)
        let db = try PostgresConnection(uri: harness.storePath)
        let user = try XCTUnwrap(try db.rows(#"SELECT id FROM "user" ORDER BY id LIMIT 1"#).first?[0].string)
        let token = try harness.tokens("root").access
        let holder = try PostgresConnection(uri: harness.storePath)
        try holder.executeScript(#"BEGIN; LOCK TABLE "user" IN ACCESS EXCLUSIVE MODE"#)
        let requests = (0..<8).map { _ in Request(method: "GET", path: "/api/users/\(user)", token: token, body: nil) }
        let answers = try Self.answer(requests, on: harness, width: 8)
        try holder.executeScript("ROLLBACK")
        XCTAssertEqual(answers.count, 8)
        Self.check(answers, while: "user is locked and 8 requests share 2 handler threads")
        XCTAssertEqual(answers.filter { $0.status == 503 }.count, 8, "\(answers)")
    }

    func testEveryRouteAnswersWithinTheBusyTimeoutWhileAnotherProcessHoldsTheSQLiteFileExclusively() throws {
        let harness = try ConsoleHarness(users: 20, threads: Self.threads, transport: .socket, engine: .sqlite)
        let store = try Store.open(path: harness.storePath)
        let users = try store.db.rows(#"SELECT id FROM "user" ORDER BY id LIMIT 2"#).compactMap { $0[0].string }
        XCTAssertEqual(users.count, 2)
        let (admin, session) = (try harness.tokens("root"), try harness.tokens("sam"))
        let holder = try Self.holdExclusively(harness.storePath)
        defer { holder.process.terminate(); _ = try? holder.finish() }
        let answers = try Self.answer(Self.requests(users: users, admin: admin.access, session: session), on: harness)
        Self.check(answers, while: "another process holds BEGIN EXCLUSIVE")
        // Reads go on beside the writer (WAL); every write meets the lock.
        let busy = Set(answers.filter { $0.status == 503 }.map(\.request))
        for write in ["POST /api/policy", "POST /api/auth/login"] { XCTAssertTrue(busy.contains(write), "\(write): \(busy.sorted())") }
    }

    // MARK: - Requests

    struct Request: Sendable {
        let method: String
        let path: String
        let token: String?
        let body: String?
        var name: String { "\(method) \(path.split(separator: "?").first.map(String.init) ?? path)" }
    }

    struct Answer: Sendable {
        let request: String
        let status: Int
        let seconds: Double
        let body: String
    }

    /// Every route, with real ids and valid bodies where a route reads the store only past its validation; a
    /// session of its own for logout and refresh.
    static func requests(users: [String], admin: String, session: (access: String, refresh: String)) -> [Request] {
        func json(_ object: [String: Any]) -> String {
            String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
        }
        let reads = ["/api/status", "/api/auth/me", "/api/policy", "/api/policy/history", "/api/audit?limit=5", "/api/audit/verify",
                     "/api/apple/keys", "/api/apple/notifications", "/api/apple/transfer", "/api/security/events", "/api/security/refusals", "/api/providers", "/api/users?q=a", "/api/users/duplicates",
                     "/api/users/\(users[0])", "/api/accounts/check", "/api/health", "/api/health/history", "/api/health/deadlines", "/api/users/\(users[1])/duplicates", "/api/merges", "/api/merges/1",
                     "/api/deletions", "/api/deletions/1", "/api/gates", "/api/gates/history", "/api/gates/export", "/api/approvals", "/api/approvals/settings", "/api/admins"]
        var requests = reads.map { Request(method: "GET", path: $0, token: admin, body: nil) }
        let writes: [(String, [String: Any])] = [
            ("/api/policy", ["key": "linkSocial.allowDifferentEmails", "value": true, "reason": "INC-1 window"]),
            ("/api/policy/simulate", ["flow": "signin", "provider": "google", "email": "ana@gmail.com", "emailVerified": true]),
            ("/api/merges/plan", ["from": users[1], "into": users[0]]),
            ("/api/merges/1/apply", ["ticket": "SUP-1"]),
            ("/api/merges/1/undo", ["reason": "SUP-1"]),
            ("/api/users/\(users[1])/deletion/plan", ["ticket": "SUP-2"]),
            ("/api/deletions/1/apply", ["confirmEmail": "x@example.com"]),
            ("/api/deletions/1/undo", ["reason": "SUP-2"]),
            ("/api/deletions/purge", [:]),
            ("/api/gates/requirements", ["provider": "apple", "requirement": "membership", "met": true, "evidence": "SUP-3"]),
            ("/api/gates/enable", ["provider": "google", "platform": "web", "reason": "SUP-3"]),
            ("/api/gates/disable", ["provider": "google", "platform": "web", "reason": "SUP-3"]),
            ("/api/apple/keys", [:]),
            ("/api/apple/keys/rollback", [:]),
            ("/api/apple/keys/ABCDEFGHIJ/activate", [:]),
            ("/api/apple/keys/ABCDEFGHIJ/revoke", [:]),
            ("/api/apple/keys/ABCDEFGHIJ/selftest", [:]),
            ("/api/apple/secret/mint", [:]),
            ("/api/apple/secret/inspect", ["token": "x.y.z"]),
            ("/api/apple/export", [:]),
        ]
        requests += writes.map { Request(method: "POST", path: $0.0, token: admin, body: json($0.1)) }
        requests += [
            Request(method: "POST", path: "/api/auth/login", token: nil, body: json(["username": "vera", "password": ConsoleHarness.password])),
            Request(method: "POST", path: "/api/auth/refresh", token: nil, body: json(["refreshToken": session.refresh])),
            Request(method: "POST", path: "/api/auth/logout", token: session.access, body: "{}"),
        ]
        return requests
    }

    /// Sends the requests over sockets, `width` at a time, each timed from its connection to its answer.
    static func answer(_ requests: [Request], on harness: ConsoleHarness, width: Int = width) throws -> [Answer] {
        let port = harness.port
        let results = Locked<[Answer]>([])
        let next = Locked(0)
        let group = DispatchGroup()
        for _ in 0..<width {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while true {
                    let index = next.withLock { value -> Int in defer { value += 1 }; return value }
                    guard index < requests.count else { return }
                    let request = requests[index]
                    var text = "\(request.method) \(request.path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
                    if let token = request.token { text += "Authorization: Bearer \(token)\r\n" }
                    if let body = request.body {
                        text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                    } else {
                        text += "\r\n"
                    }
                    let started = Date()
                    let answer: Answer
                    do {
                        let client = try RawHTTPClient(port: port)
                        try client.send(text)
                        let response = try client.readResponse(timeout: 30)
                        answer = Answer(request: request.name, status: response.status, seconds: Date().timeIntervalSince(started),
                                        body: String(response.bodyText.prefix(300)))
                    } catch {
                        answer = Answer(request: request.name, status: 0, seconds: Date().timeIntervalSince(started), body: "\(error)")
                    }
                    results.withLock { $0.append(answer) }
                }
            }
        }
        group.wait()
        return results.value
    }

    /// Every answer came within the bound, none a 500 or no answer, and each 503 says the store was busy.
    static func check(_ answers: [Answer], while what: String, file: StaticString = #filePath, line: UInt = #line) {
        for answer in answers {
            XCTAssertLessThan(answer.seconds, bound, "\(answer.request) while \(what): \(answer.status) after \(answer.seconds) s", file: file, line: line)
            XCTAssertTrue(answer.status != 0 && answer.status != 500, "\(answer.request) while \(what): \(answer.status) \(answer.body)", file: file, line: line)
            if answer.status == 503 {
                XCTAssertTrue(answer.body.contains("\"busy\""), "\(answer.request) while \(what): \(answer.body)", file: file, line: line)
            }
        }
    }

    /// Another process (Python's sqlite3) holds `BEGIN EXCLUSIVE` on the file until it is ended.
    static func holdExclusively(_ path: String) throws -> (process: Process, finish: () throws -> Void) {
        let python = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"] ?? "/usr/bin/python3"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN EXCLUSIVE")
            print("held", flush=True)
            time.sleep(120)
            """, path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        // Wait until the lock is held.
        _ = out.fileHandleForReading.readData(ofLength: 5)
        return (process, { process.waitUntilExit() })
    }
}
