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
}
