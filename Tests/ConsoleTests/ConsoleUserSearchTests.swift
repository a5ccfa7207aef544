@testable import Console
import Foundation
@testable import Gatehouse
import HTTPTestSupport
import Storage
import XCTest

/// `GET /api/users` a page at a time over a real socket: `{users, nextCursor}` with `nextCursor` null on the last
/// page, every user once across the pages, and 400 naming the query item for a bad cursor, sort, flag or date.
final class ConsoleUserSearchTests: XCTestCase {
    var harness: ConsoleHarness!
    var viewer: String!
    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 120)
        viewer = try harness.tokens("vera").access
    }
    override func tearDown() { harness = nil }

    func get(_ path: String) throws -> (status: Int, body: [String: Any]) {
        let response = try harness.request("GET", path, token: viewer)
        let body = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(response.bodyText.utf8)) as? [String: Any], response.bodyText)
        return (response.status, body)
    }

    func testPagesThroughEveryRelayUserOnceInEachSort() throws {
        let store = try Store.open(path: harness.storePath)
        let user = store.schema.user
        let relay = Set(try store.db.rows("SELECT \(user.col(.id)) FROM \(user.sql) WHERE \(user.col(.email)) LIKE '%@privaterelay.appleid.com'")
            .compactMap { $0[0].string })
        XCTAssertGreaterThan(relay.count, 6)
        for sort in UserSort.allCases {
            for query in ["privaterelay", "%40privaterelay.appleid.com"] {
                var seen: [String] = []
                var cursor: String?
                repeat {
                    let after = cursor.map { "&cursor=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
                    let (status, body) = try get("/api/users?q=\(query)&by=email&limit=4&sort=\(sort.rawValue)\(after)")
                    XCTAssertEqual(status, 200, "\(body)")
                    XCTAssertTrue(body.keys.contains("nextCursor"))
                    seen += (body["users"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                    cursor = body["nextCursor"] as? String
                } while cursor != nil && seen.count <= relay.count
                XCTAssertEqual(seen.count, Set(seen).count, "\(sort) \(query): a user on two pages")
                XCTAssertEqual(Set(seen), relay, "\(sort) \(query)")
            }
        }
        let last = try get("/api/users?q=privaterelay&by=email&limit=1000")
        XCTAssertTrue(last.body["nextCursor"] is NSNull, "null on the last page: \(last.body)")
    }

    func testFiltersNarrowTheSearch() throws {
        let all = try get("/api/users?q=privaterelay&by=email&limit=1000").body["users"] as? [[String: Any]] ?? []
        let apple = try get("/api/users?q=privaterelay&by=email&limit=1000&provider=apple").body["users"] as? [[String: Any]] ?? []
        XCTAssertEqual(Set(apple.compactMap { $0["id"] as? String }),
                       Set(all.filter { ($0["providers"] as? [String] ?? []).contains("apple") }.compactMap { $0["id"] as? String }))
        let flagged = try get("/api/users?q=%40&by=email&limit=1000&flag=relay").body["users"] as? [[String: Any]] ?? []
        XCTAssertEqual(Set(flagged.compactMap { $0["id"] as? String }), Set(all.compactMap { $0["id"] as? String }))
        let both = try get("/api/users?q=%40&by=email&limit=1000&flag=relay,deletionPending")
        XCTAssertEqual(both.status, 200)
        XCTAssertEqual((both.body["users"] as? [Any])?.count, 0)
        let future = try get("/api/users?q=%40&by=email&createdAfter=2100-01-01")
        XCTAssertEqual((future.body["users"] as? [Any])?.count, 0)
    }

    func testBadValuesAreRefusedNamingTheQueryItem() throws {
        let first = try get("/api/users?q=privaterelay&by=email&limit=2")
        let cursor = try XCTUnwrap(first.body["nextCursor"] as? String)
        for (path, words) in [
            ("/api/users?q=privaterelay&sort=newest", "?sort"),
            ("/api/users?q=privaterelay&flag=famous", "?flag"),
            ("/api/users?q=privaterelay&provider=a%20b", "?provider"),
            ("/api/users?q=privaterelay&createdAfter=yesterday", "?createdAfter"),
            ("/api/users?q=privaterelay&createdBefore=2026-13-45", "?createdBefore"),
            ("/api/users?q=privaterelay&cursor=garbage", "cursor"),
            ("/api/users?q=privaterelay&cursor=\(cursor)&sort=created", "was made for sort match"),
            ("/api/users?q=privaterelay&cursor=\(String(repeating: "A", count: 3000))", "?cursor"),
            ("/api/users?q=privaterelay&cursor=eyJzIjoiZW1haWwiLCJpIjoxLCJrIjp0cnVlfQ", "cursor"),
        ] {
            let response = try harness.request("GET", path, token: viewer)
            XCTAssertEqual(response.status, 400, "\(path): \(response.bodyText)")
            XCTAssertTrue(response.bodyText.contains(words), "\(path): \(response.bodyText)")
        }
    }
}
