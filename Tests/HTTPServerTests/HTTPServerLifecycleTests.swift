import Foundation
import XCTest
import HTTPTestSupport
@testable import HTTPServer

/// Threads, timeouts, start and stop, binding.
final class HTTPServerLifecycleTests: XCTestCase {
    func testSlowHandlersRunInParallelOnThePool() throws {
        let concurrency = Counter()
        let server = try startServer({ $0.threadPoolSize = 4 }) { _ in
            concurrency.measure {
                usleep(200_000)
                return .text(200, "slept")
            }
        }
        let started = Date()
        var clients: [RawHTTPClient] = []
        for index in 0..<8 {
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET /\(index) HTTP/1.1\r\nHost: localhost\r\n\r\n")
            clients.append(client)
        }
        for client in clients {
            XCTAssertEqual(try client.readResponse().status, 200)
        }
        let elapsed = Date().timeIntervalSince(started)
        // One thread would need 1.6 s; four need about 0.4 s.
        XCTAssertLessThan(elapsed, 1.2, "8 requests of 200 ms took \(elapsed) s")
        XCTAssertGreaterThanOrEqual(concurrency.maximumConcurrent, 2)
    }

    func testHundredConcurrentConnectionsAreServed() throws {
        let concurrency = Counter()
        // A hundred connections from one address (every test client is 127.0.0.1): no limit per address.
        let server = try startServer({ $0.threadPoolSize = 4; $0.maxConnectionsPerAddress = 0 }) { request in
            concurrency.measure {
                usleep(10_000)
                return .text(200, request.path)
            }
        }
        var clients: [RawHTTPClient] = []
        for index in 0..<100 {
            clients.append(try RawHTTPClient(port: server.port))
            try clients[index].send("GET /\(index) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        }
        for (index, client) in clients.enumerated() {
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.bodyText, "/\(index)")
        }
        XCTAssertEqual(concurrency.value, 0)  // measure() does not count calls
        XCTAssertGreaterThanOrEqual(concurrency.maximumConcurrent, 2)
    }

    func testIdleClientIsDroppedAfterTheConnectionTimeout() throws {
        let server = try startServer({ $0.connectionTimeoutSeconds = 1 }, handler: echoHandler)
        let client = try RawHTTPClient(port: server.port)
        let started = Date()
        let received = client.readUntilClosed(timeout: 6)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertNotNil(received, "the idle connection was still open after 6 s")
        XCTAssertEqual(received ?? [1], [], "the server sent bytes to a client that sent nothing")
        XCTAssertGreaterThan(elapsed, 0.5)
        XCTAssertLessThan(elapsed, 4)
    }

    func testStopWaitsForInFlightHandlersThenRefusesConnections() throws {
        let finished = Counter()
        let called = Counter()
        let entered = DispatchSemaphore(value: 0)
        let server = try startServer({ $0.threadPoolSize = 2 }) { _ in
            called.increment()
            entered.signal()
            usleep(500_000)
            finished.increment()
            return .text(200, "done")
        }
        let port = server.port
        let clients = try (0..<2).map { index -> RawHTTPClient in
            let client = try RawHTTPClient(port: port)
            try client.send("GET /\(index) HTTP/1.1\r\nHost: localhost\r\n\r\n")
            return client
        }
        XCTAssertEqual(entered.wait(timeout: .now() + 5), .success)
        let started = Date()
        server.stop()
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        // Every handler that had been called has returned by the time stop() returns.
        XCTAssertGreaterThanOrEqual(finished.value, 1)
        XCTAssertEqual(finished.value, called.value)
        XCTAssertEqual(server.port, 0)
        for client in clients {
            XCTAssertNotNil(client.readUntilClosed(timeout: 5), "a connection stayed open after stop()")
        }
        XCTAssertThrowsError(try RawHTTPClient(port: port)) { error in
            XCTAssertEqual((error as? RawClientError)?.code, ECONNREFUSED)
        }
        server.stop()  // idempotent
    }

    func testStopBeforeStartAndTwiceIsHarmless() throws {
        let server = HTTPServer(configuration: .init(), handler: echoHandler)
        server.stop()
        try server.start()
        XCTAssertNotEqual(server.port, 0)
        server.stop()
        server.stop()
        XCTAssertEqual(server.port, 0)
    }

    func testStartTwiceThrows() throws {
        let server = try startServer(handler: echoHandler)
        XCTAssertThrowsError(try server.start()) { error in
            XCTAssertEqual((error as? HTTPServerError)?.kind, .alreadyStarted)
        }
    }

    func testRestartOnTheSamePort() throws {
        let server = HTTPServer(configuration: .init(), handler: echoHandler)
        try server.start()
        let port = server.port
        XCTAssertEqual(try exchange(server, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").status, 200)
        server.stop()
        let again = try startServer({ $0.port = port }, handler: echoHandler)
        XCTAssertEqual(again.port, port)
        XCTAssertEqual(try exchange(again, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").status, 200)
    }

    func testAddressInUseThrowsAClearError() throws {
        let first = try startServer(handler: echoHandler)
        let second = HTTPServer(configuration: .init(port: first.port), handler: echoHandler)
        XCTAssertThrowsError(try second.start()) { error in
            guard let error = error as? HTTPServerError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .addressInUse)
            XCTAssertTrue(error.message.contains("127.0.0.1:\(first.port)"), error.message)
            XCTAssertTrue(error.message.contains("already in use"), error.message)
        }
        XCTAssertEqual(second.port, 0)
        // The first server is unaffected.
        XCTAssertEqual(try exchange(first, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").status, 200)
    }

    func testBadAddressesThrowClearErrors() {
        for address in ["localhost", "127.0.0.256", "", "::1::2"] {
            XCTAssertThrowsError(try HTTPServer(configuration: .init(address: address), handler: echoHandler).start()) { error in
                XCTAssertEqual((error as? HTTPServerError)?.kind, .invalidAddress, address)
                XCTAssertTrue("\(error)".contains("is not an IP address"), "\(error)")
            }
        }
        // TEST-NET-1 is never assigned to a local interface.
        XCTAssertThrowsError(try HTTPServer(configuration: .init(address: "192.0.2.1"), handler: echoHandler).start()) { error in
            XCTAssertEqual((error as? HTTPServerError)?.kind, .addressNotAvailable, "\(error)")
        }
    }

    func testInvalidConfigurationThrows() {
        let configurations = [
            HTTPServerConfiguration(threadPoolSize: 0),
            HTTPServerConfiguration(connectionTimeoutSeconds: -1),
            HTTPServerConfiguration(maxBodyBytes: -1),
            HTTPServerConfiguration(maxHeaderBytes: 100),
        ]
        for configuration in configurations {
            XCTAssertThrowsError(try HTTPServer(configuration: configuration, handler: echoHandler).start()) { error in
                XCTAssertEqual((error as? HTTPServerError)?.kind, .invalidConfiguration, "\(error)")
            }
        }
    }

    func testIPv6LoopbackBinding() throws {
        guard SocketAddress(address: "::1", port: 0)!.probeBind() == 0 else {
            throw XCTSkip("this host has no IPv6 loopback")
        }
        let server = try startServer({ $0.address = "::1" }, handler: echoHandler)
        let client = try RawHTTPClient(port: server.port, host: "::1")
        try client.send("GET /v6 HTTP/1.1\r\nHost: [::1]\r\n\r\n")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("X-Echo-Remote"), "::1")
        // Bracketed form is accepted too.
        let bracketed = try startServer({ $0.address = "[::1]" }, handler: echoHandler)
        XCTAssertNotEqual(bracketed.port, 0)
    }

    func testOversizedHeadersAreRefusedByTheServer() throws {
        let calls = Counter()
        let server = try startServer({ $0.maxHeaderBytes = 8192 }) { request in
            calls.increment()
            return echoHandler(request)
        }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n")
        let response = try client.readResponse(timeout: 5)
        XCTAssertGreaterThanOrEqual(response.status, 400)
        XCTAssertEqual(calls.value, 0)
    }

    func testWaitForTerminationReturnsTheSignal() {
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            kill(getpid(), SIGTERM)
        }
        XCTAssertEqual(TerminationSignals().wait(timeout: .seconds(5)), SIGTERM)
        XCTAssertNil(TerminationSignals().wait(timeout: .milliseconds(100)))
    }

    func testASignalSentBeforeTheWaitIsNotLost() {
        // serve prints its address and then waits: a SIGTERM sent as soon as the line is read must still count.
        let termination = TerminationSignals()
        kill(getpid(), SIGTERM)
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual(termination.wait(timeout: .seconds(5)), SIGTERM)
        XCTAssertEqual(termination.wait(timeout: .seconds(1)), SIGTERM, "a second wait sees the same signal")
    }

    func testRepeatedStopUnderLoadNeverLeavesASuspendedConnection() throws {
        // MHD_stop_daemon aborts the process if a connection is still suspended; hammer that window.
        for round in 0..<15 {
            let server = HTTPServer(configuration: .init(threadPoolSize: 2)) { _ in
                usleep(UInt32(1_000 * (round % 4)))
                return .text(200, "ok")
            }
            try server.start()
            let port = server.port
            let senders = DispatchGroup()
            for _ in 0..<4 {
                DispatchQueue.global().async(group: senders) {
                    for _ in 0..<10 {
                        guard let client = try? RawHTTPClient(port: port) else { return }
                        try? client.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
                        _ = try? client.readResponse(timeout: 2)
                    }
                }
            }
            usleep(UInt32(2_000 * round))
            server.stop()
            XCTAssertEqual(senders.wait(timeout: .now() + 10), .success)
        }
    }

    func testSlowHandlerDoesNotHoldUpOtherConnections() throws {
        let server = try startServer({ $0.threadPoolSize = 2 }) { request in
            if request.path == "/slow" { usleep(1_500_000) }
            return .text(200, request.path)
        }
        let slow = try RawHTTPClient(port: server.port)
        try slow.send("GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n")
        usleep(50_000)
        let started = Date()
        for index in 0..<10 {
            let response = try exchange(server, "GET /fast\(index) HTTP/1.1\r\nHost: localhost\r\n\r\n")
            XCTAssertEqual(response.bodyText, "/fast\(index)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1.0)
        XCTAssertEqual(try slow.readResponse().bodyText, "/slow")
    }
}
