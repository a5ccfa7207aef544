@testable import Console
@testable import D1Engine
import Foundation
@testable import Gatehouse
import HTTPTestSupport
import Locking
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// A cheap read (`GET /api/users/{id}`, `GET /api/auth/me`) sends its token check along with its first snapshot
/// (`TokenCheck`): one round trip to a Postgres server instead of two. The refusals must be exactly those of the
/// check made up front — and a refused token must never see the page it asked for, whatever the page ran into.
/// Run on SQLite and, under ops/test, on Postgres and D1 (its local API server).
final class ConsoleTokenCheckTests: XCTestCase {
    func harnesses() throws -> [ConsoleHarness] {
        var all = [try ConsoleHarness(users: 20)]
        if !(ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PG_URI"] ?? "").isEmpty { all.append(try ConsoleHarness(users: 20, engine: .postgres)) }
        if !(ProcessInfo.processInfo.environment["GATEHOUSE_TEST_D1_CONTROL"] ?? "").isEmpty { all.append(try ConsoleHarness(users: 20, engine: .d1)) }
        return all
    }

    func someUser(_ harness: ConsoleHarness) throws -> (id: String, email: String) {
        let store = try Store.open(path: harness.storePath)
        let user = store.schema.user
        let row = try XCTUnwrap(try store.db.row("SELECT \(user.col(.id)), \(user.col(.email)) FROM \(user.sql) ORDER BY \(user.col(.id)) LIMIT 1"))
        return (try XCTUnwrap(row[0].string), try XCTUnwrap(row[1].string))
    }

    func assertRefused(_ response: RawResponse, _ expected: String, hiding email: String, _ engine: String,
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, 401, "\(engine): \(response.bodyText)", file: file, line: line)
        XCTAssertEqual(response.header("x-auth-error"), expected, "\(engine): \(response.bodyText)", file: file, line: line)
        XCTAssertFalse(response.bodyText.contains(email), "\(engine): a refused token sees nothing of the user", file: file, line: line)
    }

    /// An inline route's token check is answered after its handler has read, so its handler must not be able to
    /// write: every inline route's handler is the read-only kind (`ReadOnlyContext`, whose `ReadOnlyStore` has no
    /// write, so a writing inline handler does not compile), and only GET routes run inline.
    func testEveryInlineRouteHasAReadOnlyHandler() throws {
        var router = Router()
        APIRoutes.register(on: &router)
        let inline = router.inlineRoutes
        XCTAssertEqual(inline.map(\.route).sorted(), ["GET /api/auth/me", "GET /api/users/:id"])
        for route in inline {
            XCTAssertTrue(route.readOnly, route.route)
            XCTAssertTrue(route.route.hasPrefix("GET "), route.route)
        }
    }

    /// A check run while the handler holds a store runs on that store, on the handler's thread only: on any other
    /// thread it takes a store of its own from the pool (a store is used by one thread at a time), waiting as any
    /// check-out does. With the pool's one store held, the other thread's check waits out its deadline.
    func testTheHeldStoreServesOnlyTheThreadHoldingIt() throws {
        let harness = try ConsoleHarness(users: 2)
        let token = try harness.tokens("vera").access
        let pool = try StorePool(path: harness.storePath, size: 1)
        let sameThread = try TokenCheck(token: token, required: .viewer, now: .now(), pool: pool, deadline: WaitDeadline(milliseconds: 300))
        let otherThread = try TokenCheck(token: token, required: .viewer, now: .now(), pool: pool, deadline: WaitDeadline(milliseconds: 300))
        let outcome = Locked<String?>(nil)
        try RequestStores(pool: pool, check: sameThread, deadline: nil).withStore { _ in
            XCTAssertEqual(try sameThread.session().admin.username, "vera", "the holder's check runs on the store it holds")
        }
        let done = DispatchSemaphore(value: 0)
        try RequestStores(pool: pool, check: otherThread, deadline: nil).withStore { _ in
            DispatchQueue.global().async {
                let result: String
                do { result = "accepted \(try otherThread.session().admin.username)" } catch { result = "refused" }
                outcome.withLock { $0 = result }
                done.signal()
            }
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
        XCTAssertEqual(outcome.value, "refused", "another thread must not use the store the handler holds")
    }

    func testARefusedTokenNeverSeesTheUserAndAGoodOneDoes() throws {
        for harness in try harnesses() {
            let engine = harness.storePath.hasPrefix("postgres") ? "postgres" : harness.storePath.hasPrefix("d1:") ? "d1" : "sqlite"
            let (id, email) = try someUser(harness)
            let good = try harness.tokens("vera").access
            let answered = try harness.request("GET", "/api/users/\(id)", token: good)
            XCTAssertEqual(answered.status, 200, "\(engine): \(answered.bodyText)")
            XCTAssertTrue(answered.bodyText.contains(email), engine)
            let me = try harness.request("GET", "/api/auth/me", token: good)
            XCTAssertEqual(me.status, 200, me.bodyText)
            XCTAssertEqual(try harness.json(me)["username"] as? String, "vera", engine)
            // A user that does not exist: 404 for a good token, but 401 for a bad one (the refusal comes first).
            XCTAssertEqual(try harness.request("GET", "/api/users/nobody-\(id)", token: good).status, 404, engine)

            // Well-formed but unknown, and not a token at all.
            let unknown = "gha_" + String(repeating: "A", count: 43)
            assertRefused(try harness.request("GET", "/api/users/\(id)", token: unknown), "invalid_token", hiding: email, engine)
            assertRefused(try harness.request("GET", "/api/users/nobody-\(id)", token: unknown), "invalid_token", hiding: email, engine)
            assertRefused(try harness.request("GET", "/api/users/\(id)", token: "not-a-token"), "invalid_token", hiding: email, engine)
            assertRefused(try harness.request("GET", "/api/auth/me", token: unknown), "invalid_token", hiding: "vera", engine)

            // Logged out: the family is revoked.
            let sam = try harness.tokens("sam").access
            XCTAssertEqual(try harness.request("POST", "/api/auth/logout", token: sam).status, 200)
            assertRefused(try harness.request("GET", "/api/users/\(id)", token: sam), "token_revoked", hiding: email, engine)

            // Disabled elsewhere (another connection, as the CLI would): refused on the very next request.
            let again = try harness.tokens("sam").access
            XCTAssertEqual(try harness.request("GET", "/api/users/\(id)", token: again).status, 200)
            let store = try Store.open(path: harness.storePath)
            try AdminDirectory(store: store).disable(try AdminUsername("sam"), actor: Actor("tester"), now: harness.clock.now)
            assertRefused(try harness.request("GET", "/api/users/\(id)", token: again), "token_revoked", hiding: email, engine)

            // Expired: the access token's 15 minutes are over.
            harness.clock.advance(seconds: 901)
            assertRefused(try harness.request("GET", "/api/users/\(id)", token: good), "token_expired", hiding: email, engine)
            assertRefused(try harness.request("GET", "/api/auth/me", token: good), "token_expired", hiding: "vera", engine)
        }
    }
}
