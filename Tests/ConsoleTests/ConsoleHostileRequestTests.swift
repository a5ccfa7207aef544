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

/// Malformed and hostile requests over a real socket: each gets a clear 4xx, reveals nothing, and the
/// console keeps answering.
final class ConsoleHostileRequestTests: XCTestCase {
    var harness: ConsoleHarness!
    override func setUpWithError() throws { harness = try ConsoleHarness(users: 5, transport: .socket) }
    override func tearDown() { harness = nil }

    func assertStillServing(file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try harness.get("/index.html").status, 200, "the console still answers", file: file, line: line)
    }

    func testADuplicateHostHeaderIsABadRequest() throws {
        let port = harness.port
        for second in ["evil.example", "127.0.0.1:\(port)"] {
            let response = try harness.exchange("GET /index.html HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nHost: \(second)\r\nConnection: close\r\n\r\n")
            XCTAssertEqual(response.status, 400, "Host: \(second)")
            XCTAssertEqual(harness.errorCode(response), "bad_request")
        }
        try assertStillServing()
    }

    func testANulInTheRequestLineIsABadRequest() throws {
        let port = harness.port
        let targets: [[UInt8]] = [Array("/index.html".utf8) + [0] + Array("/../../etc/passwd".utf8),
                                  Array("/index.html?a=".utf8) + [0] + Array("b".utf8),
                                  Array("/".utf8) + [0],
                                  Array("/api/auth/me".utf8) + [0] + Array("x".utf8)]
        for target in targets {
            let client = try RawHTTPClient(port: port)
            try client.send(Array("GET ".utf8) + target + Array(" HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8))
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 400, String(decoding: target.map { $0 == 0 ? UInt8(ascii: "0") : $0 }, as: UTF8.self))
        }
        try assertStillServing()
    }

    func testAuditSinceOutOfRangeIsABadRequestWithAClearMessage() throws {
        let token = try harness.tokens("vera").access
        let cases = ["9223372036854776s": "longer than 100 years", "200000000000d": "longer than 100 years",
                     "1e308s": "is not a duration", "-1s": "negative duration",
                     "99999999999999999999999999s": "not a duration"]
        for (since, expected) in cases {
            let response = try harness.request("GET", "/api/audit?since=\(since)", token: token)
            XCTAssertEqual(response.status, 400, "since=\(since): \(response.bodyText)")
            let message = ((try harness.json(response))["error"] as? [String: Any])?["message"] as? String ?? ""
            XCTAssertTrue(message.contains("?since") && message.contains(expected), "since=\(since): \(message)")
        }
        XCTAssertEqual(try harness.request("GET", "/api/audit?since=36500d", token: token).status, 200)
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: token).status, 200, "the console is still up")
    }

    func testALoginStoreErrorDoesNotRevealTheStorePath() throws {
        // Another process breaks the store under the console: the login's throttle table is gone.
        let other = try Store.open(path: harness.storePath)
        try other.db.execute("DROP TABLE gatehouse_login_failures")
        let response = try harness.login("root", "a wrong password")
        XCTAssertEqual(response.status, 500, response.bodyText)
        let text = response.bodyText
        XCTAssertFalse(text.contains(harness.directory.path), text)
        XCTAssertFalse(text.contains("console.sqlite"), text)
        XCTAssertFalse(text.contains("gatehouse_login_failures"), text)
        XCTAssertFalse(text.contains("a wrong password"), text)
        XCTAssertEqual(response.header("x-request-id").map { text.contains($0) }, true, "the body names the request id to look up: \(text)")
        try assertStillServing()
    }

    func testRequestLogLinesHideEmailsAndShowControlCharacters() {
        XCTAssertEqual(RequestLogLine.path("/api/users/alice@example.com"), "/api/users/<email>")
        XCTAssertEqual(RequestLogLine.path("/api/users/alice%40example.com/sessions"), "/api/users/<email>/sessions")
        XCTAssertEqual(RequestLogLine.path("/api/users/u_123"), "/api/users/u_123")
        XCTAssertEqual(RequestLogLine.path("/\u{1B}[31mred\u{07}\r\nfake 200"), "/\\u{001B}[31mred\\u{0007}\\u{000D}\\u{000A}fake 200")
        let line = RequestLogLine.line(at: Timestamp(milliseconds: 0), requestID: "r1", method: "GET\u{1B}", path: "/x\n", status: 400, milliseconds: 1.25)
        XCTAssertEqual(line.filter { $0 == "\n" }.count, 1, line)
        XCTAssertFalse(line.unicodeScalars.contains { $0 == "\u{1B}" }, line)
    }
}
