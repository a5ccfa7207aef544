@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// A user named by email is found as Better Auth stores emails: lowercased by JavaScript's `toLowerCase`.
final class JavaScriptEmailLookupTests: XCTestCase {
    var scratch: Scratch!
    override func setUpWithError() throws { scratch = try Scratch() }

    func testAnEmailWithAFinalSigmaIsFoundAsBetterAuthStoredIt() throws {
        let (store, _) = try Store.initialize(path: scratch.path("greek.sqlite"), actor: Actor("tester"))
        // Better Auth stored email.toLowerCase(): the final Σ became ς, which Swift's lowercased() makes σ.
        try store.db.execute("""
            INSERT INTO "user" (id, name, email, emailVerified, createdAt, updatedAt)
            VALUES ('u-greek', 'Odos', 'οδος@example.gr', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')
            """)
        XCTAssertNotEqual("ΟΔΟΣ@example.gr".lowercased(), "οδος@example.gr", "Swift's lowercasing differs here; the test would prove nothing")
        XCTAssertEqual(try UserDirectory(store: store).resolve("ΟΔΟΣ@example.gr").rawValue, "u-greek")
        XCTAssertEqual(try MergeUserResolver(store: store).resolve("ΟΔΟΣ@example.gr", field: .into).rawValue, "u-greek")
    }
}
