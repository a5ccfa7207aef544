import Foundation
import XCTest
import HTTPTestSupport
@testable import HTTPServer

/// Requests and responses over a real socket on 127.0.0.1.
final class HTTPServerRequestTests: XCTestCase {
    func testGetWithQueryKeepsRawPathAndQuery() throws {
        let server = try startServer { request in
            let items = request.queryItems().map { "\($0.name)=\($0.value)" }.joined(separator: "|")
            return .text(200, "\(request.method) \(request.path) \(request.query ?? "<none>") \(items)")
        }
        let response = try exchange(server, "GET /a%20b/c%2Fd?x=1&y=hello+world&z=%41 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.bodyText, "GET /a%20b/c%2Fd x=1&y=hello+world&z=%41 x=1|y=hello world|z=A")
        XCTAssertEqual(response.header("content-type"), "text/plain; charset=utf-8")

        let plain = try exchange(server, "GET /plain HTTP/1.1\r\nHost: localhost\r\n\r\n")
        XCTAssertEqual(plain.bodyText, "GET /plain <none> ")
    }

    func testRemoteAddressAndMethod() throws {
        let server = try startServer(handler: echoHandler)
        let response = try exchange(server, "DELETE /thing HTTP/1.1\r\nHost: localhost\r\n\r\n")
        XCTAssertEqual(response.header("X-Echo-Remote"), "127.0.0.1")
        XCTAssertEqual(response.header("X-Echo-Method"), "DELETE")
    }

    func testRequestHeadersAreCaseInsensitiveAndOrdered() throws {
        let server = try startServer { request in
            var headers = HTTPHeaders()
            headers.add("X-Seen-Host", request.header("HOST") ?? "<none>")
            headers.add("X-Seen-Custom", request.headers["x-custom-thing"] ?? "<none>")
            headers.add("X-Seen-Multi", request.headers.values(for: "X-MULTI").joined(separator: ","))
            headers.add("X-Seen-Order", request.headers.map(\.name).joined(separator: ","))
            return HTTPResponse(status: 204, headers: headers)
        }
        let response = try exchange(
            server,
            "GET / HTTP/1.1\r\nHost: example.test:8080\r\nX-Custom-Thing: Value With Spaces\r\nX-Multi: 1\r\nx-multi: 2\r\n\r\n",
            hasBody: false
        )
        XCTAssertEqual(response.status, 204)
        XCTAssertEqual(response.header("x-seen-host"), "example.test:8080")
        XCTAssertEqual(response.header("X-SEEN-CUSTOM"), "Value With Spaces")
        XCTAssertEqual(response.header("X-Seen-Multi"), "1,2")
        XCTAssertEqual(response.header("X-Seen-Order"), "Host,X-Custom-Thing,X-Multi,x-multi")
    }

    func testPostBodyIsEchoedExactlyIncludingBinary() throws {
        let server = try startServer(handler: echoHandler)
        let body = (0...255).map { UInt8($0) } + [0, 0, 13, 10, 13, 10] + (0...255).reversed().map { UInt8($0) }
        let client = try RawHTTPClient(port: server.port)
        try client.send(Array("POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body, body)

        // The same connection serves a second request (keep-alive).
        try client.send("POST /again HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc")
        let second = try client.readResponse()
        XCTAssertEqual(second.bodyText, "abc")
        XCTAssertEqual(second.header("X-Echo-Path"), "/again")
    }

    func testOneMebibyteBodyAtTheCapIsEchoed() throws {
        let server = try startServer(handler: echoHandler)
        let body = testBytes(count: 1 << 20)
        let client = try RawHTTPClient(port: server.port)
        try client.send(Array("PUT /big HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body.count, body.count)
        XCTAssertTrue(response.body == body, "the echoed 1 MiB body differs")
    }

    func testChunkedUploadUnderTheCapIsDecoded() throws {
        let server = try startServer({ $0.maxBodyBytes = 4096 }, handler: echoHandler)
        let body = testBytes(count: 4000)
        let client = try RawHTTPClient(port: server.port)
        try client.send(Array("POST /chunked HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + chunkedEncoding(body, chunkSize: 333))
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body, body)
    }

    func testBodyOverTheCapWithContentLengthIs413() throws {
        let calls = Counter()
        let server = try startServer({ $0.maxBodyBytes = 1000 }) { request in
            calls.increment()
            return echoHandler(request)
        }
        let client = try RawHTTPClient(port: server.port)
        try client.send(Array("POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2000\r\n\r\n".utf8) + testBytes(count: 2000))
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 413)
        XCTAssertTrue(response.bodyText.contains("1000 bytes"), response.bodyText)
        XCTAssertEqual(calls.value, 0)

        // Exactly at the cap is fine.
        let atCap = try RawHTTPClient(port: server.port)
        try atCap.send(Array("POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n".utf8) + testBytes(count: 1000))
        XCTAssertEqual(try atCap.readResponse().status, 200)
    }

    func testChunkedBodyOverTheCapIs413() throws {
        let calls = Counter()
        let server = try startServer({ $0.maxBodyBytes = 1000 }) { request in
            calls.increment()
            return echoHandler(request)
        }
        let client = try RawHTTPClient(port: server.port)
        try client.send(Array("POST /x HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + chunkedEncoding(testBytes(count: 5000), chunkSize: 700))
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 413)
        XCTAssertEqual(calls.value, 0)
    }

    func testHugeDeclaredContentLengthIs413WithoutReadingTheBody() throws {
        let calls = Counter()
        let server = try startServer { request in
            calls.increment()
            return echoHandler(request)
        }
        let client = try RawHTTPClient(port: server.port)
        let started = Date()
        // Only the headers are sent: the answer must not wait for 10 GB.
        try client.send("POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10000000000\r\n\r\n")
        let response = try client.readResponse(timeout: 5)
        XCTAssertEqual(response.status, 413)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        XCTAssertEqual(calls.value, 0)
        // And the server closes the connection rather than wait for the body.
        XCTAssertNotNil(client.readUntilClosed(timeout: 5))

        // A client that asks first gets the 413 instead of "100 Continue".
        let asking = try RawHTTPClient(port: server.port)
        try asking.send("PUT /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n")
        XCTAssertEqual(try asking.readResponse(timeout: 5).status, 413)
        XCTAssertEqual(calls.value, 0)
    }

    func testExpectContinueUnderTheCapIsServed() throws {
        let server = try startServer(handler: echoHandler)
        let client = try RawHTTPClient(port: server.port)
        try client.send("PUT /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.readResponse(hasBody: false, timeout: 5)
        XCTAssertEqual(interim.status, 100)
        try client.send("hello")
        let response = try client.readResponse(timeout: 5)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.bodyText, "hello")
    }

    func testMalformedRequestLineIs400() throws {
        let calls = Counter()
        let server = try startServer { request in
            calls.increment()
            return echoHandler(request)
        }
        let client = try RawHTTPClient(port: server.port)
        try client.send("THIS IS NOT HTTP\r\n\r\n")
        let response = try client.readResponse(timeout: 5)
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(calls.value, 0)
    }

    func testResponseHeadersArePresentExactlyOnce() throws {
        let server = try startServer { _ in
            var headers: HTTPHeaders = ["Content-Type": "application/json", "Cache-Control": "no-store"]
            headers.add("X-Frame-Options", "DENY")
            headers.add("Content-Length", "999")  // ignored: the server frames the body
            headers.add("Set-Cookie", "a=1")
            headers.add("Set-Cookie", "b=2")
            return HTTPResponse(status: 201, headers: headers, body: Array("{\"ok\":true}".utf8))
        }
        let response = try exchange(server, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.bodyText, "{\"ok\":true}")
        for name in ["Content-Type", "Cache-Control", "X-Frame-Options", "Content-Length", "Date"] {
            XCTAssertEqual(response.count(of: name), 1, "\(name) in \(response.headers)")
        }
        XCTAssertEqual(response.header("Content-Length"), "11")
        XCTAssertEqual(response.count(of: "Set-Cookie"), 2)
        XCTAssertLessThanOrEqual(response.count(of: "Connection"), 1)
    }

    func testHandlerDateHeaderIsNotDuplicated() throws {
        let server = try startServer { _ in
            HTTPResponse(status: 200, headers: ["Date": "Thu, 01 Jan 1970 00:00:00 GMT"], body: [])
        }
        let response = try exchange(server, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        XCTAssertEqual(response.count(of: "Date"), 1, "\(response.headers)")
        XCTAssertEqual(response.header("Content-Length"), "0")
    }

    func testHeadHasNoBody() throws {
        let server = try startServer { _ in .text(200, "a body that HEAD must not send") }
        let client = try RawHTTPClient(port: server.port)
        try client.send("HEAD / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        let response = try client.readResponse(hasBody: false)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Length"), "30")
        XCTAssertEqual(client.readUntilClosed(timeout: 5), [], "bytes after the HEAD response's headers")
    }

    func testInvalidStatusAndHeaderBecome500() throws {
        let server = try startServer { request in
            if request.path == "/status" { return HTTPResponse(status: 42) }
            if request.path == "/name" { return HTTPResponse(status: 200, headers: ["Bad Name": "x"]) }
            return HTTPResponse(status: 200, headers: ["X-Bad": "line\r\nInjected: yes"])
        }
        XCTAssertEqual(try exchange(server, "GET /status HTTP/1.1\r\nHost: localhost\r\n\r\n").status, 500)
        let injected = try exchange(server, "GET /header HTTP/1.1\r\nHost: localhost\r\n\r\n")
        XCTAssertEqual(injected.status, 500)
        XCTAssertNil(injected.header("Injected"))
        XCTAssertEqual(try exchange(server, "GET /name HTTP/1.1\r\nHost: localhost\r\n\r\n").status, 500)
    }
}
