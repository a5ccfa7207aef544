import Foundation
import XCTest
import HTTPTestSupport
@testable import HTTPServer

/// A thread-safe counter for what handlers did.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var peak = 0
    private var running = 0

    var value: Int { lock.withLock { count } }
    var maximumConcurrent: Int { lock.withLock { peak } }

    func increment() { lock.withLock { count += 1 } }

    /// Runs `body` while counting how many run at once.
    func measure<T>(_ body: () -> T) -> T {
        lock.withLock {
            running += 1
            peak = max(peak, running)
        }
        defer { lock.withLock { running -= 1 } }
        return body()
    }
}

extension XCTestCase {
    /// Starts a server on 127.0.0.1 and a free port, stopped when the test ends.
    func startServer(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        inline: HTTPServer.InlineHandler? = nil,
        handler: @escaping HTTPServer.Handler
    ) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration()
        configure(&configuration)
        let server = HTTPServer(configuration: configuration, inline: inline, handler: handler)
        try server.start()
        addTeardownBlock { server.stop() }
        XCTAssertNotEqual(server.port, 0)
        return server
    }

    /// Sends `request` on a new connection and reads one response.
    func exchange(_ server: HTTPServer, _ request: String, hasBody: Bool = true) throws -> RawResponse {
        let client = try RawHTTPClient(port: server.port)
        try client.send(request)
        return try client.readResponse(hasBody: hasBody)
    }
}

/// Echoes the request: the body as is, the rest in `X-Echo-*` headers.
let echoHandler: HTTPServer.Handler = { request in
    var headers: HTTPHeaders = ["Content-Type": "application/octet-stream"]
    headers.add("X-Echo-Method", request.method)
    headers.add("X-Echo-Path", request.path)
    headers.add("X-Echo-Query", request.query ?? "<none>")
    headers.add("X-Echo-Remote", request.remoteAddress)
    return HTTPResponse(status: 200, headers: headers, body: request.body)
}

/// Deterministic pseudo-random bytes covering every byte value.
func testBytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}
