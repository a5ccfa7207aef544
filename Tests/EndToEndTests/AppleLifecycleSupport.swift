import Foundation
import HTTPTestSupport
import XCTest

/// Tests/Fixtures/apple_server.py, a local appleid.apple.com (`/auth/keys`, `/auth/revoke`, faults, a notification
/// signer), run with the project's venv Python for one test.
final class AppleServerFixture {
    let running: CLI.Running
    let port: UInt16
    let tls: Bool
    var baseURL: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }

    /// With `tls` (a PEM certificate and key), the server speaks HTTPS; the test endpoints then need an HTTPS client.
    /// `arguments` go to the server as they are (`--keys-dir`, `--team` for the migration endpoints).
    init(maxAge: Int = 3600, tls: (certificate: String, key: String)? = nil, arguments: [String] = []) throws {
        self.tls = tls != nil
        running = try Tool.start(try AppleTools.python(), [fixture("apple_server.py"), "--port", "0", "--max-age", String(maxAge)]
                                 + (tls.map { ["--tls-cert", $0.certificate, "--tls-key", $0.key] } ?? []) + arguments)
        guard let line = try Self.waitForLine(in: running, prefix: "PORT "), let port = UInt16(line.dropFirst(5)) else {
            running.process.terminate()
            throw XCTSkip("the Apple fixture server did not start: \((try? String(contentsOf: running.err, encoding: .utf8)) ?? "")")
        }
        self.port = port
    }

    deinit {
        running.process.terminate()
        running.process.waitUntilExit()
    }

    /// The first stdout line of `running` that starts with `prefix` (waits up to 15 s).
    static func waitForLine(in running: CLI.Running, prefix: String) throws -> String? {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let text = (try? String(contentsOf: running.out, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains(prefix) }) { return String(line) }
            if !running.process.isRunning { return nil }
            usleep(50_000)
        }
        return nil
    }

    /// One HTTP request over a real socket.
    static func request(port: UInt16, method: String, path: String, body: [UInt8] = [], contentType: String = "application/json") throws -> RawResponse {
        let client = try RawHTTPClient(port: port)
        try client.send("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n")
        if !body.isEmpty { try client.send(body) }
        return try client.readResponse()
    }

    func get(_ path: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(try Self.request(port: port, method: "GET", path: path).body))
    }

    /// A notification body whose token names key `kid` (signed by the fixture's Apple key).
    func signed(kid: String, type: String, sub: String, jti: String) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let events = String(decoding: try JSONSerialization.data(withJSONObject: ["type": type, "sub": sub, "event_time": now * 1000]), as: UTF8.self)
        let claims: [String: Any] = ["iss": "https://appleid.apple.com", "aud": "com.example.web", "iat": now, "exp": now + 300, "jti": jti, "events": events]
        let request = try JSONSerialization.data(withJSONObject: ["claims": claims, "kid": kid])
        let answer = try Self.request(port: port, method: "POST", path: "/test/sign", body: [UInt8](request))
        let token = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])?["token"] as? String)
        return "{\"payload\": \"\(token)\"}"
    }

    /// A notification body as Apple POSTs it, `{"payload": "<JWT>"}`, signed by the fixture's Apple key (or by a key
    /// that is not in its JWKS: `key: "other"`).
    func notification(type: String, sub: String, jti: String, aud: String = "com.example.web", iat: Int? = nil, exp: Int? = nil,
                      email: String? = nil, eventsAsObject: Bool = false, key: String = "apple") throws -> (body: String, token: String) {
        let now = Int(Date().timeIntervalSince1970)
        var events: [String: Any] = ["type": type, "sub": sub, "event_time": now * 1000]
        if let email { events["email"] = email; events["is_private_email"] = "true" }
        let eventsValue: Any = eventsAsObject ? events : String(decoding: try JSONSerialization.data(withJSONObject: events, options: [.sortedKeys]), as: UTF8.self)
        let claims: [String: Any] = ["iss": "https://appleid.apple.com", "aud": aud, "iat": iat ?? now, "exp": exp ?? now + 300, "jti": jti, "events": eventsValue]
        let request = try JSONSerialization.data(withJSONObject: ["claims": claims, "key": key])
        let answer = try Self.request(port: port, method: "POST", path: "/test/sign", body: [UInt8](request))
        let token = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])?["token"] as? String)
        return ("{\"payload\": \"\(token)\"}", token)
    }
}

/// A store with one Apple user for the lifecycle tests, on one engine.
struct AppleLifecycleStore {
    let store: TestStore
    let cli: CLI

    /// Initialises the store, configures the Apple client ids, and adds user `uA` (Apple account `001234.apple`, with
    /// `refreshToken`, two sessions) and user `uB` (Apple account `005678.apple` and a Google account, one session).
    init(_ engine: TestStore.Engine, scratch: Scratch, apple: AppleServerFixture, refreshToken: String = "r-token-never-shown-1") throws {
        store = try TestStore.make(engine, in: scratch)
        var cli = CLI()
        cli.environment = TestStore.environment.merging(["GATEHOUSE_APPLE_BASE_URL": apple.baseURL]) { $1 }
        self.cli = cli
        try check(cli.run(["init", "--store", store.location]))
        try check(cli.run(["providers", "set", "apple", "--services-id", "com.example.web", "--bundle-id", "com.example.app", "--team-id", "TEAM123456", "--store", store.location]))
        let t = "2026-01-01T00:00:00.000Z", later = "2030-01-01T00:00:00.000Z"
        let inserted = try store.query("""
            INSERT INTO "user" ("id", "name", "email", "emailVerified", "createdAt", "updatedAt") VALUES
              ('uA', 'Ana', 'ana@privaterelay.appleid.com', true, '\(t)', '\(t)'), ('uB', 'Bo', 'bo@example.com', true, '\(t)', '\(t)');
            INSERT INTO "account" ("id", "issuer", "accountId", "providerId", "userId", "refreshToken", "createdAt", "updatedAt") VALUES
              ('acA', 'https://appleid.apple.com', '001234.apple', 'apple', 'uA', '\(refreshToken)', '\(t)', '\(t)'),
              ('acB', 'https://appleid.apple.com', '005678.apple', 'apple', 'uB', NULL, '\(t)', '\(t)'),
              ('acG', 'https://accounts.google.com', 'g-1', 'google', 'uB', NULL, '\(t)', '\(t)');
            INSERT INTO "session" ("id", "expiresAt", "token", "createdAt", "updatedAt", "userId") VALUES
              ('s1', '\(later)', 'st1', '\(t)', '\(t)', 'uA'), ('s2', '\(later)', 'st2', '\(t)', '\(t)', 'uA'), ('s3', '\(later)', 'st3', '\(t)', '\(t)', 'uB');
            SELECT 'ok';
            """)
        XCTAssertTrue(inserted.hasSuffix("ok"), inserted)
    }

    @discardableResult
    func run(_ arguments: [String], status: Int32 = 0, environment: [String: String] = [:], stdin: String? = nil,
             file: StaticString = #filePath, line: UInt = #line) throws -> CLI.Result {
        var cli = self.cli
        cli.environment.merge(environment) { $1 }
        let result = try cli.run(arguments + ["--store", store.location], stdin: stdin)
        XCTAssertEqual(result.status, status, "gatehouse \(arguments.joined(separator: " ")) [\(store.engine)]: \(result.all.prefix(3000))", file: file, line: line)
        return result
    }

    /// Imports and activates a fresh .p8, for minting client secrets.
    func activateKey(in scratch: Scratch) throws {
        let path = try AppleTools.p256Key("ABCDEFGHIJ", in: scratch.url.path)
        try run(["apple", "key", "import", path])
        try run(["apple", "key", "activate", "ABCDEFGHIJ"])
    }
}

private func check(_ result: CLI.Result, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(result.status, 0, result.all, file: file, line: line)
}

/// Values collected from several threads at once.
final class Collected<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Value] = []
    func append(_ value: Value) { lock.lock(); items.append(value); lock.unlock() }
    var values: [Value] { lock.lock(); defer { lock.unlock() }; return items }
}
