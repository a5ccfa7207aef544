import Foundation
import XCTest
import HTTPTestSupport
@testable import HTTPServer

/// The inline fast path: answered on the connection's thread, or handed to the pool when it returns nil,
/// without weakening the pool's isolation of slow handlers.
final class HTTPServerInlineTests: XCTestCase {
    func testInlineAnswersWithoutThePoolAndNilFallsThrough() throws {
        let pooled = Counter()
        let server = try startServer(inline: { request in
            request.path.hasPrefix("/fast") ? .text(200, "inline \(request.path)") : nil
        }) { request in
            pooled.increment()
            return .text(200, "pool \(request.path)")
        }
        XCTAssertEqual(try exchange(server, "GET /fast HTTP/1.1\r\nHost: localhost\r\n\r\n").bodyText, "inline /fast")
        XCTAssertEqual(pooled.value, 0)
        XCTAssertEqual(try exchange(server, "GET /other HTTP/1.1\r\nHost: localhost\r\n\r\n").bodyText, "pool /other")
        XCTAssertEqual(pooled.value, 1)
    }

    func testInlineSeesTheWholeRequestAndItsResponseIsCheckedLikeAnyOther() throws {
        let server = try startServer(inline: { request in
            if request.path == "/bad-header" { return HTTPResponse(status: 200, headers: ["X-Bad": "a\r\nInjected: yes"]) }
            return HTTPResponse(status: 201, headers: ["X-Method": request.method], body: request.body)
        }) { _ in .text(500, "pool") }
        let echoed = try exchange(server, "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello")
        XCTAssertEqual(echoed.status, 201)
        XCTAssertEqual(echoed.bodyText, "hello")
        XCTAssertEqual(echoed.header("X-Method"), "POST")
        let bad = try exchange(server, "GET /bad-header HTTP/1.1\r\nHost: localhost\r\n\r\n")
        XCTAssertEqual(bad.status, 500)
        XCTAssertNil(bad.header("Injected"))
    }

    func testKeepAliveConnectionMixesInlineAndPooledAnswers() throws {
        let server = try startServer(inline: { $0.path == "/inline" ? .text(200, "i") : nil }) { _ in .text(200, "p") }
        let client = try RawHTTPClient(port: server.port)
        for path in ["/inline", "/pool", "/inline", "/pool"] {
            try client.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
            XCTAssertEqual(try client.readResponse().bodyText, path == "/inline" ? "i" : "p")
        }
    }

    func testSlowPooledHandlerDoesNotHoldUpInlineAnswers() throws {
        let server = try startServer({ $0.threadPoolSize = 1; $0.handlerThreadCount = 2 }, inline: { request in
            request.path == "/slow" ? nil : .text(200, request.path)
        }) { request in
            usleep(1_500_000)
            return .text(200, request.path)
        }
        let slow = try RawHTTPClient(port: server.port)
        try slow.send("GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n")
        usleep(50_000)
        let started = Date()
        for index in 0..<10 {
            XCTAssertEqual(try exchange(server, "GET /fast\(index) HTTP/1.1\r\nHost: localhost\r\n\r\n").bodyText, "/fast\(index)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1.0)
        XCTAssertEqual(try slow.readResponse().bodyText, "/slow")
    }

    func testHandlerThreadCountIsValidated() {
        let server = HTTPServer(configuration: HTTPServerConfiguration(handlerThreadCount: 0)) { _ in .text(200, "") }
        XCTAssertThrowsError(try server.start()) { error in
            XCTAssertEqual((error as? HTTPServerError)?.kind, .invalidConfiguration)
        }
        XCTAssertEqual(HTTPServerConfiguration(threadPoolSize: 3).handlerThreadCount, 3, "defaults to the connection threads")
    }
}
