@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPServer
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// One local process opening hundreds of slow or silent connections (slowloris) must not keep the
/// browser from being answered. Bounded: 600 loopback connections for a few seconds.
final class ConsoleSlowlorisTests: XCTestCase {
    /// A plain blocking TCP socket to 127.0.0.1:`port`, or -1.
    static func connectLoopback(_ port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 { close(fd); return -1 }
        return fd
    }

    static func write(_ fd: Int32, _ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
    }

    func testSixHundredSlowConnectionsDoNotKeepTheBrowserWaiting() throws {
        let harness = try ConsoleHarness(users: 3, transport: .socket)
        let port = harness.port
        let token = try harness.tokens("vera").access
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        // 200 silent, 200 stopped half-way through the request line, 200 trickling header bytes.
        for index in 0..<600 {
            let fd = Self.connectLoopback(port)
            guard fd >= 0 else { continue }
            sockets.append(fd)
            switch index % 3 {
            case 0: break
            case 1: Self.write(fd, "GET /index.ht")
            default: Self.write(fd, "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Slow: ")
            }
        }
        XCTAssertGreaterThan(sockets.count, 550, "the test opened its connections")

        var slowest = 0.0
        for round in 0..<10 {
            // The trickle goes on: one more byte on each trickling connection.
            for (index, fd) in sockets.enumerated() where index % 3 == 2 { Self.write(fd, "a") }
            for path in ["/index.html", "/api/auth/me"] {
                let started = Date()
                let client = try RawHTTPClient(port: port)
                try client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
                let response = try client.readResponse(timeout: 2)
                let elapsed = Date().timeIntervalSince(started)
                slowest = max(slowest, elapsed)
                XCTAssertEqual(response.status, 200, "round \(round) \(path)")
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertLessThan(slowest, 1.0, "the browser is answered within a second")
        let counts = harness.console.connectionCounts
        XCTAssertLessThanOrEqual(counts.waiting, ConsoleServer.maxWaitingConnections, "\(counts)")
        XCTAssertGreaterThan(counts.evicted, 400, "\(counts)")
    }

    func testQueuedPasswordChecksDoNotStarveCheapRoutes() throws {
        // Two handler threads; logins of names no admin has still cost a full PBKDF2 each (600,000 iterations).
        let harness = try ConsoleHarness(users: 3, throttle: LoginThrottle.Rules(clientThreshold: 1000), transport: .socket)
        let port = harness.port
        let token = try harness.tokens("vera").access
        let logins = try (1...12).map { index -> RawHTTPClient in
            let body = try harness.body(["username": "flood\(index)", "password": "guess"])
            let client = try RawHTTPClient(port: port)
            try client.send("POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
            return client
        }
        Thread.sleep(forTimeInterval: 0.2)
        // A route of the standard lane (not inline) is answered while the logins queue.
        let started = Date()
        let audit = try harness.request("GET", "/api/audit?limit=5", token: token)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(audit.status, 200, audit.bodyText)
        XCTAssertLessThan(elapsed, 1.0, "GET /api/audit waited behind the password checks")
        for login in logins { XCTAssertEqual(try login.readResponse(timeout: 60).status, 401) }
    }

    func testAConnectionThatTricklesItsHeadIsClosedAfterTheHeadTimeout() throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(requestTimeoutSeconds: 1)) { _ in .text(200, "ok\n") }
        try server.start()
        defer { server.stop() }
        let silent = Self.connectLoopback(server.port)
        let trickling = Self.connectLoopback(server.port)
        defer { close(silent); close(trickling) }
        Self.write(trickling, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        // One byte every 200 ms keeps libmicrohttpd's idle timeout (30 s) from ever firing; the head timeout does.
        var closedAfter: TimeInterval?
        let started = Date()
        while closedAfter == nil, Date().timeIntervalSince(started) < 5 {
            Self.write(trickling, "a")
            var pollSet = [pollfd(fd: trickling, events: Int16(POLLIN), revents: 0)]
            if poll(&pollSet, 1, 200) > 0 {
                var byte: UInt8 = 0
                if recv(trickling, &byte, 1, 0) <= 0 { closedAfter = Date().timeIntervalSince(started) }
            }
        }
        let after = try XCTUnwrap(closedAfter, "the trickling connection was never closed")
        XCTAssertGreaterThan(after, 0.9)
        XCTAssertLessThan(after, 2.5)
        // The silent one is closed by the same sweep or the next (it may have been accepted a moment later).
        var silentPoll = [pollfd(fd: silent, events: Int16(POLLIN), revents: 0)]
        _ = poll(&silentPoll, 1, 1500)
        var byte: UInt8 = 0
        XCTAssertEqual(recv(silent, &byte, 1, Int32(MSG_DONTWAIT)), 0, "the silent one is closed too")
        XCTAssertGreaterThanOrEqual(server.connectionCounts.evicted, 2)
        // A client that sends its request at once is served as usual.
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(try client.readResponse().status, 200)
    }

    /// Whether the server closed `fd` within `seconds` (EOF or reset), reading and discarding anything it sent.
    static func isClosed(_ fd: Int32, within seconds: Double = 0) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        repeat {
            var pollSet = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            if poll(&pollSet, 1, Int32(max(0, min(100, end.timeIntervalSinceNow * 1000)))) > 0 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                if recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) <= 0 { return true }
            }
        } while Date() < end
        return false
    }

    /// A POST whose head is complete and whose body (`Content-Length: 100`) has not come yet.
    static func startDribbling(_ port: UInt16) -> Int32 {
        let fd = connectLoopback(port)
        if fd >= 0 { write(fd, "POST /notify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{") }
        return fd
    }

    /// Waiting connections are held while there is room (closing one only makes its client reconnect at once); past
    /// `maxWaitingConnections` each new one closes the longest-waiting, oldest first, and a request is still served.
    func testWaitingConnectionsAreHeldUntilRoomRunsShortThenTheOldestAreClosed() throws {
        var configuration = HTTPServerConfiguration(maxConnectionsPerAddress: 0, requestTimeoutSeconds: 30)
        configuration.maxWaitingConnections = 20
        let server = HTTPServer(configuration: configuration) { _ in .text(200, "ok\n") }
        try server.start()
        defer { server.stop() }
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<15 { sockets.append(Self.connectLoopback(server.port)); usleep(5_000) }
        XCTAssertFalse(sockets.contains { $0 < 0 })
        usleep(600_000)
        XCTAssertEqual(sockets.filter { Self.isClosed($0) }.count, 0, "a waiting connection was closed while there was room")
        XCTAssertEqual(server.connectionCounts.evicted, 0)
        for _ in 0..<15 { sockets.append(Self.connectLoopback(server.port)); usleep(5_000) }
        usleep(300_000)
        let closed = sockets.indices.filter { Self.isClosed(sockets[$0], within: 0.05) }
        XCTAssertEqual(closed, Array(0..<10), "the longest-waiting connections are the ones closed")
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(try client.readResponse(timeout: 3).status, 200)
    }

    /// A client sending its body one byte every half second (each byte resets libmicrohttpd's idle timeout) is cut off
    /// at the request deadline, head and body together, and its handler never runs.
    func testABodyDribbledOneByteAtATimeIsCutOffAtTheRequestDeadline() throws {
        let ran = Ran()
        let server = HTTPServer(configuration: HTTPServerConfiguration(requestTimeoutSeconds: 2)) { request in
            if request.path == "/notify" { ran.add() }
            return .text(200, "ok\n")
        }
        try server.start()
        defer { server.stop() }
        let started = Date()
        let dribbler = Self.startDribbling(server.port)
        defer { close(dribbler) }
        var closedAfter: TimeInterval?
        while closedAfter == nil, Date().timeIntervalSince(started) < 8 {
            Self.write(dribbler, "a")
            if Self.isClosed(dribbler, within: 0.5) { closedAfter = Date().timeIntervalSince(started) }
        }
        let after = try XCTUnwrap(closedAfter, "the dribbling connection was never closed")
        XCTAssertGreaterThan(after, 1.9)
        XCTAssertLessThan(after, 3.5)
        XCTAssertEqual(ran.count, 0, "the handler ran for a request that never finished")
        // A client that sends its request at once is served as usual.
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        XCTAssertEqual(try client.readResponse().status, 200)
    }

    /// As the Apple notification listener is configured (2 threads, 64 connections): 120 connections dribbling their
    /// bodies from one address do not keep a valid POST from the same machine from being answered, and that address
    /// never holds more than its limit of connections.
    func testDribblingConnectionsBeyondTheAddressLimitLeaveRoomForValidRequests() throws {
        for limit in [4, 32] {
            var configuration = HTTPServerConfiguration(threadPoolSize: 2, connectionLimit: 64, maxConnectionsPerAddress: limit,
                                                        connectionTimeoutSeconds: 15, requestTimeoutSeconds: 30)
            configuration.maxWaitingConnections = 64
            let server = HTTPServer(configuration: configuration) { request in .text(200, "got \(request.body.count) bytes\n") }
            try server.start()
            defer { server.stop() }
            let dribblers = (0..<120).map { _ in Self.startDribbling(server.port) }
            defer { dribblers.forEach { close($0) } }
            XCTAssertEqual(dribblers.filter { $0 < 0 }.count, 0, "limit \(limit): the test opened its connections")
            for round in 0..<4 {
                for fd in dribblers { Self.write(fd, "a") }
                let started = Date()
                let client = try RawHTTPClient(port: server.port)
                try client.send("POST /notify HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                let response = try client.readResponse(timeout: 3)
                XCTAssertEqual(response.status, 200, "limit \(limit), round \(round): \(response.bodyText)")
                XCTAssertEqual(response.bodyText, "got 2 bytes\n")
                XCTAssertLessThan(Date().timeIntervalSince(started), 1, "limit \(limit), round \(round)")
                usleep(300_000)
            }
            let open = dribblers.filter { !Self.isClosed($0) }.count
            XCTAssertLessThanOrEqual(open, limit, "limit \(limit): one address held more connections than its limit")
            XCTAssertGreaterThan(open, 0, "limit \(limit): dribblers within the limit are held until their deadline")
            XCTAssertLessThanOrEqual(server.connectionCounts.open, limit + 1, "\(server.connectionCounts)")
        }
    }

    /// When every connection an address holds is running a request, one more from that address is closed at once (it
    /// could only wait), and one from that address is accepted again once a request completes.
    func testAConnectionBeyondTheAddressLimitIsClosedWhenNoneOfItsOthersWaits() throws {
        let gate = DispatchSemaphore(value: 0)
        var configuration = HTTPServerConfiguration(maxConnectionsPerAddress: 2)
        configuration.handlerThreadCount = 4
        let server = HTTPServer(configuration: configuration) { _ in
            gate.wait()
            return .text(200, "ok\n")
        }
        try server.start()
        defer { server.stop() }
        let running = try (0..<2).map { _ in try RawHTTPClient(port: server.port) }
        for client in running { try client.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        usleep(300_000)
        let extra = Self.connectLoopback(server.port)
        defer { close(extra) }
        XCTAssertTrue(Self.isClosed(extra, within: 2), "a connection beyond the address's limit was kept")
        gate.signal()
        gate.signal()
        for client in running { XCTAssertEqual(try client.readResponse(timeout: 5).status, 200) }
        usleep(200_000)
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        gate.signal()
        XCTAssertEqual(try client.readResponse(timeout: 5).status, 200)
    }
}

/// How many times a handler ran, thread-safe.
private final class Ran: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}
