@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// A merge's email conflict says what Better Auth would make of the two emails (JavaScript toLowerCase, then ===).
final class MergeEmailConflictTests: XCTestCase {
    func testTheConflictNamesHowBetterAuthComparesTheEmails() {
        let same = MergeConflict.email(target: "Ana@Example.com", source: "ana@example.com", relayRequired: false, decision: nil)
        XCTAssertTrue(same.message.contains("the same email to Better Auth"), same.message)
        let lookalike = MergeConflict.email(target: "jos\u{E9}@example.com", source: "jose\u{301}@example.com", relayRequired: false, decision: nil)
        XCTAssertTrue(lookalike.message.contains("differ in Unicode normalisation"), lookalike.message)
        let sigma = MergeConflict.email(target: "οδος@example.gr", source: "ΟΔΟΣ@example.gr", relayRequired: false, decision: nil)
        XCTAssertTrue(sigma.message.contains("the same email to Better Auth"), "final sigma: \(sigma.message)")
        let different = MergeConflict.email(target: "ana@example.com", source: "ana@example.org", relayRequired: false, decision: "U1 keeps ana@example.com (default)")
        XCTAssertEqual(different.message, "U1's email is ana@example.com; U2's is ana@example.org")
        XCTAssertEqual(different.field, .keepEmail)
    }
}
