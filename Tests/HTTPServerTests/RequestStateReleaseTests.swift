import Foundation
import XCTest
import HTTPTestSupport
@testable import HTTPServer

/// Every per-request state retained into libmicrohttpd is released, however the request ends.
final class HTTPServerRequestStateTests: XCTestCase {
    func testEveryRequestStateIsReleased() throws {
        #if DEBUG
        let before = RequestState.live.withLock { $0 }
        let server = HTTPServer(configuration: .init(maxBodyBytes: 1000)) { request in
            if request.path == "/slow" { usleep(300_000) }
            return echoHandler(request)
        }
        try server.start()
        let port = server.port
        func send(_ bytes: [UInt8]) throws -> RawHTTPClient {
            let client = try RawHTTPClient(port: port)
            try client.send(bytes)
            return client
        }
        let head = "Host: localhost\r\n"
        var keep: [RawHTTPClient] = []
        // Answered normally, over the cap, malformed, HEAD.
        XCTAssertEqual(try send(Array("GET /a?b=c HTTP/1.1\r\n\(head)\r\n".utf8)).readResponse().status, 200)
        XCTAssertEqual(try send(Array("POST /a HTTP/1.1\r\n\(head)Content-Length: 3\r\n\r\nabc".utf8)).readResponse().status, 200)
        XCTAssertEqual(try send(Array("POST /a HTTP/1.1\r\n\(head)Content-Length: 5000\r\n\r\n".utf8)).readResponse().status, 413)
        XCTAssertEqual(try send(Array("POST /a HTTP/1.1\r\n\(head)Transfer-Encoding: chunked\r\n\r\n".utf8) + chunkedEncoding(testBytes(count: 3000), chunkSize: 512)).readResponse().status, 413)
        XCTAssertEqual(try send(Array("NOT HTTP\r\n\r\n".utf8)).readResponse().status, 400)
        XCTAssertEqual(try send(Array("HEAD /a HTTP/1.1\r\n\(head)\r\n".utf8)).readResponse(hasBody: false).status, 200)
        // Abandoned halfway through the body, and while the handler runs.
        do { _ = try send(Array("POST /a HTTP/1.1\r\n\(head)Content-Length: 900\r\n\r\nonly part".utf8)) }
        do { _ = try send(Array("GET /slow HTTP/1.1\r\n\(head)\r\n".utf8)) }
        // Still in flight when the server stops.
        keep.append(try send(Array("GET /slow HTTP/1.1\r\n\(head)\r\n".utf8)))
        keep.append(try send(Array("POST /a HTTP/1.1\r\n\(head)Content-Length: 900\r\n\r\npart".utf8)))
        usleep(100_000)
        server.stop()
        XCTAssertEqual(RequestState.live.withLock { $0 }, before)
        #else
        throw XCTSkip("request states are counted in debug builds only")
        #endif
    }
}
