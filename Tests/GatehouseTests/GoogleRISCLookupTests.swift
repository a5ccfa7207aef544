@testable import Gatehouse
import XCTest

/// How a Google event finds its account without reading every account: token-revoked's refresh token prefix through
/// the index init makes (`gatehouse_account_refreshToken_prefix_idx`), on Better Auth's shape and Drizzle's.
final class GoogleRISCLookupTests: XCTestCase {
    func testARefreshTokenPrefixIsAnIndexLookupOnEveryShape() throws {
        let scratch = try Scratch()
        let drizzle = scratch.path("drizzle.sqlite")
        try Fixtures.database("drizzle-ms.sql", at: drizzle)
        for path in [scratch.path("fresh.sqlite"), drizzle] {
            let store = try Store.initialize(path: path, actor: tester).0
            let plan = try store.db.rows("EXPLAIN QUERY PLAN " + GoogleSecurityInbox.accountByRefreshPrefixSQL(store.schema), ["0123456789abcdef"])
                .compactMap { $0["detail"].string }.joined(separator: "; ")
            XCTAssertTrue(plan.contains("USING INDEX gatehouse_account_refreshToken_prefix_idx"), "\(path): \(plan)")
        }
    }

    /// A token named by its hash: found through the recorded hashes (every Google refresh token hashed once, on every
    /// shape), then without hashing again; a token Better Auth replaced is found by its new hash, not its old one.
    func testARefreshTokenHashIsFoundThroughTheRecordedHashesAndFollowsAReplacedToken() throws {
        let scratch = try Scratch()
        for shape in MergeScenario.shapes {
            let store = try MergeScenario.store(scratch, shape: shape)
            let scenario = try MergeScenario(store: store)
            let account = store.schema.account
            let googleID = "acc-google-\(scenario.u2)"
            func setToken(_ token: String) throws {
                try store.db.execute("UPDATE \(account.sql) SET \(account.col(.refreshToken)) = ? WHERE \(account.col(.id)) = ?", [token, googleID])
            }
            try setToken("1//0gFirstRefreshTokenAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
            let hashes = GoogleTokenHashes(store: store)
            let columns = GoogleSecurityInbox.accountColumns(store.schema)
            let first = GoogleSecurityEvent.TokenIdentifier.doubleSHA512(of: "1//0gFirstRefreshTokenAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
            XCTAssertEqual(try hashes.account(hash: first, columns: columns)?.optionalString("id"), googleID, shape ?? "fresh")
            XCTAssertEqual(try hashes.record(), 0, "every token is recorded: a lookup hashes nothing again")
            XCTAssertNil(try hashes.account(hash: GoogleSecurityEvent.TokenIdentifier.doubleSHA512(of: "1//0gSomeoneElse"), columns: columns))

            try setToken("1//0gSecondRefreshTokenBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB")
            XCTAssertNil(try hashes.account(hash: first, columns: columns), "the replaced token is not found by its old hash")
            let second = GoogleSecurityEvent.TokenIdentifier.doubleSHA512(of: "1//0gSecondRefreshTokenBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB")
            XCTAssertEqual(try hashes.account(hash: second, columns: columns)?.optionalString("id"), googleID)
            XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_google_token_hashes").int64, 1)
            let plan = try store.db.rows("EXPLAIN QUERY PLAN SELECT account_id FROM gatehouse_google_token_hashes WHERE hash = ?", [second])
                .compactMap { $0["detail"].string }.joined(separator: "; ")
            XCTAssertTrue(plan.contains("gatehouse_google_token_hashes_hash_idx"), plan)
        }
    }
}
