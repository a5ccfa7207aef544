@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// Every demo person's addresses are theirs alone by construction (`DemoPeople`), for any count: a random
/// Hide My Email address would meet an earlier person's at person 5,683,810, and `demo seed --users 10000000`
/// would stop at 5,908,000 users with "UNIQUE constraint failed: user.email".
final class DemoPeopleTests: XCTestCase {
    /// A relay address is its person's number in disguise: undoing it gives the number back, so two numbers never
    /// share one. Checked across the random collision point, the ten-million boundary of a seed's block, a hundred
    /// million, numbers past every block (seeds of more than ten million) and the last number the addresses hold.
    func testRelayAddressesAreOneToOne() {
        let ranges = [1..<40_000, 5_660_000..<5_700_000, 9_990_000..<10_010_000, 99_990_000..<100_010_000,
                      10_000_000_000..<10_000_020_000, Int(DemoPeople.modulus) - 10_000..<Int(DemoPeople.modulus)]
        var wrong: [Int] = [], seen = Set<[UInt8]>(), count = 0
        for range in ranges {
            for number in range {
                let local = DemoPeople.relayLocalPart(of: number)
                if DemoPeople.number(ofRelay: local) != number, wrong.count < 5 { wrong.append(number) }
                seen.insert(local)
                count += 1
            }
        }
        XCTAssertEqual(wrong, [], "these numbers' addresses do not give them back")
        XCTAssertEqual(seen.count, count, "two numbers share an address")
        // Ten letters and digits, as Apple's relay addresses look; the same as an independent computation (Python's
        // integers, the map written out from its description) gives.
        XCTAssertEqual(DemoPeople.relayAddress(of: 1), "lojxm4af8a@privaterelay.appleid.com")
        XCTAssertEqual(DemoPeople.relayAddress(of: 5_683_810), "ub48xdwy38@privaterelay.appleid.com")
        XCTAssertEqual(DemoPeople.relayAddress(of: 100_000_000), "hbhunl1xlm@privaterelay.appleid.com")
        XCTAssertNil(DemoPeople.number(ofRelay: Array("ABCDEFGHIJ".utf8)))
    }

    /// A person's number is one-to-one in (seed block, position): the first ten million of a block read as they always
    /// did (`block × 10,000,000 + position`), and positions past ten million leave every block's range instead of
    /// running into the next seed's.
    func testPersonNumbersAreOneToOneBeyondTenMillion() {
        XCTAssertEqual(DemoPeople.number(block: 0, position: 1), 1)
        XCTAssertEqual(DemoPeople.number(block: 2, position: 300), 20_000_300)
        var seen = Set<Int>(), count = 0, wrong: [String] = []
        for block in [0, 1, 2, 500, 998, 999] {
            for position in Array(1...2_000) + Array(9_998_000...10_002_000) + Array(99_999_000...100_001_000) + [1_000_000_000, 3_000_000_000] {
                let number = DemoPeople.number(block: block, position: position)
                let place = DemoPeople.place(of: number)
                if place.block != block || place.position != position, wrong.count < 5 { wrong.append("\(block)/\(position)") }
                seen.insert(number)
                count += 1
            }
        }
        XCTAssertEqual(wrong, [])
        XCTAssertEqual(seen.count, count)
        // Seed 1 (block 0) past ten million does not reach seed 2's first person.
        XCTAssertNotEqual(DemoPeople.number(block: 0, position: 10_000_001), DemoPeople.number(block: 1, position: 1))
    }

    /// The generator itself, for people numbered across the random collision point (a store that held 5,682,000 users):
    /// every email is distinct and names its own person — a relay address gives its person's number back, any other
    /// ends in it — where random relay addresses would be draws that name nobody. Every other value
    /// a unique column holds is distinct too (ids and tokens count in their first six characters).
    func testTheGeneratorsEmailsAcrossTheOldCollisionPointNameTheirPerson() throws {
        let scratch = try Scratch()
        let (store, _) = try Store.initialize(path: scratch.path("layout.sqlite"), actor: Actor("tester"))
        let layout = SeedLayout(schema: store.schema)
        let seeder = DemoSeeder(seed: 1, anchor: Timestamp(iso8601: "2026-01-01T00:00:00Z")!)
        let queue = BoundedQueue<DemoSeeder.Batch>(capacity: 100)
        let first = 5_682_000, count = 8_000
        seeder.build(count: count, firstPerson: first, round: 0, layout: layout, into: queue)
        let slot = try XCTUnwrap(layout.users.slot(.email))
        var emails: [String] = []
        /// Each unique column's values: ids of every table, session tokens, provider account ids.
        var unique: [String: [String]] = [:]
        func collect(_ name: String, _ rows: [SQLValue], _ columns: SeedColumns, _ field: AuthSchema.Field) {
            guard let slot = columns.slot(field) else { return }
            for start in stride(from: 0, to: rows.count, by: columns.width) { unique[name, default: []].append(rows[start + slot].string ?? "") }
        }
        while let batch = queue.pop() {
            for start in stride(from: 0, to: batch.rows.users.count, by: layout.users.width) {
                emails.append(try XCTUnwrap(batch.rows.users[start + slot].string))
            }
            collect("user.id", batch.rows.users, layout.users, .id)
            collect("account.id", batch.rows.accounts, layout.accounts, .id)
            collect("account.accountId", batch.rows.accounts, layout.accounts, .accountId)
            collect("session.id", batch.rows.sessions, layout.sessions, .id)
            collect("session.token", batch.rows.sessions, layout.sessions, .token)
            if let verifications = layout.verifications { collect("verification.id", batch.rows.verifications, verifications, .id) }
            unique["workspaces.id", default: []] += batch.rows.workspaces.map(\.id)
            unique["subscriptions.id", default: []] += batch.rows.subscriptions.map(\.id)
        }
        XCTAssertEqual(unique.count, 8)
        for (column, values) in unique {
            XCTAssertEqual(Set(values).count, values.count, "\(column) repeats a value")
            XCTAssertGreaterThan(values.count, column == "verification.id" ? 20 : 1_000, column)
        }
        XCTAssertEqual(emails.count, count)
        XCTAssertEqual(Set(emails).count, count, "two users share an email")
        var relays = 0, strangers: [String] = []
        for email in emails {
            let local = email.split(separator: "@")[0]
            let number = email.hasSuffix("@privaterelay.appleid.com") ? DemoPeople.number(ofRelay: Array(local.utf8))
                : local.split(separator: ".").last.flatMap { Int($0) }
            if email.hasSuffix("@privaterelay.appleid.com") { relays += 1 }
            if !(number.map { (first + 1)...(first + count) ~= $0 } ?? false), strangers.count < 5 { strangers.append(email) }
        }
        XCTAssertEqual(strangers, [], "emails that name no person of this seed")
        XCTAssertGreaterThan(relays, count / 20)
    }
}
