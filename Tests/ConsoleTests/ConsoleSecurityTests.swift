@testable import Console
@testable import D1Engine
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The console's own security, over a real socket.
final class ConsoleSecurityTests: XCTestCase {
    var harness: ConsoleHarness!
    override func setUpWithError() throws { harness = try ConsoleHarness(transport: .socket) }
    override func tearDown() { harness = nil }

    func testStatusAnswersWithSecurityHeadersAndNoStore() throws {
        XCTAssertEqual(try harness.get("/api/status").status, 401, "the store's path and size are for signed-in admins")
        let response = try harness.request("GET", "/api/status", token: try harness.tokens("vera").access)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("content-security-policy"), "default-src 'self'; frame-ancestors 'none'")
        XCTAssertEqual(response.header("x-content-type-options"), "nosniff")
        XCTAssertEqual(response.header("referrer-policy"), "no-referrer")
        XCTAssertEqual(response.header("cache-control"), "no-store")
        XCTAssertNil(response.header("access-control-allow-origin"))
        let body = try harness.json(response)
        XCTAssertEqual((body["counts"] as? [String: Any])?["users"] as? Int, 50)
    }

    func testForeignHostIsRefused() throws {
        for host in ["evil.example", "evil.example:\(harness.port)", "127.0.0.1:1", "127.0.0.1", "localhost.evil.example:\(harness.port)"] {
            let response = try harness.get("/api/status", host: host)
            XCTAssertEqual(response.status, 403, host)
            XCTAssertEqual(try harness.json(response)["error"].flatMap { ($0 as? [String: Any])?["code"] as? String }, "forbidden_host")
        }
        for host in ["localhost:\(harness.port)", "127.0.0.1:\(harness.port)"] {
            XCTAssertEqual(try harness.get("/", host: host).status, 200, host)
            XCTAssertEqual(try harness.get("/api/status", host: host).status, 401, "past the host check, on to authentication")
        }
        let missing = try harness.exchange("GET / HTTP/1.0\r\n\r\n")
        XCTAssertEqual(missing.status, 403)
    }

    func testCrossOriginWritesAreRefused() throws {
        let port = harness.port
        let foreign = try harness.exchange("POST /api/status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        XCTAssertEqual(foreign.status, 403)
        let own = try harness.exchange("POST /api/status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        XCTAssertEqual(own.status, 405, "same origin passes the guard and meets the router")
    }

    func testPathsOutsideTheAllowlistAreRefused() throws {
        for path in ["/../Package.swift", "/%2e%2e/Package.swift", "/%2E%2E%2FPackage.swift", "/console.css%00.html", "/./index.html",
                     "//etc/passwd", "/..%5cPackage.swift", "/Public/index.html", "/.hidden", "/index.html/", "/\u{7f}"] {
            let response = try harness.get(path)
            XCTAssertTrue([400, 404].contains(response.status), "\(path): \(response.status)")
            XCTAssertFalse(response.bodyText.contains("swift-tools-version"), path)
        }
    }

    func testStaticFilesComeFromTheAllowlist() throws {
        let index = try harness.get("/")
        XCTAssertEqual(index.status, 200)
        XCTAssertEqual(index.header("content-type"), "text/html; charset=utf-8")
        XCTAssertTrue(index.bodyText.contains("<title>Gatehouse</title>"))
        XCTAssertEqual(try harness.get("/js/app.js").header("content-type"), "text/javascript; charset=utf-8")
        XCTAssertEqual(try harness.get("/js/pages/README.md").status, 404, "only known file types are served")
        XCTAssertEqual(try harness.get("/nope.js").status, 404)
        let post = try harness.exchange("DELETE /index.html HTTP/1.1\r\nHost: 127.0.0.1:\(harness.port)\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(post.status, 405)
    }

    func testUnknownAPIRoutesAnswerJSON() throws {
        let response = try harness.get("/api/nope")
        XCTAssertEqual(response.status, 404)
        XCTAssertEqual(response.header("content-type"), "application/json; charset=utf-8")
        XCTAssertNotNil(try harness.json(response)["error"])
    }

    func testOversizedBodiesAre413() throws {
        let response = try harness.exchange("POST /api/status HTTP/1.1\r\nHost: 127.0.0.1:\(harness.port)\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(response.status, 413)
    }

    func testNonLoopbackAddressNeedsAllowRemote() {
        XCTAssertThrowsError(try ConsoleServer(options: .init(storePath: harness.storePath, publicDirectory: "Public", address: "0.0.0.0", port: 0))) {
            XCTAssertTrue("\($0)".contains("--allow-remote"), "\($0)")
        }
    }

    func testPathCheck() {
        XCTAssertTrue(RequestGuard.isPlainPath("/api/users/abc"))
        XCTAssertFalse(RequestGuard.isPlainPath("api"))
        XCTAssertFalse(RequestGuard.isPlainPath("/a/../b"))
        XCTAssertFalse(RequestGuard.isPlainPath("/a/%2e%2e/b"))
        XCTAssertFalse(RequestGuard.isPlainPath("/a\u{0}b"))
        XCTAssertFalse(RequestGuard.isPlainPath("/" + String(repeating: "a", count: 5000)))
    }
}
