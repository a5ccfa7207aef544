import Foundation
import Gatehouse
import HTTPTestSupport
import Storage
import TestEngines
import XCTest

/// `GET /api/users/:id/duplicates` over a real socket on each engine: each side of a pair the duplicates scan finds
/// names the other, with the scan's score and reasons, and a user with no twin gets none.
final class ConsoleUserTwinsTests: XCTestCase {
    func testTwinsOnSQLite() throws { try twins(on: .sqlite) }
    func testTwinsOnPostgres() throws { try twins(on: .postgres) }
    func testTwinsOnD1() throws { try twins(on: .d1) }

    func twins(on engine: EngineKind) throws {
        let harness = try ConsoleHarness(users: 200, transport: .socket, engine: engine)
        let viewer = try harness.tokens("vera").access, support = try harness.tokens("sam").access
        func get(_ path: String, _ token: String) throws -> [String: Any] {
            let response = try harness.request("GET", path, token: token)
            XCTAssertEqual(response.status, 200, "\(path): \(response.bodyText.prefix(300))")
            return try harness.json(response)
        }
        let scan = try XCTUnwrap(try get("/api/users/duplicates?minScore=0.7&limit=50", support)["candidates"] as? [[String: Any]])
        XCTAssertFalse(scan.isEmpty, "the demo store holds split identities")
        for pair in scan.prefix(5) {
            let earlier = try XCTUnwrap((pair["earlier"] as? [String: Any])?["id"] as? String)
            let later = try XCTUnwrap((pair["later"] as? [String: Any])?["id"] as? String)
            for (asked, twin) in [(earlier, later), (later, earlier)] {
                let answer = try get("/api/users/\(asked)/duplicates", viewer)
                XCTAssertEqual(answer["user"] as? String, asked)
                let candidates = try XCTUnwrap(answer["candidates"] as? [[String: Any]])
                let found = try XCTUnwrap(candidates.first { [($0["earlier"] as? [String: Any])?["id"] as? String, ($0["later"] as? [String: Any])?["id"] as? String].contains(twin) },
                                          "\(asked) names its twin \(twin)")
                XCTAssertEqual(found["score"] as? Double, pair["score"] as? Double, "the scan's score")
                XCTAssertEqual((found["reasons"] as? [[String: Any]])?.map { $0["code"] as? String }, (pair["reasons"] as? [[String: Any]])?.map { $0["code"] as? String })
                XCTAssertEqual((found["earlier"] as? [String: Any])?["id"] as? String, earlier, "the user created first is earlier, whichever side asks")
            }
        }
        // A user in no pair of the scan at a low threshold has no twin at the default one.
        let low = try XCTUnwrap(try get("/api/users/duplicates?minScore=0.3&limit=10000", support)["candidates"] as? [[String: Any]])
        let paired = Set(low.flatMap { [($0["earlier"] as? [String: Any])?["id"] as? String, ($0["later"] as? [String: Any])?["id"] as? String].compactMap { $0 } })
        let store = try Store.open(path: harness.storePath)
        let ids = try store.db.rows("SELECT \(store.schema.user.col(.id)) FROM \(store.schema.user.sql)").compactMap { $0[0].string }
        let loner = try XCTUnwrap(ids.first { !paired.contains($0) })
        XCTAssertEqual((try get("/api/users/\(loner)/duplicates", viewer)["candidates"] as? [Any])?.count, 0)

        XCTAssertEqual(try harness.request("GET", "/api/users/no-such-user/duplicates", token: viewer).status, 404)
        XCTAssertEqual(try harness.request("GET", "/api/users/\(loner)/duplicates?minScore=2", token: viewer).status, 400)
        XCTAssertEqual(try harness.request("GET", "/api/users/\(loner)/duplicates").status, 401)
    }
}
