import Foundation
import XCTest
import HTTPTestSupport

/// `gatehouse serve` as an operator runs it: prints its URL, answers, stops cleanly on a signal.
final class ServeTests: XCTestCase {
    func testServeAnswersAndStopsOnSignals() throws {
        let scratch = try Scratch()
        let store = scratch.path("s.sqlite")
        let passwordFile = scratch.path("admin-password")
        try "a long enough password".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try CLI().run(["init", "--store", store, "--admin", "ops", "--admin-password-file", passwordFile]).status, 0)
        XCTAssertEqual(try CLI().run(["demo", "seed", "--store", store, "--users", "20", "-q"]).status, 0)
        let login = #"{"username":"ops","password":"a long enough password"}"#
        for signal in [SIGTERM, SIGINT] {
            let process = try CLI().start(["serve", "--store", store, "--listen", "127.0.0.1:0"])
            var url: String?
            for _ in 0..<100 where url == nil {
                Thread.sleep(forTimeInterval: 0.05)
                let printed = (try? String(contentsOf: process.out, encoding: .utf8)) ?? ""
                url = printed.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }.map(String.init)
            }
            let base = try XCTUnwrap(url, "serve printed no URL")
            let port = try XCTUnwrap(UInt16(base.dropFirst("http://127.0.0.1:".count).dropLast()))
            let client = try RawHTTPClient(port: port)
            try client.send("POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: \(login.utf8.count)\r\nConnection: close\r\n\r\n\(login)")
            let tokens = try JSONSerialization.jsonObject(with: Data(try client.readResponse().body)) as? [String: Any]
            let access = try XCTUnwrap(tokens?["accessToken"] as? String)
            let second = try RawHTTPClient(port: port)
            try second.send("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(access)\r\nConnection: close\r\n\r\n")
            let status = try JSONSerialization.jsonObject(with: Data(try second.readResponse().body)) as? [String: Any]
            XCTAssertEqual((status?["counts"] as? [String: Any])?["users"] as? Int, 20)
            kill(process.process.processIdentifier, signal)
            let result = try process.finish()
            XCTAssertEqual(result.status, 0, result.all)
            XCTAssertTrue(result.stderr.contains("GET /api/status 200"), result.stderr)
            XCTAssertFalse(result.stderr.contains("a long enough password"), "no password in the request log")
        }
    }

    func testServeRefusesBadListenAddresses() throws {
        let scratch = try Scratch()
        let store = scratch.path("s.sqlite")
        XCTAssertEqual(try CLI().run(["init", "--store", store]).status, 0)
        XCTAssertEqual(try CLI().run(["serve", "--store", store, "--listen", "nonsense"]).status, 2)
        let remote = try CLI().run(["serve", "--store", store, "--listen", "0.0.0.0:0"])
        XCTAssertEqual(remote.status, 1)
        XCTAssertTrue(remote.stderr.contains("--allow-remote"), remote.stderr)
        let missing = try CLI().run(["serve", "--store", scratch.path("none.sqlite"), "--listen", "127.0.0.1:0"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("no store at"), missing.stderr)
    }
}

/// What `gatehouse serve` writes to its request log about hostile requests.
final class ServeRequestLogTests: XCTestCase {
    func testTheRequestLogHidesEmailsAndEscapesControlCharacters() throws {
        let scratch = try Scratch()
        let store = scratch.path("s.sqlite")
        XCTAssertEqual(try CLI().run(["init", "--store", store]).status, 0)
        let process = try CLI().start(["serve", "--store", store, "--listen", "127.0.0.1:0"])
        var url: String?
        for _ in 0..<100 where url == nil {
            Thread.sleep(forTimeInterval: 0.05)
            let printed = (try? String(contentsOf: process.out, encoding: .utf8)) ?? ""
            url = printed.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }.map(String.init)
        }
        let base = try XCTUnwrap(url, "serve printed no URL")
        let port = try XCTUnwrap(UInt16(base.dropFirst("http://127.0.0.1:".count).dropLast()))
        func send(_ target: [UInt8]) throws -> Int {
            let client = try RawHTTPClient(port: port)
            try client.send(Array("GET ".utf8) + target + Array(" HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8))
            return try client.readResponse().status
        }
        XCTAssertEqual(try send(Array("/api/users/alice.secret@example.com".utf8)), 401)
        XCTAssertEqual(try send(Array("/api/users/bob.hidden%40example.com".utf8)), 401)
        XCTAssertEqual(try send(Array("/\u{1B}]0;owned\u{07}\u{1B}[2J".utf8)), 400)
        kill(process.process.processIdentifier, SIGTERM)
        let result = try process.finish()
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertTrue(result.stderr.contains("GET /api/users/<email> 401"), result.stderr)
        XCTAssertFalse(result.stderr.contains("alice.secret"), result.stderr)
        XCTAssertFalse(result.stderr.contains("bob.hidden"), result.stderr)
        XCTAssertFalse(result.stderr.contains("\u{1B}") || result.stderr.contains("\u{07}"), "no raw control characters in the log")
        XCTAssertTrue(result.stderr.contains("\\u{001B}]0;owned\\u{0007}"), result.stderr)
    }
}
