import Foundation
import XCTest

/// `gatehouse init` on databases as they are found: rows that break their foreign keys (SQLite enforces none
/// unless a connection asks), damaged pages, sealed keys whose master key file is gone. Init upgrades what it
/// can and, when it refuses, leaves the file byte for byte as it was.
final class DirtyStoreInitTests: XCTestCase {
    let cli = CLI()
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    /// One Better Auth shape: where its tables come from and how its columns and dates are spelt.
    struct Shape {
        let name: String
        let sql: String
        var prefix = ""
        var snake = false
        var issuer = true
        var date = "'2025-01-02T03:04:05.678Z'"
        var config: String? = nil
    }

    var shapes: [Shape] {
        get throws {
            let core = try String(contentsOfFile: CLI.packageRoot.appendingPathComponent("migrations/sqlite/0001_better_auth_core.sql").path, encoding: .utf8)
            func file(_ name: String) throws -> String { try String(contentsOfFile: fixture(name), encoding: .utf8) }
            return [
                Shape(name: "Better Auth 1.7", sql: core),
                Shape(name: "Better Auth 1.4–1.6", sql: try file("better-auth-1.5.sql"), issuer: false),
                Shape(name: "Drizzle snake_case, epoch ms", sql: try file("drizzle-ms.sql"), snake: true, date: "1735787045678"),
                Shape(name: "Drizzle camelCase, epoch s", sql: try file("drizzle-seconds.sql"), issuer: false, date: "1735787045"),
                Shape(name: "renamed tables", sql: try file("renamed-tables.sql"), prefix: "auth_", config: fixture("renamed-tables.json")),
            ]
        }
    }

    /// An account and a session whose users do not exist, written with foreign keys off as most drivers do.
    func danglingRows(_ shape: Shape) -> String {
        func column(_ camel: String) -> String {
            guard shape.snake else { return "\"\(camel)\"" }
            return "\"" + camel.reduce(into: "") { out, char in out += char.isUppercase ? "_" + char.lowercased() : String(char) } + "\""
        }
        let d = shape.date
        let issuer = shape.issuer ? "\"issuer\", " : ""
        let issuerValue = shape.issuer ? "'https://accounts.google.com', " : ""
        return """
            PRAGMA foreign_keys = OFF;
            INSERT INTO "\(shape.prefix)account" ("id", \(issuer)\(column("accountId")), \(column("providerId")), \(column("userId")), \(column("createdAt")), \(column("updatedAt")))
                VALUES ('danglingAccountAAAAAAAAAAAAAAAAA', \(issuerValue)'1099999', 'google', 'ghostUserAAAAAAAAAAAAAAAAAAAAAAA', \(d), \(d));
            INSERT INTO "\(shape.prefix)session" ("id", \(column("expiresAt")), "token", \(column("createdAt")), \(column("updatedAt")), \(column("userId")))
                VALUES ('danglingSessionAAAAAAAAAAAAAAAAA', \(d), 'ghost-token', \(d), \(d), 'deletedUserAAAAAAAAAAAAAAAAAAAAA');
            """
    }

    func testInitAcceptsEveryShapeWithDanglingRowsAndLeavesThemForTheChecks() throws {
        for (index, shape) in try shapes.enumerated() {
            let store = scratch.path("shape\(index).sqlite")
            _ = try sqlite3(store, shape.sql + "\n" + danglingRows(shape))
            XCTAssertEqual(try sqlite3(store, "PRAGMA foreign_key_check;").split(separator: "\n").count, 2, shape.name)
            let config = shape.config.map { ["--config", $0] } ?? []
            let result = try cli.run(["init", "--store", store] + config)
            XCTAssertEqual(result.status, 0, "\(shape.name): \(result.all)")
            XCTAssertTrue(result.stdout.contains("switched the journal from delete to WAL"), "\(shape.name): \(result.stdout)")
            // The dirt is still there, untouched, and reported by the checks made for it.
            XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM \"\(shape.prefix)account\" WHERE id = 'danglingAccountAAAAAAAAAAAAAAAAA';"), "1", shape.name)
            let check = try cli.run(["accounts", "check", "--json", "--store", store] + config)
            XCTAssertTrue(check.stdout.contains("danglingAccountAAAAAAAAAAAAAAAAA"), "\(shape.name): \(check.all)")
            // A second init has nothing to do and still succeeds.
            let again = try cli.run(["init", "--store", store] + config)
            XCTAssertEqual(again.status, 0, "\(shape.name): \(again.all)")
            XCTAssertTrue(again.stdout.contains("already up to date"), "\(shape.name): \(again.stdout)")
        }
    }

    func testRefusedInitLeavesTheFileByteForByte() throws {
        let store = scratch.path("missing.sqlite")
        _ = try sqlite3(store, try String(contentsOfFile: fixture("missing-column.sql"), encoding: .utf8))
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let result = try cli.run(["init", "--store", store])
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "a refused init changed the file")
        XCTAssertFalse(FileManager.default.fileExists(atPath: store + "-wal"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: store + ".key"), "a refused init created a master key")
    }

    func testDamagedStoreIsReportedNotUpgraded() throws {
        let store = scratch.path("damaged.sqlite")
        // Enough rows for several pages, then one page of the user table overwritten with noise.
        _ = try sqlite3(store, try String(contentsOfFile: fixture("better-auth-1.5.sql"), encoding: .utf8) + """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
            INSERT INTO "user" SELECT 'u' || printf('%031d', i), 'Person ' || i, 'p' || i || '@example.com', 1, NULL, '2025-01-01', '2025-01-01' FROM n;
            """)
        let root = Int(try sqlite3(store, "SELECT rootpage FROM sqlite_master WHERE name = 'user';"))!
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store))
        try handle.seek(toOffset: UInt64((root - 1) * 4096))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 4096))
        try handle.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let result = try cli.run(["init", "--store", store])
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertTrue(result.stderr.contains("is damaged"), result.stderr)
        XCTAssertTrue(result.stderr.contains("restore it from a backup"), result.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before)
    }

    func testInitRefusesToMintANewMasterKeyOverSealedKeys() throws {
        let store = scratch.path("keys.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        let key = try AppleTools.p256Key("ABCDE12345", in: scratch.url.path)
        let imported = try cli.run(["apple", "key", "import", key, "--team-id", "TEAM123456", "--store", store])
        XCTAssertEqual(imported.status, 0, imported.all)
        let keyFile = store + ".key"
        let backup = try Data(contentsOf: URL(fileURLWithPath: keyFile))
        try FileManager.default.removeItem(atPath: keyFile)
        let before = try sqlite3(store, "SELECT count(*), group_concat(id) FROM gatehouse_audit;")
        let result = try cli.run(["init", "--store", store])
        XCTAssertEqual(result.status, 1, result.all)
        XCTAssertTrue(result.stderr.contains("master key file \(keyFile) is missing"), result.stderr)
        XCTAssertTrue(result.stderr.contains("restore \(keyFile) from the backup"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: keyFile), "init created a new key that cannot open the sealed one")
        XCTAssertEqual(try sqlite3(store, "SELECT count(*), group_concat(id) FROM gatehouse_audit;"), before)
        // Restored from backup, everything works again.
        try backup.write(to: URL(fileURLWithPath: keyFile))
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        let list = try cli.run(["apple", "key", "list", "--store", store])
        XCTAssertEqual(list.status, 0, list.all)
        XCTAssertTrue(list.stdout.contains("ABCDE12345"), list.stdout)
    }
}
