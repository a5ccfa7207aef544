import Foundation
import XCTest
import HTTPTestSupport
@testable import HTTPServer

/// The handler pool's queues are bounded: a request its lane has no room for is refused at once, a queued request
/// whose client left is never run, and priority work is taken before queued slow work.
final class HandlerQueueBoundsTests: XCTestCase {
    /// A server whose `/slow/…` requests take `slowSeconds` in the slow lane, `/std/…` `standardSeconds` in the standard
    /// lane, and `/login` runs in the priority lane;
    /// `runs` counts the handlers that ran, by path.
    func startLaneServer(threads: Int, maxQueued: Int, maxQueueWait: Double = 20, slowSeconds: Double,
                         runs: PathCounter, standardSeconds: Double = 0) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration(threadPoolSize: 1, handlerThreadCount: threads)
        configuration.maxQueuedRequests = maxQueued
        configuration.maxQueueWaitSeconds = maxQueueWait
        let server = HTTPServer(configuration: configuration, lane: { request in
            request.path.hasPrefix("/slow") ? .slow : request.path == "/login" ? .priority : .standard
        }) { request in
            runs.add(request.path)
            if request.path.hasPrefix("/slow") { usleep(useconds_t(slowSeconds * 1_000_000)) }
            if request.path.hasPrefix("/std") { usleep(useconds_t(standardSeconds * 1_000_000)) }
            return .text(200, request.path)
        }
        try server.start()
        addTeardownBlock { server.stop() }
        return server
    }

    func send(_ server: HTTPServer, _ path: String) throws -> RawHTTPClient {
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        return client
    }

    func testAFullLaneIsRefusedAtOnceWithRetryAfter() throws {
        let runs = PathCounter()
        let server = try startLaneServer(threads: 1, maxQueued: 2, slowSeconds: 1.0, runs: runs)
        let running = try send(server, "/slow/0")
        try waitUntil { runs.count("/slow/0") == 1 }
        let queued = try (1...2).map { try send(server, "/slow/\($0)") }
        usleep(100_000)
        let started = Date()
        let refused = try send(server, "/slow/3").readResponse(timeout: 5)
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.5, "a full lane must refuse at once, not queue")
        XCTAssertEqual(refused.status, 503, refused.bodyText)
        XCTAssertEqual(refused.header("Retry-After"), "1")
        XCTAssertEqual(try running.readResponse(timeout: 5).status, 200)
        for client in queued { XCTAssertEqual(try client.readResponse(timeout: 5).status, 200) }
        XCTAssertEqual(runs.count("/slow/3"), 0)
    }

    func testAQueuedRequestWhoseClientLeftIsNotRun() throws {
        let runs = PathCounter()
        let server = try startLaneServer(threads: 1, maxQueued: 8, slowSeconds: 0.8, runs: runs)
        let running = try send(server, "/slow/0")
        try waitUntil { runs.count("/slow/0") == 1 }
        // Three requests queue behind it; their clients give up and close before a thread is free.
        var leaving: [RawHTTPClient]? = try (1...3).map { try send(server, "/slow/gone\($0)") }
        usleep(100_000)
        leaving = nil
        _ = leaving
        let staying = try send(server, "/slow/stays")
        XCTAssertEqual(try running.readResponse(timeout: 5).status, 200)
        XCTAssertEqual(try staying.readResponse(timeout: 5).bodyText, "/slow/stays")
        for index in 1...3 { XCTAssertEqual(runs.count("/slow/gone\(index)"), 0, "the handler of a client that left ran") }
    }

    func testARequestThatWaitedTooLongIsAnswered503WithoutRunning() throws {
        let runs = PathCounter()
        let server = try startLaneServer(threads: 1, maxQueued: 8, maxQueueWait: 0.3, slowSeconds: 0.8, runs: runs)
        let running = try send(server, "/slow/0")
        try waitUntil { runs.count("/slow/0") == 1 }
        let late = try send(server, "/slow/late")
        XCTAssertEqual(try running.readResponse(timeout: 5).status, 200)
        let answer = try late.readResponse(timeout: 5)
        XCTAssertEqual(answer.status, 503, answer.bodyText)
        XCTAssertEqual(answer.header("Retry-After"), "1")
        XCTAssertEqual(runs.count("/slow/late"), 0)
    }

    /// With three handler threads, slow work runs on at most one: a login is answered while two scans run and more
    /// wait, and before any of those waiting.
    func testPriorityWorkNeverWaitsForQueuedSlowWork() throws {
        let runs = PathCounter()
        let server = try startLaneServer(threads: 3, maxQueued: 32, slowSeconds: 0.8, runs: runs)
        let scans = try (0..<6).map { try send(server, "/slow/\($0)") }
        try waitUntil { runs.total(prefix: "/slow/") >= 1 }
        let started = Date()
        let login = try send(server, "/login").readResponse(timeout: 5)
        XCTAssertEqual(login.status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.6, "the login waited for slow work")
        XCTAssertEqual(runs.total(prefix: "/slow/"), 1, "slow work took more than its share of the threads")
        for scan in scans { XCTAssertEqual(try scan.readResponse(timeout: 15).status, 200) }
    }

    /// Standard work slowed down (a viewer looping over a large audit page) may take every handler thread but one:
    /// a login is answered at once while standard requests fill their threads and more wait, and it is taken before
    /// those waiting.
    func testAThreadIsKeptForPriorityWorkWhileStandardWorkFillsTheRest() throws {
        for threads in [2, 4] {
            let runs = PathCounter()
            let server = try startLaneServer(threads: threads, maxQueued: 32, slowSeconds: 0, runs: runs, standardSeconds: 1.0)
            let flood = try (0..<(3 * threads)).map { try send(server, "/std/\($0)") }
            try waitUntil { runs.total(prefix: "/std/") >= threads - 1 }
            usleep(100_000)
            let started = Date()
            let login = try send(server, "/login").readResponse(timeout: 5)
            XCTAssertEqual(login.status, 200)
            XCTAssertLessThan(Date().timeIntervalSince(started), 0.6, "\(threads) threads: the login waited for standard work")
            XCTAssertEqual(runs.total(prefix: "/std/"), threads - 1, "\(threads) threads: standard work took the priority lane's thread")
            for request in flood { XCTAssertEqual(try request.readResponse(timeout: 15).status, 200) }
            server.stop()
        }
    }

    /// With one thread there is no reserve, but a queued login is taken before standard work queued earlier.
    func testPriorityWorkIsTakenBeforeQueuedStandardWork() throws {
        let runs = PathCounter()
        let server = try startLaneServer(threads: 1, maxQueued: 32, slowSeconds: 0, runs: runs, standardSeconds: 0.5)
        let running = try send(server, "/std/0")
        try waitUntil { runs.count("/std/0") == 1 }
        let queued = try (1...4).map { try send(server, "/std/\($0)") }
        usleep(100_000)
        let started = Date()
        XCTAssertEqual(try send(server, "/login").readResponse(timeout: 5).status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.9, "the login waited behind queued standard work")
        XCTAssertLessThanOrEqual(runs.total(prefix: "/std/"), 2, "standard work queued before the login ran first")
        XCTAssertEqual(try running.readResponse(timeout: 5).status, 200)
        for request in queued { XCTAssertEqual(try request.readResponse(timeout: 15).status, 200) }
    }

    func waitUntil(timeout: TimeInterval = 5, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { return XCTFail("condition not met within \(timeout) s") }
            usleep(10_000)
        }
    }
}

/// How many handlers ran for each path, thread-safe.
final class PathCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]

    func add(_ path: String) { lock.withLock { counts[path, default: 0] += 1 } }
    func count(_ path: String) -> Int { lock.withLock { counts[path] ?? 0 } }
    func total(prefix: String) -> Int { lock.withLock { counts.filter { $0.key.hasPrefix(prefix) }.values.reduce(0, +) } }
}
