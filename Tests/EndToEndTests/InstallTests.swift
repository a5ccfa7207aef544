import Foundation
import HTTPTestSupport
import XCTest

/// One copied binary is a working install: no source tree, no environment variable, no folder beside it.
final class InstallTests: XCTestCase {
    /// The binary copied into a scratch folder, run with an empty environment from that folder.
    struct Copied {
        let scratch: Scratch
        let binary: String
        var environment: [String: String] { ["PATH": "/usr/bin:/bin", "HOME": scratch.path("home")] }

        init() throws {
            scratch = try Scratch()
            try FileManager.default.createDirectory(atPath: scratch.path("home"), withIntermediateDirectories: true)
            binary = scratch.path("gatehouse")
            try FileManager.default.copyItem(atPath: CLI.binary, toPath: binary)
        }

        func run(_ arguments: [String], extra: [String: String] = [:]) throws -> CLI.Result {
            try Tool.run(binary, arguments, environment: environment.merging(extra) { $1 }, in: scratch.url.path)
        }
    }

    func sha256(_ path: String) throws -> String {
        String(try Tool.run("/usr/bin/sha256sum", [path]).stdout.prefix(64))
    }

    func testCopiedBinaryInitialisesAStoreWithTheShippedMigrations() throws {
        let copy = try Copied()
        let store = copy.scratch.path("auth.sqlite")
        let result = try copy.run(["init", "--store", store])
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertTrue(result.stdout.contains("applied 0009_gates"), result.stdout)
        let recorded = try sqlite3(store, "SELECT name || ' ' || checksum FROM gatehouse_migrations ORDER BY id;")
        var expected: [String] = []
        let folder = CLI.packageRoot.appendingPathComponent("migrations/sqlite").path
        for name in try FileManager.default.contentsOfDirectory(atPath: folder).filter({ $0.hasSuffix(".sql") }).sorted() {
            expected.append(String(name.dropLast(4)) + " " + (try sha256(folder + "/" + name)))
        }
        XCTAssertEqual(recorded, expected.joined(separator: "\n"), "the embedded migrations carry the files' checksums")
    }

    func testMigrationsVariableStillOverridesTheEmbeddedCopy() throws {
        let copy = try Copied()
        let migrations = copy.scratch.path("migrations")
        try FileManager.default.copyItem(atPath: CLI.packageRoot.appendingPathComponent("migrations").path, toPath: migrations)
        let edited = migrations + "/sqlite/0009_gates.sql"
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: edited))
        handle.seekToEndOfFile()
        handle.write(Data("-- edited for a test\n".utf8))
        try handle.close()
        let store = copy.scratch.path("auth.sqlite")
        let result = try copy.run(["init", "--store", store], extra: ["GATEHOUSE_MIGRATIONS": migrations])
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertEqual(try sqlite3(store, "SELECT checksum FROM gatehouse_migrations WHERE id = 9;"), try sha256(edited))
    }

    func testCopiedBinaryServesTheConsoleAndLogsIn() throws {
        let copy = try Copied()
        let store = copy.scratch.path("auth.sqlite")
        try "a long enough password\n".write(toFile: copy.scratch.path("pw"), atomically: true, encoding: .utf8)
        let initialised = try copy.run(["init", "--store", store, "--admin", "ops", "--admin-password-file", copy.scratch.path("pw")])
        XCTAssertEqual(initialised.status, 0, initialised.all)
        let server = try Tool.start(copy.binary, ["serve", "--store", store, "--listen", "127.0.0.1:0"],
                                    environment: copy.environment, in: copy.scratch.url.path)
        defer { kill(server.process.processIdentifier, SIGTERM); _ = try? server.finish() }
        var url: String?
        for _ in 0..<200 where url == nil {
            Thread.sleep(forTimeInterval: 0.05)
            let printed = (try? String(contentsOf: server.out, encoding: .utf8)) ?? ""
            url = printed.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }.map(String.init)
        }
        let base = try XCTUnwrap(url, "serve printed no URL: \((try? String(contentsOf: server.err, encoding: .utf8)) ?? "")")
        let port = try XCTUnwrap(UInt16(base.dropFirst("http://127.0.0.1:".count).dropLast()))
        for (path, file) in [("/", "Public/index.html"), ("/js/app.js", "Public/js/app.js"), ("/console.css", "Public/console.css")] {
            let client = try RawHTTPClient(port: port)
            try client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200, path)
            XCTAssertEqual(response.body, Array(try Data(contentsOf: CLI.packageRoot.appendingPathComponent(file))), path)
        }
        let login = #"{"username":"ops","password":"a long enough password"}"#
        let client = try RawHTTPClient(port: port)
        try client.send("POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: \(login.utf8.count)\r\nConnection: close\r\n\r\n\(login)")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 200, response.bodyText)
        let tokens = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        XCTAssertNotNil(tokens?["accessToken"] as? String, response.bodyText)
    }

    func testVersionNamesTheVersionCommitAndBuildDate() throws {
        let text = try CLI().run(["--version"])
        XCTAssertEqual(text.status, 0)
        let json = try CLI().run(["--version", "--json"])
        XCTAssertEqual(json.status, 0, json.all)
        let fields = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: String], json.stdout)
        XCTAssertEqual(Set(fields.keys), ["version", "commit", "buildDate"])
        let version = try XCTUnwrap(fields["version"]), commit = try XCTUnwrap(fields["commit"]), date = try XCTUnwrap(fields["buildDate"])
        XCTAssertEqual(text.stdout, "gatehouse \(version) (commit \(commit), built \(date))\n")
        XCTAssertTrue(commit == "unknown" || (commit.count == 40 && commit.allSatisfy(\.isHexDigit)), commit)
        XCTAssertNotNil(date.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression), date)
    }
}
