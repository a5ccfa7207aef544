@testable import Console
@testable import D1Engine
import Gatehouse
import HTTPServer
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The router in-process: which route a path reaches, whatever the order routes were added in.
final class RouterTests: XCTestCase {
    func router(_ patterns: [(String, String)]) -> Router {
        var router = Router()
        for (method, pattern) in patterns {
            router.add(method, pattern, role: .viewer) { _ in .text(200, "\(method) \(pattern)") }
        }
        return router
    }

    func reached(_ router: Router, _ method: String, _ path: String) -> String? {
        guard case .success(let (route, _)) = router.match(method: method, path: path) else { return nil }
        return "\(route.method) /" + route.segments.joined(separator: "/")
    }

    func testConstantSegmentsWinOverParametersInEitherOrder() {
        let routes = [("GET", "/api/users/:id"), ("GET", "/api/users/duplicates"), ("GET", "/api/users/:id/merges"),
                      ("GET", "/api/users/duplicates/export")]
        for order in [routes, routes.reversed()] {
            let router = router(order)
            XCTAssertEqual(reached(router, "GET", "/api/users/duplicates"), "GET /api/users/duplicates")
            XCTAssertEqual(reached(router, "GET", "/api/users/u1"), "GET /api/users/:id")
            XCTAssertEqual(reached(router, "GET", "/api/users/duplicates/export"), "GET /api/users/duplicates/export")
            XCTAssertEqual(reached(router, "GET", "/api/users/duplicates/merges"), "GET /api/users/:id/merges")
            XCTAssertEqual(reached(router, "HEAD", "/api/users/duplicates"), "GET /api/users/duplicates")
        }
    }

    func testMethodMismatchAndMissingPaths() {
        let router = router([("POST", "/api/merges/plan")])
        guard case .failure(let notAllowed) = router.match(method: "DELETE", path: "/api/merges/plan") else { return XCTFail("matched") }
        XCTAssertEqual(notAllowed.status, 405)
        guard case .failure(let missing) = router.match(method: "GET", path: "/api/nothing/here") else { return XCTFail("matched") }
        XCTAssertEqual(missing.status, 404)
        guard case .failure(let empty) = router.match(method: "GET", path: "/api/merges/") else { return XCTFail("matched") }
        XCTAssertEqual(empty.status, 404)
    }

    func testParametersArePercentDecodedAndAnEmptyOneDoesNotMatch() {
        var router = Router()
        router.add("GET", "/api/users/:id", role: .viewer) { _ in .text(200, "") }
        guard case .success(let (_, parameters)) = router.match(method: "GET", path: "/api/users/ana%40example.com") else { return XCTFail() }
        XCTAssertEqual(parameters["id"], "ana@example.com")
        guard case .failure = router.match(method: "GET", path: "/api/users/%ZZ") else { return XCTFail("a malformed escape matched") }
    }
}
