import Foundation
import XCTest
@testable import Gatehouse
import Storage

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
