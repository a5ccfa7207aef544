@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

final class StoreInitTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    func testNewStoreHasBetterAuth17Schema() throws {
        let (store, report) = try Store.initialize(path: scratch.path("new.sqlite"), actor: tester)
        XCTAssertTrue(report.created)
        XCTAssertEqual(Array(report.applied.prefix(3)), ["0001_better_auth_core", "0002_sync_server", "0003_gatehouse_audit"])
        XCTAssertEqual(report.applied.count, try MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: "sqlite")).migrations.count)
        XCTAssertTrue(store.schema.hasIssuer)
        let index = try store.db.scalar("SELECT sql FROM sqlite_master WHERE name = 'account_issuer_accountId_uidx'").string
        XCTAssertEqual(index, #"CREATE UNIQUE INDEX "account_issuer_accountId_uidx" on "account" ("issuer", "accountId")"#)
        XCTAssertNotNil(report.masterKeyCreated)
        let mode = try FileManager.default.attributesOfItem(atPath: scratch.path("new.sqlite.key"))[.posixPermissions] as? NSNumber
        XCTAssertEqual(mode?.intValue, 0o600)
        XCTAssertEqual(try store.audit.entries(store.db).first?.action, "store.init")
    }

    func testInitIsIdempotent() throws {
        _ = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester)
        let (store, report) = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester)
        XCTAssertFalse(report.created)
        XCTAssertEqual(report.applied, [])
        XCTAssertEqual(try store.audit.entries(store.db).count, 1)
    }

    /// Each existing shape: Gatehouse adds its tables and leaves Better Auth's schema and rows untouched.
    func testExistingDatabasesAreUpgradedWithoutTouchingBetterAuth() throws {
        let cases: [(String, String, Bool, DateEncoding)] = [
            ("better-auth-1.5.sql", "Better Auth 1.4–1.6 (no account.issuer)", false, .isoText),
            ("drizzle-ms.sql", "Better Auth 1.7 (account.issuer), dates as epoch milliseconds, snake_case columns", true, .epochMilliseconds),
            ("drizzle-seconds.sql", "Better Auth 1.4–1.6 (no account.issuer), dates as epoch seconds", false, .epochSeconds),
        ]
        for (fixture, shape, issuer, encoding) in cases {
            let path = scratch.path(fixture + ".sqlite")
            try Fixtures.database(fixture, at: path)
            let before = try SQLiteDatabase(path: path)
            let tables = ["user", "session", "account", "verification"]
            let rowsBefore = try dump(before, tables: tables), schemaBefore = try ddl(before, tables: tables)
            let (store, report) = try Store.initialize(path: path, actor: tester)
            XCTAssertEqual(report.skipped, ["0001_better_auth_core"], fixture)
            XCTAssertEqual(report.shape, shape, fixture)
            XCTAssertEqual(store.schema.hasIssuer, issuer, fixture)
            XCTAssertEqual(store.schema.user.encoding(.createdAt), encoding, fixture)
            XCTAssertEqual(try dump(store.db, tables: tables), rowsBefore, fixture)
            XCTAssertEqual(try ddl(store.db, tables: tables), schemaBefore, fixture)
            XCTAssertTrue(try store.db.tableExists("gatehouse_audit"), fixture)
            XCTAssertTrue(try store.db.tableExists("users"), fixture)
        }
    }

    func testSeederWritesEachColumnInItsOwnEncoding() throws {
        for fixture in ["drizzle-ms.sql", "drizzle-seconds.sql", "better-auth-1.5.sql"] {
            let path = scratch.path(fixture + ".seeded.sqlite")
            try Fixtures.database(fixture, at: path)
            let (store, _) = try Store.initialize(path: path, actor: tester)
            _ = try DemoSeeder(seed: 3, anchor: Timestamp(milliseconds: 1_764_460_800_000)).seed(store, users: 50)
            let user = store.schema.user
            let types = try store.db.rows("SELECT DISTINCT typeof(\(user.col(.createdAt))) FROM \(user.sql)").compactMap { $0[0].string }
            XCTAssertEqual(types, user.encoding(.createdAt) == .isoText ? ["text"] : ["integer"], fixture)
            if user.encoding(.createdAt) == .epochSeconds {
                XCTAssertLessThan(try store.db.scalar("SELECT max(\(user.col(.createdAt))) FROM \(user.sql)").int64 ?? 0, 10_000_000_000, fixture)
            }
            XCTAssertEqual(try store.db.rows("PRAGMA foreign_key_check").count, 0, fixture)
        }
    }

    func testMissingColumnsAreReportedAndNothingChanges() throws {
        let path = scratch.path("missing.sqlite")
        try Fixtures.database("missing-column.sql", at: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try Store.initialize(path: path, actor: tester)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains(#"table "user" has no column "emailVerified""#), text)
            XCTAssertTrue(text.contains(#"table "account" has no column "providerId""#), text)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), bytes)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".key"))
    }

    func testRenamedTablesThroughConfiguration() throws {
        let path = scratch.path("renamed.sqlite")
        try Fixtures.database("renamed-tables.sql", at: path)
        XCTAssertThrowsError(try Store.initialize(path: path, actor: tester), "without the mapping, the user table is missing")
        let config = Fixtures.directory.appendingPathComponent("renamed-tables.json").path
        let (store, report) = try Store.initialize(path: path, configurationPath: config, actor: tester)
        XCTAssertEqual(report.skipped, ["0001_better_auth_core"])
        XCTAssertEqual(store.schema.user.name, "auth_user")
        XCTAssertFalse(try store.db.tableExists("user"))
        let reopened = try Store.open(path: path, configurationPath: config)
        XCTAssertEqual(try StoreStatus.read(reopened).counts["users"], 1)
    }

    func testConfigurationRejectsUnknownKeysAndTables() {
        XCTAssertThrowsError(try StoreConfiguration.parse(Data(#"{"tabels": {}}"#.utf8), source: "c.json")) {
            XCTAssertTrue("\($0)".contains("unknown key \"tabels\""))
        }
        XCTAssertThrowsError(try StoreConfiguration.parse(Data(#"{"tables": {"users": "x"}}"#.utf8), source: "c.json")) {
            XCTAssertTrue("\($0)".contains("valid names: user, session, account, verification"))
        }
        XCTAssertThrowsError(try StoreConfiguration.parse(Data("not json".utf8), source: "c.json"))
    }

    func testOpenRefusesStoresThatAreNotReady() throws {
        XCTAssertThrowsError(try Store.open(path: scratch.path("absent.sqlite"))) {
            XCTAssertTrue(onCommandLine($0).contains("gatehouse init --store"), onCommandLine($0))
        }
        let bare = scratch.path("bare.sqlite")
        try Fixtures.database("better-auth-1.5.sql", at: bare)
        XCTAssertThrowsError(try Store.open(path: bare)) { XCTAssertTrue("\($0)".contains("not a Gatehouse store yet")) }
        let text = scratch.path("text.sqlite")
        try String(repeating: "hello\n", count: 200).write(toFile: text, atomically: true, encoding: .utf8)
        // Storage's error comes through as it is; the front ends put it into words with operatorFacing.
        XCTAssertThrowsError(try Store.open(path: text)) {
            XCTAssertTrue($0 is DatabaseError, "\($0)")
            XCTAssertTrue(GatehouseError.operatorFacing($0).map(String.init(describing:))?.contains("not a SQLite database") ?? false, "\($0)")
        }
        let truncated = scratch.path("truncated.sqlite")
        try Data(repeating: 0, count: 100).write(to: URL(fileURLWithPath: truncated))
        XCTAssertThrowsError(try Store.open(path: truncated)) { XCTAssertTrue("\($0)".contains("truncated")) }
    }

    func testEditedMigrationIsRefusedOnOpen() throws {
        let path = scratch.path("s.sqlite")
        _ = try Store.initialize(path: path, actor: tester)
        let copy = scratch.path("migrations")
        try FileManager.default.copyItem(atPath: try ResourceLocator.migrationsDirectory(for: "sqlite"), toPath: copy)
        try (try String(contentsOfFile: copy + "/0002_sync_server.sql", encoding: .utf8) + "\n-- edited\n")
            .write(toFile: copy + "/0002_sync_server.sql", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try Store.open(path: path, migrations: MigrationCatalog.load(directory: copy))) {
            XCTAssertTrue("\($0)".contains("migration 2 (0002_sync_server) was edited"), "\($0)")
        }
    }

    func testCatalogRefusesGapsAndBadNames() throws {
        let dir = scratch.path("m")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "SELECT 1;".write(toFile: dir + "/0001_a.sql", atomically: true, encoding: .utf8)
        try "SELECT 1;".write(toFile: dir + "/0003_c.sql", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try MigrationCatalog.load(directory: dir)) { XCTAssertTrue("\($0)".contains("gap")) }
        try "SELECT 1;".write(toFile: dir + "/0002-b.sql", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try MigrationCatalog.load(directory: dir)) { XCTAssertTrue("\($0)".contains("NNNN_name.sql")) }
    }

    func testSeedingIsDeterministic() throws {
        let anchor = Timestamp(milliseconds: 1_764_460_800_000)
        var dumps: [[String]] = []
        for name in ["a.sqlite", "b.sqlite"] {
            let (store, _) = try Store.initialize(path: scratch.path(name), actor: tester)
            let report = try DemoSeeder(seed: 42, anchor: anchor).seed(store, users: 400)
            XCTAssertEqual(report.users, 400)
            dumps.append(try dump(store.db, tables: ["user", "account", "session", "users", "workspaces", "subscriptions"]))
        }
        XCTAssertEqual(dumps[0], dumps[1])
    }

    func testSeededDataLooksLikeBetterAuths() throws {
        let (store, _) = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester)
        let report = try DemoSeeder(seed: 7, anchor: Timestamp(milliseconds: 1_764_460_800_000)).seed(store, users: 3000)
        let db = store.db
        XCTAssertEqual(try db.scalar(#"SELECT count(*) FROM "user" WHERE length(id) != 32 OR id GLOB '*[^A-Za-z0-9]*'"#).int64, 0)
        XCTAssertEqual(try db.scalar(#"SELECT count(*) FROM "user" WHERE email != lower(email)"#).int64, 0)
        XCTAssertEqual(try db.scalar(#"SELECT count(*) FROM "user" WHERE "emailVerified" NOT IN (0, 1)"#).int64, 0)
        XCTAssertEqual(try db.scalar(#"SELECT count(*) FROM "user" WHERE "createdAt" NOT GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'"#).int64, 0)
        let apple = try db.scalar(#"SELECT count(DISTINCT "userId") FROM account WHERE "providerId" = 'apple'"#).int64 ?? 0
        let relay = try db.scalar(#"SELECT count(*) FROM "user" WHERE email LIKE '%@privaterelay.appleid.com'"#).int64 ?? 0
        XCTAssertGreaterThan(Double(relay) / Double(apple), 0.25)
        XCTAssertLessThan(Double(relay) / Double(apple), 0.6)
        XCTAssertEqual(try db.scalar("SELECT count(*) FROM account WHERE issuer NOT IN ('local:credential', 'https://appleid.apple.com', 'https://accounts.google.com')").int64, 0)
        let split = Double(report.splitIdentities * 2) / Double(report.users)
        XCTAssertGreaterThan(split, 0.02)
        XCTAssertLessThan(split, 0.15)
        let unprovisioned = try db.scalar(#"SELECT count(*) FROM "user" u WHERE NOT EXISTS (SELECT 1 FROM users s WHERE s.sub = 'better_auth|' || u.id)"#).int64 ?? 0
        XCTAssertGreaterThan(unprovisioned, 0)
        XCTAssertLessThan(Double(unprovisioned) / Double(report.users), 0.06)
        XCTAssertEqual(try db.rows("PRAGMA foreign_key_check").count, 0)
    }
}
