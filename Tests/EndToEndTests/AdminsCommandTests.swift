import Foundation
import XCTest
import HTTPTestSupport

/// `gatehouse admins` and `gatehouse init --admin` as an operator meets them: the built binary.
final class AdminsCommandTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    func passwordFile(_ text: String, name: String = "pw") throws -> String {
        let path = scratch.path(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testInitCreatesTheFirstAdminFromAPasswordFileOnce() throws {
        let store = scratch.path("s.sqlite")
        let secret = "first-admin-password-42"
        let result = try cli.run(["init", "--store", store, "--admin", "ops", "--admin-password-file", try passwordFile(secret + "\n")])
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertTrue(result.stdout.contains("created the console admin ops (role admin)"), result.stdout)
        XCTAssertFalse(result.all.contains(secret))
        let list = try cli.run(["admins", "list", "--store", store, "--json"])
        let admins = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(admins.map { $0["username"] as? String }, ["ops"])
        XCTAssertEqual(admins.first?["role"] as? String, "admin")
        XCTAssertFalse(list.stdout.contains("pbkdf2"), "the hash is never listed")
        // The hash is PBKDF2-SHA256 at 600,000 iterations, and the password is nowhere in the store.
        XCTAssertTrue(try sqlite3(store, "SELECT password_hash FROM gatehouse_admins").hasPrefix("pbkdf2-sha256$600000$"))
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_audit WHERE details LIKE '%\(secret)%' OR subject LIKE '%\(secret)%'"), "0")
        XCTAssertFalse(try Data(contentsOf: URL(fileURLWithPath: store)).range(of: Data(secret.utf8)) != nil)
        // A second init creates no admin.
        let again = try cli.run(["init", "--store", store, "--admin", "someone"])
        XCTAssertEqual(again.status, 0)
        XCTAssertTrue(again.stdout.contains("already has console admins"), again.stdout)
        XCTAssertEqual(try sqlite3(store, "SELECT group_concat(username) FROM gatehouse_admins"), "ops")
    }

    func testInitWithoutAFileGeneratesAndPrintsThePasswordOnce() throws {
        let store = scratch.path("s.sqlite")
        let result = try cli.run(["init", "--store", store, "--json"])
        XCTAssertEqual(result.status, 0, result.all)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let admin = try XCTUnwrap(report["admin"] as? [String: Any])
        XCTAssertEqual(admin["username"] as? String, "admin")
        let generated = try XCTUnwrap(admin["generatedPassword"] as? String)
        XCTAssertEqual(generated.count, 24)
        let audit = try cli.run(["audit", "--store", store, "--json"])
        XCTAssertTrue(audit.stdout.contains("admin.add"))
        XCTAssertFalse(audit.stdout.contains(generated))
    }

    func testInitRefusesBadAdminInputBeforeTouchingTheStore() throws {
        let store = scratch.path("s.sqlite")
        let short = try cli.run(["init", "--store", store, "--admin-password-file", try passwordFile("short\n")])
        XCTAssertEqual(short.status, 1)
        XCTAssertTrue(short.stderr.contains("at least 12"), short.stderr)
        XCTAssertFalse(short.stderr.contains("short\n"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: store))
        let badName = try cli.run(["init", "--store", store, "--admin", "Robert'); DROP TABLE--"])
        XCTAssertEqual(badName.status, 1)
        XCTAssertTrue(badName.stderr.contains("is not a valid admin username"), badName.stderr)
        let missing = try cli.run(["init", "--store", store, "--admin-password-file", scratch.path("nope")])
        XCTAssertEqual(missing.status, 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store))
    }

    func testAddListPasswdDisableEnableRemove() throws {
        for engine in TestStore.engines { try addListPasswdDisableEnableRemove(engine) }
    }

    func addListPasswdDisableEnableRemove(_ engine: TestStore.Engine) throws {
        let cli = CLI(environment: TestStore.environment)
        let testStore = try TestStore.make(engine, in: scratch, name: "admins-\(engine)")
        defer { testStore.drop() }
        let store = testStore.location
        XCTAssertEqual(try cli.run(["init", "--store", store, "--admin-password-file", try passwordFile("root-password-123456")]).status, 0)
        let added = try cli.run(["admins", "add", "alice", "--role", "support", "--store", store, "--actor", "ops-bob"])
        XCTAssertEqual(added.status, 0, "\(engine): \(added.all)")
        XCTAssertTrue(added.stdout.hasPrefix("Added admin alice (support)\nPassword for alice (shown once"), added.stdout)
        let generated = try XCTUnwrap(added.stdout.split(separator: "\n").last?.trimmingCharacters(in: .whitespaces))
        XCTAssertEqual(generated.count, 24)
        XCTAssertEqual(try cli.run(["admins", "add", "bob", "--store", store, "--password-file", try passwordFile("bob-password-1234", name: "bob")]).stdout,
                       "Added admin bob (viewer)\n")
        let list = try cli.run(["admins", "--store", store])
        XCTAssertEqual(list.status, 0)
        XCTAssertTrue(list.stdout.hasPrefix("USERNAME  ROLE     STATUS   CREATED"), list.stdout)
        XCTAssertTrue(list.stdout.contains("alice     support  enabled"), list.stdout)
        XCTAssertTrue(list.stdout.contains("bob       viewer   enabled"), list.stdout)

        XCTAssertEqual(try cli.run(["admins", "add", "alice", "--store", store]).status, 1, "duplicate")
        XCTAssertEqual(try cli.run(["admins", "add", "carol", "--role", "god", "--store", store]).status, 1)
        XCTAssertEqual(try cli.run(["admins", "add", "--store", store]).status, 2, "USER is required")

        let passwd = try cli.run(["admins", "passwd", "alice", "--store", store, "--password-file", try passwordFile("alice-new-password-99", name: "alice")])
        XCTAssertEqual(passwd.stdout, "Changed the password of alice; their console sessions have ended\n")
        let disabled = try cli.run(["admins", "disable", "alice", "--store", store])
        XCTAssertEqual(disabled.stdout, "Disabled alice; their console sessions have ended\n", "\(engine): \(disabled.all)")
        XCTAssertTrue(try cli.run(["admins", "list", "--store", store]).stdout.contains("alice     support  disabled"))
        let enabled = try cli.run(["admins", "enable", "alice", "--store", store])
        XCTAssertEqual(enabled.stdout, "Enabled alice\n", "\(engine): \(enabled.all)")
        XCTAssertEqual(try cli.run(["admins", "remove", "bob", "--store", store]).stdout, "Removed bob\n")
        XCTAssertEqual(try cli.run(["admins", "remove", "bob", "--store", store]).status, 1)

        // The last enabled admin cannot be disabled or removed.
        let last = try cli.run(["admins", "remove", "admin", "--store", store])
        XCTAssertEqual(last.status, 1)
        XCTAssertTrue(last.stderr.contains("only enabled admin with the admin role"), last.stderr)
        XCTAssertEqual(try cli.run(["admins", "disable", "admin", "--store", store]).status, 1)

        let audit = try cli.run(["audit", "--store", store, "--action", "admin.*", "--json"])
        let entries = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(entries.compactMap { $0["action"] as? String }.reversed(),
                       ["admin.add", "admin.add", "admin.add", "admin.passwd", "admin.disable", "admin.enable", "admin.remove"])
        XCTAssertEqual(entries.last { $0["subject"] as? String == "alice" }?["actor"] as? String, "ops-bob")
        for secret in [generated, "alice-new-password-99", "bob-password-1234", "root-password-123456"] {
            XCTAssertFalse(audit.stdout.contains(secret))
        }
    }

    func testPasswordsFromStdinAndHelp() throws {
        let store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store, "--admin-password-file", "-"], stdin: "from-stdin-password-1\n").status, 0)
        let help = try cli.run(["admins", "--help"])
        XCTAssertEqual(help.status, 0)
        for word in ["add", "list", "passwd", "disable", "enable", "remove", "viewer", "support", "admin"] {
            XCTAssertTrue(help.stdout.contains(word), word)
        }
    }
}

/// `gatehouse admins unthrottle` against a console that locked an admin's login.
final class AdminsUnthrottleTests: XCTestCase {
    let cli = CLI()

    func testUnthrottleLiftsALockedLoginAndIsAudited() throws {
        let scratch = try Scratch()
        let store = scratch.path("s.sqlite")
        let passwordFile = scratch.path("pw")
        let password = "the ops password, long enough"
        try password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(try cli.run(["init", "--store", store, "--admin", "ops", "--admin-password-file", passwordFile]).status, 0)
        let console = try cli.start(["serve", "--store", store, "--listen", "127.0.0.1:0", "-q"])
        defer { kill(console.process.processIdentifier, SIGTERM); _ = try? console.finish() }
        var port: UInt16?
        for _ in 0..<100 where port == nil {
            Thread.sleep(forTimeInterval: 0.05)
            let printed = (try? String(contentsOf: console.out, encoding: .utf8)) ?? ""
            port = printed.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }
                .flatMap { UInt16($0.dropFirst("http://127.0.0.1:".count).dropLast()) }
        }
        let consolePort = try XCTUnwrap(port, "serve printed no URL")
        func login(_ username: String, _ password: String) throws -> Int {
            let body = #"{"username":"\#(username)","password":"\#(password)"}"#
            let client = try RawHTTPClient(port: consolePort)
            try client.send("POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1:\(consolePort)\r\nContent-Type: application/json\r\n"
                            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
            return try client.readResponse(timeout: 30).status
        }
        for attempt in 1...5 { XCTAssertEqual(try login("ops", "wrong guess \(attempt)"), 401) }
        XCTAssertEqual(try login("ops", password), 429, "locked")

        let help = try cli.run(["admins", "unthrottle", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("usage: gatehouse admins unthrottle") && help.stdout.contains("--all"), help.stdout)
        let neither = try cli.run(["admins", "unthrottle", "--store", store])
        XCTAssertEqual(neither.status, 2, neither.all)
        XCTAssertTrue(neither.stderr.contains("or --all"), neither.stderr)
        XCTAssertEqual(try cli.run(["admins", "unthrottle", "ops", "--all", "--store", store]).status, 2)

        let lifted = try cli.run(["admins", "unthrottle", "ops", "--store", store, "--json", "--actor", "ops-bob"])
        XCTAssertEqual(lifted.status, 0, lifted.all)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lifted.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["username"] as? String, "ops")
        let scopes = try XCTUnwrap(report["lifted"] as? [[String: Any]])
        XCTAssertEqual(scopes.count, 1)
        XCTAssertEqual(scopes.first?["failures"] as? Int, 5)
        XCTAssertNotNil(scopes.first?["lockedUntil"] as? String)
        XCTAssertEqual(try login("ops", password), 200, "the lock is lifted")
        XCTAssertEqual(try sqlite3(store, "SELECT actor || ' ' || subject FROM gatehouse_audit WHERE action = 'admin.unthrottle'"), "ops-bob ops")

        let again = try cli.run(["admins", "unthrottle", "ops", "--store", store])
        XCTAssertEqual(again.stdout, "ops had no failed logins on record; nothing to lift\n", again.all)
        for _ in 1...3 { XCTAssertEqual(try login("someone.else", "guess"), 401) }
        let all = try cli.run(["admins", "unthrottle", "--all", "--store", store])
        XCTAssertEqual(all.status, 0, all.all)
        XCTAssertTrue(all.stdout.hasPrefix("Lifted 2 login throttle(s), 0 of them locked"), all.stdout)
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_login_failures"), "0")
    }
}
