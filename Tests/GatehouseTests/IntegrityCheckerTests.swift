@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// `accounts check`: a store holding each problem, and each problem found.
final class IntegrityCheckerTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    func counts(_ report: IntegrityReport) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: report.findings.map { ($0.code, $0.count) })
    }

    func testACleanSeededStoreHasOnlyUnprovisionedUsers() throws {
        let (store, _) = try Store.initialize(path: scratch.path("clean.sqlite"), actor: tester)
        _ = try DemoSeeder(seed: 2, anchor: Timestamp(iso8601: "2026-01-01T00:00:00Z")!).seed(store, users: 400)
        let report = try IntegrityChecker(store: store).run()
        let unprovisioned = Int(try store.db.scalar(#"SELECT count(*) FROM "user" u WHERE NOT EXISTS (SELECT 1 FROM users s WHERE s.sub = 'better_auth|' || u.id)"#).int64 ?? -1)
        XCTAssertGreaterThan(unprovisioned, 0)
        XCTAssertEqual(counts(report), ["account_user_missing": 0, "user_without_accounts": 0, "sync_sub_malformed": 0, "sync_sub_user_missing": 0,
                                        "user_unprovisioned": unprovisioned, "duplicate_provider_account": 0, "session_user_missing": 0])
        XCTAssertEqual(report.findings.first { $0.code == "user_unprovisioned" }?.samples.count, min(5, unprovisioned))
        XCTAssertEqual(report.missingIndexes, [])
        XCTAssertEqual(report.skipped, [])
    }

    func testEveryProblemIsFound() throws {
        let path = scratch.path("broken.sqlite")
        let (store, _) = try Store.initialize(path: path, actor: tester)
        let now = "2026-01-01T00:00:00.000Z"
        let db = store.db
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.execute(#"INSERT INTO "user" (id, name, email, emailVerified, createdAt, updatedAt) VALUES ('ok', 'Ok', 'ok@example.com', 1, ?, ?), ('lonely', 'Lonely', 'lonely@example.com', 1, ?, ?)"#, [now, now, now, now])
        try db.execute(#"INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES ('a-ok', 'https://accounts.google.com', 'g1', 'google', 'ok', ?, ?), ('a-orphan', 'https://appleid.apple.com', 'x1', 'apple', 'ghost', ?, ?)"#, [now, now, now, now])
        try db.execute(#"INSERT INTO session (id, expiresAt, token, createdAt, updatedAt, userId) VALUES ('s-orphan', ?, 't1', ?, ?, 'ghost2'), ('s-ok', ?, 't2', ?, ?, 'ok')"#, [now, now, now, now, now, now])
        try db.execute("INSERT INTO users (sub, created_at) VALUES ('better_auth|ok', ?), ('auth0|abc', ?), ('better_auth|', ?), ('better_auth|ghost', ?)", [now, now, now, now])
        try db.execute("PRAGMA foreign_keys = ON")
        let report = try IntegrityChecker(store: store).run()
        XCTAssertEqual(counts(report), ["account_user_missing": 1, "user_without_accounts": 1, "sync_sub_malformed": 2, "sync_sub_user_missing": 1,
                                        "user_unprovisioned": 1, "duplicate_provider_account": 0, "session_user_missing": 1])
        let samples = Dictionary(uniqueKeysWithValues: report.findings.map { ($0.code, $0.samples.joined(separator: "\n")) })
        XCTAssertTrue(samples["account_user_missing"]!.contains("a-orphan") && samples["account_user_missing"]!.contains("ghost"))
        XCTAssertTrue(samples["user_without_accounts"]!.contains("lonely"))
        XCTAssertTrue(samples["sync_sub_malformed"]!.contains("auth0|abc"))
        XCTAssertTrue(samples["sync_sub_user_missing"]!.contains("better_auth|ghost"))
        XCTAssertTrue(samples["user_unprovisioned"]!.contains("lonely"))
        XCTAssertTrue(samples["session_user_missing"]!.contains("s-orphan"))
        XCTAssertFalse(samples.values.joined().contains("t1"), "no session token in samples")
        XCTAssertFalse(report.isClean)
    }

    func testDuplicateProviderAccountsOnADatabaseWithoutTheUniqueIndex() throws {
        let path = scratch.path("ba15.sqlite")
        try Fixtures.database("better-auth-1.5.sql", at: path)
        let (store, _) = try Store.initialize(path: path, actor: tester)
        try store.db.execute(#"INSERT INTO account (id, accountId, providerId, userId, createdAt, updatedAt) VALUES ('dup', '104857600000000000001', 'google', 'u2BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', '2025-03-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z')"#)
        let report = try IntegrityChecker(store: store).run()
        let duplicate = try XCTUnwrap(report.findings.first { $0.code == "duplicate_provider_account" })
        XCTAssertEqual(duplicate.count, 1)
        XCTAssertTrue(duplicate.samples[0].contains("google account 104857600000000000001 ×2"), duplicate.samples[0])
        XCTAssertTrue(duplicate.samples[0].contains("u1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") && duplicate.samples[0].contains("u2BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"))
        XCTAssertEqual(counts(report)["user_unprovisioned"], 2)
        // init added the lookup index even where Better Auth 1.5 had no unique one.
        XCTAssertEqual(report.missingIndexes, [])
    }

    func testEachShapeRunsEveryCheck() throws {
        for fixture in ["drizzle-ms.sql", "drizzle-seconds.sql"] {
            let path = scratch.path(fixture + ".sqlite")
            try Fixtures.database(fixture, at: path)
            let (store, _) = try Store.initialize(path: path, actor: tester)
            let report = try IntegrityChecker(store: store).run()
            XCTAssertEqual(report.findings.count, 7, fixture)
            XCTAssertEqual(counts(report)["user_unprovisioned"], 1, fixture)
            XCTAssertEqual(counts(report)["account_user_missing"], 0, fixture)
        }
    }
}

/// The sorted merge behind `accounts check` agrees with the SQL anti-joins it replaces.
final class IntegrityMergeScanTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    /// Every finding with all its rows as samples, samples sorted: comparable across scan orders.
    func everything(_ store: Store, merge: Bool) throws -> [String: [String]] {
        var checker = IntegrityChecker(store: store)
        checker.sampleLimit = 10_000
        checker.usesMergeScan = merge
        let report = try checker.run()
        return Dictionary(uniqueKeysWithValues: report.findings.map { ("\($0.code) ×\($0.count)", $0.samples.sorted()) })
    }

    /// Problems spread through the id order: before the first user, between users, after the last, and
    /// ids that share a prefix (`u1`, `u10`), so that the merge must compare bytes, not lengths.
    func brokenStore() throws -> Store {
        let (store, _) = try Store.initialize(path: scratch.path("interleaved.sqlite"), actor: tester)
        try store.db.execute("PRAGMA foreign_keys = OFF")
        try Self.insertBrokenRows(store.db)
        try store.db.execute("PRAGMA foreign_keys = ON")
        return store
    }

    /// The rows of `brokenStore`, into a store whose foreign keys are off.
    static func insertBrokenRows(_ db: SQLDatabase) throws {
        let now = "2026-01-01T00:00:00.000Z"
        let users = ["u1", "u10", "u100", "u2", "u3", "u5", "u50", "u9", "é-user", "Z"]
        for id in users {
            try db.execute(#"INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt") VALUES (?, ?, ?, true, ?, ?)"#, [id, id, "\(id)@example.com", now, now])
        }
        let accountOwners = ["0-ghost", "u1", "u1", "u100", "u11", "u3", "u4", "u50", "u50", "u6", "é-user", "zz-ghost", "zz-ghost"]
        for (n, owner) in accountOwners.enumerated() {
            try db.execute(#"INSERT INTO account (id, issuer, "accountId", "providerId", "userId", "createdAt", "updatedAt") VALUES (?, 'https://accounts.google.com', ?, 'google', ?, ?, ?)"#,
                           ["a\(n)", "g\(n)", owner, now, now])
        }
        let sessionOwners = ["", "u1", "u1", "u12", "u2", "u7", "u9", "é-user", "é", "zzz"]
        for (n, owner) in sessionOwners.enumerated() {
            try db.execute(#"INSERT INTO session (id, "expiresAt", token, "createdAt", "updatedAt", "userId") VALUES (?, ?, ?, ?, ?, ?)"#, ["s\(n)", now, "t\(n)", now, now, owner])
        }
        let subs = ["auth0|x", "better_auth", "better_auth|", "better_auth|0", "better_auth|u1", "better_auth|u10", "better_auth|u1000",
                    "better_auth|u3", "better_auth|u4", "better_auth|é-user", "better_auth|Z", "better_auth}", "zzz"]
        for sub in subs { try db.execute("INSERT INTO users (sub, created_at) VALUES (?, ?)", [sub, now]) }
    }

    static let brokenCounts = ["account_user_missing": 6, "user_without_accounts": 5, "sync_sub_malformed": 5, "sync_sub_user_missing": 3,
                               "user_unprovisioned": 5, "duplicate_provider_account": 0, "session_user_missing": 5]

    func testTheMergeAgreesWithTheAntiJoins() throws {
        let store = try brokenStore()
        let merged = try everything(store, merge: true), joined = try everything(store, merge: false)
        XCTAssertEqual(merged, joined)
        let counts = Dictionary(uniqueKeysWithValues: try IntegrityChecker(store: store).run().findings.map { ($0.code, $0.count) })
        XCTAssertEqual(counts, Self.brokenCounts)
    }

    func testAKeyThatIsNotTextFallsBackToTheAntiJoins() throws {
        let store = try brokenStore()
        try store.db.execute("PRAGMA foreign_keys = OFF")
        try store.db.execute(#"INSERT INTO session (id, expiresAt, token, createdAt, updatedAt, userId) VALUES ('blob', 'x', 'tb', 'x', 'x', X'7531')"#)
        let scan = IntegrityMergeScan(db: store.db, schema: store.schema, sampleLimit: 5)
        XCTAssertThrowsError(try scan.sessions()) { error in
            XCTAssertTrue(error is IndexOrderUnavailable, "\(error)")
        }
        XCTAssertEqual(try scan.accountsAndSubs(withSync: true)["account_user_missing"]?.count, 6)
        let merged = try everything(store, merge: true), joined = try everything(store, merge: false)
        XCTAssertEqual(merged, joined)
        XCTAssertNotNil(merged.keys.first { $0 == "session_user_missing ×6" })
    }

    func testByteOrderIsSQLiteBinaryCollation() {
        XCTAssertLessThan(ByteOrder.compare(Array("u1".utf8), Array("u10".utf8)), 0)
        XCTAssertLessThan(ByteOrder.compare(Array("Z".utf8), Array("a".utf8)), 0)
        XCTAssertLessThan(ByteOrder.compare(Array("z".utf8), Array("é".utf8)), 0)
        XCTAssertEqual(ByteOrder.compare(Array("better_auth|u1".utf8), from: 12, Array("u1".utf8)), 0)
        XCTAssertGreaterThan(ByteOrder.compare(Array("better_auth|u10".utf8), from: 12, Array("u1".utf8)), 0)
        XCTAssertEqual(ByteOrder.compare(Array("".utf8), Array("".utf8)), 0)
        // Swift's String order treats canonically equivalent text as equal; SQLite (and the merge) does not.
        XCTAssertNotEqual(ByteOrder.compare(Array("e\u{301}".utf8), Array("\u{e9}".utf8)), 0)
    }
}

/// `accounts check` on Postgres (`PostgresIntegrityPlan`) finds what it finds on SQLite, samples included, on the
/// same dirty rows: a store whose foreign keys were added `NOT VALID` over rows that break them.
final class PostgresIntegrityTests: XCTestCase {
    private var database: PostgresTestDatabase!

    override func setUpWithError() throws { database = try PostgresTestDatabase.make("gh_check") }

    override func tearDown() { database?.drop() }

    /// Every finding with up to `limit` samples, in the order found (`sorted`: in Swift's order instead).
    private func findings(_ store: Store, limit: Int, sorted: Bool = false) throws -> [String] {
        var checker = IntegrityChecker(store: store)
        checker.sampleLimit = limit
        return try checker.run().findings.map { "\($0.code) ×\($0.count): \((sorted ? $0.samples.sorted() : $0.samples).joined(separator: " | "))" }
    }

    /// The Postgres store and a SQLite store holding the same dirt: the keys dropped, rows written, the keys declared
    /// again without checking (`alter` runs between, on the Postgres store without its keys).
    private func dirtyStores(alter: (SQLDatabase) throws -> Void = { _ in }) throws -> (postgres: Store, sqlite: Store, scratch: Scratch) {
        let (store, _) = try Store.initialize(path: database.uri, actor: tester)
        let keys = try store.db.rows("""
            SELECT conname, conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint
            WHERE contype = 'f' AND confrelid = '"user"'::regclass
            """).map { ($0[0].string ?? "", $0[1].string ?? "", $0[2].string ?? "") }
        XCTAssertEqual(keys.count, 2, "\(keys)")
        for (name, table, _) in keys { try store.db.execute("ALTER TABLE \(table) DROP CONSTRAINT \(SQL.quote(name))") }
        try alter(store.db)
        try IntegrityMergeScanTests.insertBrokenRows(store.db)
        for (name, table, definition) in keys {
            try store.db.execute("ALTER TABLE \(table) ADD CONSTRAINT \(SQL.quote(name)) \(definition) NOT VALID")
        }
        let scratch = try Scratch()
        let (sqlite, _) = try Store.initialize(path: scratch.path("same.sqlite"), actor: tester)
        try sqlite.db.execute("PRAGMA foreign_keys = OFF")
        try IntegrityMergeScanTests.insertBrokenRows(sqlite.db)
        return (store, sqlite, scratch)
    }

    func testTheSameFindingsAndSamplesAsOnSQLiteAlsoOnAStandby() throws {
        let (store, sqlite, _) = try dirtyStores()
        // Before any ANALYZE the sub links are one range; after it, a range between each two bounds of the ids'
        // histogram, the samples gathered across them in key order.
        XCTAssertEqual(try SyncLinkRanges.read(store.db, schema: store.schema).count, 1)
        XCTAssertEqual(try findings(store, limit: 10_000), try findings(sqlite, limit: 10_000))
        try store.db.execute("ANALYZE")
        let ranges = try SyncLinkRanges.read(store.db, schema: store.schema)
        XCTAssertTrue(ranges.byteOrdered)
        XCTAssertGreaterThan(ranges.count, 5)

        let counts = Dictionary(uniqueKeysWithValues: try IntegrityChecker(store: store).run().findings.map { ($0.code, $0.count) })
        XCTAssertEqual(counts, IntegrityMergeScanTests.brokenCounts)
        for limit in [1, 2, 5, 10_000] {
            XCTAssertEqual(try findings(store, limit: limit), try findings(sqlite, limit: limit), "limit \(limit)")
        }
        // A standby exports no snapshot: every check runs on the one connection, with the same answers.
        try database.admin.executeScript("ALTER DATABASE \(database.name) SET default_transaction_read_only = on")
        let standby = try Store.open(path: database.uri)
        XCTAssertEqual(try findings(standby, limit: 5), try findings(sqlite, limit: 5))
    }

    /// Subs in an order that is not their bytes' (ICU's): a range of ids is no longer a range of subs, so the sub
    /// links are one join of every id, and the malformed subs a scan of them all; the findings are SQLite's.
    func testSubsInALinguisticOrderAreJoinedInOneRange() throws {
        let (store, sqlite, _) = try dirtyStores { db in
            try db.execute(#"ALTER TABLE users ALTER COLUMN sub TYPE text COLLATE "und-x-icu""#)
        }
        try store.db.execute("ANALYZE")
        let ranges = try SyncLinkRanges.read(store.db, schema: store.schema)
        XCTAssertFalse(ranges.byteOrdered)
        XCTAssertEqual(ranges.count, 1)
        let counts = Dictionary(uniqueKeysWithValues: try IntegrityChecker(store: store).run().findings.map { ($0.code, $0.count) })
        XCTAssertEqual(counts, IntegrityMergeScanTests.brokenCounts)
        XCTAssertEqual(try findings(store, limit: 10_000, sorted: true), try findings(sqlite, limit: 10_000, sorted: true))
    }
}
