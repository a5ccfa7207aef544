@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// The split-identity email signals compare as Better Auth does (JavaScript's toLowerCase, then code units).
final class SplitIdentityUnicodeTests: XCTestCase {
    var scratch: Scratch!
    var store: Store!
    override func setUpWithError() throws {
        scratch = try Scratch()
        store = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester).0
    }

    func user(_ id: String, _ name: String, _ email: String, _ created: String) throws {
        try store.db.execute(#"INSERT INTO "user" (id, name, email, emailVerified, createdAt, updatedAt) VALUES (?, ?, ?, 1, ?, ?)"#,
                             [id, name, email, created, created])
    }

    func testComposedAndDecomposedEmailsAreOnePersonToPeopleAndTwoToBetterAuth() throws {
        // Two different names, so only the email can pair them; 40 days apart, so time does not help either.
        try user("U1composedAAAAAAAAAAAAAAAAAAAAAA", "José", "jos\u{E9}.costa@example.com", "2026-01-01T00:00:00.000Z")
        try user("U2decomposedBBBBBBBBBBBBBBBBBBBB", "J. Costa", "jose\u{301}.costa@example.com", "2026-02-10T00:00:00.000Z")
        // Same mailbox by Swift's == (canonical equivalence) but not by code units: not a same_mailbox signal.
        try user("U3mailboxCCCCCCCCCCCCCCCCCCCCCCC", "Ana", "ana.mar\u{ED}a@example.com", "2026-01-01T00:00:00.000Z")
        try user("U4mailboxDDDDDDDDDDDDDDDDDDDDDDD", "Ana", "ana.mari\u{301}a@example.org", "2026-01-02T00:00:00.000Z")
        let report = try SplitIdentityFinder(store: store).find(minScore: 0.6, limit: 10)
        let lookalike = try XCTUnwrap(report.candidates.first { $0.earlier.id.rawValue.hasPrefix("U1") })
        XCTAssertEqual(lookalike.reasons.map(\.code), ["same_email_unicode"])
        XCTAssertEqual(lookalike.score, 0.6)
        XCTAssertNil(report.candidates.first { $0.earlier.id.rawValue.hasPrefix("U3") }, "no same_mailbox points for different code units")
        let lower = try SplitIdentityFinder(store: store).find(minScore: 0.5, limit: 10)
        let ana = try XCTUnwrap(lower.candidates.first { $0.earlier.id.rawValue.hasPrefix("U3") })
        XCTAssertEqual(ana.reasons.map(\.code), ["name_match", "created_close"])
        // Each side of the lookalike pair finds the other by the email's other normalisation form.
        for asked in ["U1composedAAAAAAAAAAAAAAAAAAAAAA", "U2decomposedBBBBBBBBBBBBBBBBBBBB"] {
            XCTAssertEqual(try SplitIdentityFinder(store: store).twins(of: BetterAuthUserID(asked), minScore: 0.6), [lookalike], asked)
        }
    }

    func testMailboxesAreLowercasedAsJavaScriptDoes() {
        XCTAssertEqual(EmailAddress("ΟΔΟΣ@Example.GR").local, "οδος")
        XCTAssertEqual(EmailAddress("\u{212A}ATE@example.com").local, "kate")
        XCTAssertEqual(EmailKeys("\u{212A}ate@example.com").mailbox, EmailKeys("kate@example.com").mailbox)
    }
}
