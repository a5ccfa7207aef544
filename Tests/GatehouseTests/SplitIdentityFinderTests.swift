@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// `users duplicates`: the seeded split identities are found, with reasons, and merged users are left out.
final class SplitIdentityFinderTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    let anchor = Timestamp(iso8601: "2026-01-01T00:00:00Z")!

    /// Pairs the seeder made as split identities: an Apple user with a relay email, then a Google user
    /// with the same name 2 to 21 days later.
    func seededSplits(_ store: Store) throws -> Set<[String]> {
        let u = store.schema.user, a = store.schema.account
        var pairs = Set<[String]>()
        var relayApple: [String: [(String, Timestamp)]] = [:]
        var googleByName: [String: [(String, Timestamp)]] = [:]
        try store.db.forEach("SELECT u.\(u.col(.id)), u.\(u.col(.name)), u.\(u.col(.email)), u.\(u.col(.createdAt)), x.\(a.col(.providerId)) FROM \(u.sql) u JOIN \(a.sql) x ON x.\(a.col(.userId)) = u.\(u.col(.id))") { row in
            let id = row[0].string!, name = row[1].string!, email = row[2].string!, created = DateEncoding.decode(row[3])!, provider = row[4].string!
            if provider == "apple" && email.hasSuffix("@privaterelay.appleid.com") { relayApple[name, default: []].append((id, created)) }
            if provider == "google" { googleByName[name, default: []].append((id, created)) }
        }
        for (name, apples) in relayApple {
            for (apple, appleCreated) in apples {
                for (google, googleCreated) in googleByName[name] ?? [] {
                    let gap = googleCreated.milliseconds - appleCreated.milliseconds
                    if gap >= 2 * 86_400_000 && gap <= 21 * 86_400_000 { pairs.insert([apple, google]) }
                }
            }
        }
        return pairs
    }

    func testFindsTheSeededSplitIdentitiesOnEveryShape() throws {
        for fixture in ["better-auth-1.5.sql", "drizzle-ms.sql", "drizzle-seconds.sql", nil] {
            let path = scratch.path("\(fixture ?? "fresh")-seeded.sqlite")
            if let fixture { try Fixtures.database(fixture, at: path) }
            let (store, _) = try Store.initialize(path: path, actor: tester)
            let seeded = try DemoSeeder(seed: 21, anchor: anchor).seed(store, users: 1500)
            let expected = try seededSplits(store)
            XCTAssertGreaterThanOrEqual(expected.count, seeded.splitIdentities, fixture ?? "fresh")
            let report = try SplitIdentityFinder(store: store).find(minScore: 0.7, limit: 10_000)
            let found = Set(report.candidates.map { [$0.earlier.id.rawValue, $0.later.id.rawValue] })
            XCTAssertEqual(expected.subtracting(found), [], "\(fixture ?? "fresh"): missed splits")
            XCTAssertEqual(report.usersScanned, try store.db.scalar("SELECT count(*) FROM \(store.schema.user.sql)").int64.map(Int.init))
            // Precision: the seeded splits are most of what is proposed.
            XCTAssertGreaterThanOrEqual(Double(expected.count) / Double(max(1, report.pairsFound)), 0.7, "\(fixture ?? "fresh"): \(report.pairsFound) pairs for \(expected.count) splits")
            for candidate in report.candidates {
                XCTAssertGreaterThanOrEqual(candidate.score, 0.7)
                XCTAssertEqual(candidate.score, Double(min(100, candidate.reasons.map(\.points).reduce(0, +))) / 100, accuracy: 0.0001)
                XCTAssertEqual(candidate.reasons.map(\.points), candidate.reasons.map(\.points).sorted(by: >), "reasons best first")
                XCTAssertLessThanOrEqual(candidate.earlier.createdAt!, candidate.later.createdAt!)
            }
            let scores = report.candidates.map(\.score)
            XCTAssertEqual(scores, scores.sorted(by: >), "pairs best first")
            let typical = try XCTUnwrap(report.candidates.first { expected.contains([$0.earlier.id.rawValue, $0.later.id.rawValue]) })
            XCTAssertTrue(typical.earlier.privateRelay)
            XCTAssertEqual(typical.earlier.providers, ["apple"])
            XCTAssertEqual(typical.later.providers, ["google"])
            XCTAssertTrue(Set(typical.reasons.map(\.code)).isSuperset(of: ["name_match", "created_close", "relay_pair"]), "\(typical.reasons)")
        }
    }

    func testFixturePairNeedsALowerThresholdAndExplainsWhy() throws {
        let path = scratch.path("ba15.sqlite")
        try Fixtures.database("better-auth-1.5.sql", at: path)
        let (store, _) = try Store.initialize(path: path, actor: tester)
        // Ana Costa twice, 31 days apart, no shared session: a name and a relay/real pair only.
        XCTAssertEqual(try SplitIdentityFinder(store: store).find().candidates, [])
        let report = try SplitIdentityFinder(store: store).find(minScore: 0.5)
        XCTAssertEqual(report.candidates.count, 1)
        let pair = report.candidates[0]
        XCTAssertEqual(pair.score, 0.55, accuracy: 0.0001)
        XCTAssertEqual(pair.earlier.id.rawValue, "u1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
        XCTAssertEqual(pair.reasons.map(\.code), ["name_match", "relay_pair"])
        // A wider window makes the creation times count.
        XCTAssertEqual(try SplitIdentityFinder(store: store).find(windowDays: 40).candidates.first?.score ?? 0, 0.70, accuracy: 0.0001)
        XCTAssertThrowsError(try SplitIdentityFinder(store: store).find(minScore: 1.5))
        XCTAssertThrowsError(try SplitIdentityFinder(store: store).find(minScore: .nan))
    }

    func testSameMailboxAtTwoDomainsAndSharedIPsBeyondTheWindow() throws {
        let (store, _) = try Store.initialize(path: scratch.path("hand.sqlite"), actor: tester)
        let db = store.db
        func user(_ id: String, _ name: String, _ email: String, _ created: String) throws {
            try db.execute(#"INSERT INTO "user" (id, name, email, emailVerified, createdAt, updatedAt) VALUES (?, ?, ?, 1, ?, ?)"#, [id, name, email, created, created])
            try db.execute(#"INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES (?, 'https://accounts.google.com', ?, 'google', ?, ?, ?)"#,
                           ["acc-" + id, "g-" + id, id, created, created])
        }
        func session(_ id: String, _ user: String, _ ip: String) throws {
            try db.execute(#"INSERT INTO session (id, expiresAt, token, createdAt, updatedAt, ipAddress, userAgent, userId) VALUES (?, '2030-01-01T00:00:00.000Z', ?, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z', ?, 'UA', ?)"#,
                           [id, "tok-" + id, ip, user])
        }
        // Different display names, same mailbox at two domains, created a week apart.
        try user("m1", "Sam", "sam.okafor@gmail.com", "2025-03-01T00:00:00.000Z")
        try user("m2", "Samuel Okafor", "sam.okafor@outlook.com", "2025-03-08T00:00:00.000Z")
        // Same name, a year apart, but sessions from one address.
        try user("p1", "Priya Raman", "priya.r@gmail.com", "2024-01-01T00:00:00.000Z")
        try user("p2", "Priya  RAMAN", "pr@proton.me", "2025-01-01T00:00:00.000Z")
        try session("s1", "p1", "98.207.1.2")
        try session("s2", "p2", "98.207.1.2")
        // Same name, a year apart, nothing else: not proposed.
        try user("n1", "Noah Kim", "noah1@gmail.com", "2024-01-01T00:00:00.000Z")
        try user("n2", "Noah Kim", "noah2@gmail.com", "2025-01-01T00:00:00.000Z")
        let report = try SplitIdentityFinder(store: store).find(minScore: 0.45)
        let byPair = Dictionary(uniqueKeysWithValues: report.candidates.map { ([$0.earlier.id.rawValue, $0.later.id.rawValue], $0) })
        XCTAssertEqual(byPair[["m1", "m2"]]?.reasons.map(\.code), ["same_mailbox", "created_close"])
        XCTAssertEqual(byPair[["p1", "p2"]]?.reasons.map(\.code), ["name_match", "shared_ip", "shared_user_agent"])
        XCTAssertTrue(byPair[["p1", "p2"]]?.reasons[1].detail.contains("98.207.1.2") ?? false)
        XCTAssertNil(byPair[["n1", "n2"]])
        // A long user agent is cut at a word's end, and says so.
        let agent = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
        XCTAssertEqual(SplitIdentityFinder.shortened(agent, to: 80), "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like…")
        XCTAssertEqual(SplitIdentityFinder.shortened("curl/8.0", to: 80), "curl/8.0")
        XCTAssertEqual(SplitIdentityFinder.shortened(String(repeating: "x", count: 90), to: 80), String(repeating: "x", count: 80) + "…")

        // One user's twins, asked from either side, are the scan's pairs for that user, with the same reasons.
        let finder = SplitIdentityFinder(store: store)
        for (asked, twin) in [("m1", "m2"), ("m2", "m1"), ("p1", "p2"), ("p2", "p1")] {
            let twins = try finder.twins(of: BetterAuthUserID(asked), minScore: 0.45)
            XCTAssertEqual(twins.map { [$0.earlier.id.rawValue, $0.later.id.rawValue].filter { $0 != asked } }, [[twin]], asked)
            XCTAssertEqual(twins.first, byPair[[asked, twin].sorted()], asked)
        }
        XCTAssertEqual(try finder.twins(of: BetterAuthUserID("n1"), minScore: 0.45), [])
        XCTAssertEqual(try finder.twins(of: BetterAuthUserID("n1"), minScore: 0.4).map(\.later.id.rawValue), ["n2"], "the name alone: 40 points")
        XCTAssertEqual(try finder.twins(of: BetterAuthUserID("nobody")), [])
    }

    func testUsersInAMergeRecordAreNeverProposed() throws {
        let (store, _) = try Store.initialize(path: scratch.path("merged.sqlite"), actor: tester)
        _ = try DemoSeeder(seed: 4, anchor: anchor).seed(store, users: 600)
        let before = try SplitIdentityFinder(store: store).find(limit: 1000)
        XCTAssertTrue(before.mergeRecordsChecked)
        XCTAssertEqual(before.usersExcludedAsMerged, 0)
        let pair = try XCTUnwrap(before.candidates.first)
        try recordMerge(store.db, source: pair.later.id.rawValue, target: "someone-else")
        let after = try SplitIdentityFinder(store: store).find(limit: 1000)
        XCTAssertTrue(after.mergeRecordsChecked)
        XCTAssertEqual(after.usersExcludedAsMerged, 1)
        XCTAssertFalse(after.candidates.contains { [$0.earlier.id, $0.later.id].contains(pair.later.id) })
        XCTAssertEqual(after.candidates.count, before.candidates.count - before.candidates.filter { [$0.earlier.id, $0.later.id].contains(pair.later.id) }.count)
    }
}

/// The ASCII fast paths of the duplicates scan give exactly the keys of the general path.
final class SplitIdentityKeyTests: XCTestCase {
    func testASCIINameKeysMatchTheGeneralNormalizer() {
        let names = ["", " ", "Ana Costa", "  ana   COSTA ", "O'Brien-Smith", "o`brien smith", "J.R.R. Tolkien", "a%_b", "x,y", "\t\nTab\u{7f}",
                     "---", "'", "A1 b2", "Zoë", "José  O'Brien-García"]
        for name in names {
            var normalizer = NameNormalizer()
            let general = normalizer.bytes(name)
            let expected: UInt64 = general.isEmpty ? 0 : FNV1a.hash(general)
            if name.utf8.allSatisfy({ $0 < 0x80 }) {
                XCTAssertEqual(NameNormalizer.asciiKey(name), expected, name)
            } else {
                XCTAssertNil(NameNormalizer.asciiKey(name), name)
            }
            XCTAssertEqual(normalizer.key(name), expected, name)
        }
    }

    func testASCIIEmailKeysMatchEmailAddress() {
        let emails = ["", "@", "a@", "@b.com", "ana.costa@gmail.com", "Ana.Costa+news@Gmail.COM", "+tag@x.com", "ab@x.com", "abc@x.com",
                      "x@y@z.com", "abc123@PrivateRelay.AppleID.com", "abc@private.icloud.com", "abc@icloud.com", "no-at-sign",
                      "anna+@x.org", "José@exemple.fr", "user@exämple.de"]
        for email in emails {
            let expected = EmailKeys(address: EmailAddress(email))
            XCTAssertEqual(EmailKeys(email), expected, email)
            if email.utf8.allSatisfy({ $0 < 0x80 }) {
                XCTAssertEqual(EmailKeys.ascii(email), expected, email)
            } else {
                XCTAssertNil(EmailKeys.ascii(email), email)
            }
        }
    }

    func testCreationTimesReadInPlaceMatchDateEncoding() {
        let values: [SQLValue] = [.text("2026-11-30T03:48:03.123Z"), .text("1999-02-28T23:59:60.999Z"), .text("2026-13-01T00:00:00.000Z"),
                                  .text("2026-11-30T24:00:00.000Z"), .text("2026-11-30 03:48:03.123Z"), .text("2026-11-30T03:48:03Z"),
                                  .text("2026-11-30T03:48:03.12Z"), .text("0001-01-01T00:00:00.000Z"), .text("+026-11-30T03:48:03.123Z"),
                                  .text("1764474483123"), .integer(1_764_474_483), .integer(1_764_474_483_123), .null, .text("")]
        for value in values {
            XCTAssertEqual(SplitIdentityScan.createdMilliseconds(value), DateEncoding.decode(value)?.milliseconds ?? SplitIdentityScan.unknownTime, "\(value)")
        }
    }

    func testUserKeyTableBehavesLikeADictionary() {
        var table = UserKeyTable(capacity: 4) // grows past its capacity
        var dictionary: [UInt64: Int32] = [:]
        for n in 0..<1000 {
            let key = FNV1a.hash("user-\(n % 700)")
            table.set(key, Int32(n))
            dictionary[key] = Int32(n)
        }
        for n in 0..<800 {
            let key = FNV1a.hash("user-\(n)")
            XCTAssertEqual(table.value(key), dictionary[key], "user-\(n)")
        }
    }
}
