import Foundation
import XCTest
@testable import Console
import Gatehouse
import HTTPTestSupport

/// A console on a free loopback port over a small seeded store, torn down after the test.
final class ConsoleHarness {
    let directory: URL
    let storePath: String
    let console: ConsoleServer
    var port: UInt16 { console.port }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    init(users: Int = 50) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-console-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        storePath = directory.appendingPathComponent("console.sqlite").path
        let (store, _) = try Store.initialize(path: storePath, actor: Actor("tester"))
        _ = try DemoSeeder(seed: 1, anchor: Timestamp(milliseconds: 1_764_460_800_000)).seed(store, users: users)
        console = try ConsoleServer(options: .init(storePath: storePath, publicDirectory: Self.packageRoot.appendingPathComponent("Public").path,
                                                   port: 0, threads: 2, logRequests: false))
        try console.start()
    }

    deinit {
        console.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Sends raw request text (with `\r\n` line ends) and reads the response.
    func exchange(_ request: String) throws -> RawResponse {
        let client = try RawHTTPClient(port: port)
        try client.send(request)
        return try client.readResponse(hasBody: !request.hasPrefix("HEAD "))
    }

    /// A GET with the right Host header.
    func get(_ path: String, host: String? = nil) throws -> RawResponse {
        try exchange("GET \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: close\r\n\r\n")
    }

    func json(_ response: RawResponse) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }
}
