@testable import Console
@testable import D1Engine
import Gatehouse
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// Every route of the job pages enforces its minimum role: no token is 401, a lower role is 403
/// `forbidden_role`, before any body is read.
final class ConsoleRoleTests: XCTestCase {
    var harness: ConsoleHarness!
    override func setUpWithError() throws { harness = try ConsoleHarness(users: 10) }
    override func tearDown() { harness = nil }

    /// The job pages' routes and their minimum roles.
    static let routes: [(method: String, path: String, role: AdminRole)] = [
        ("GET", "/api/apple/keys", .viewer),
        ("POST", "/api/apple/keys", .admin),
        ("POST", "/api/apple/keys/ABCDEFGHIJ/activate", .admin),
        ("POST", "/api/apple/keys/ABCDEFGHIJ/revoke", .admin),
        ("POST", "/api/apple/keys/rollback", .admin),
        ("POST", "/api/apple/keys/ABCDEFGHIJ/selftest", .admin),
        ("POST", "/api/apple/secret/mint", .admin),
        ("POST", "/api/apple/secret/inspect", .viewer),
        ("POST", "/api/apple/export", .admin),
        ("GET", "/api/providers", .viewer),
        ("GET", "/api/users?q=ana", .viewer),
        ("GET", "/api/users/duplicates", .support),
        ("GET", "/api/users/someone", .viewer),
        ("GET", "/api/accounts/check", .viewer),
        ("GET", "/api/health", .viewer),
        ("GET", "/api/health/history", .viewer),
    ]

    func testEveryRouteIsRegisteredWithItsRole() {
        var router = Router()
        APIRoutes.register(on: &router)
        for route in Self.routes {
            let path = route.path.split(separator: "?").first.map(String.init) ?? route.path
            let pattern = path.replacingOccurrences(of: "ABCDEFGHIJ", with: ":id").replacingOccurrences(of: "/someone", with: "/:id")
            XCTAssertTrue(router.table.contains("\(route.method) \(pattern) (\(route.role.rawValue))"), "\(route.method) \(pattern) \(route.role)")
        }
    }

    func testLowerRolesAndMissingTokensAreRefused() throws {
        let tokens = [AdminRole.viewer: try harness.tokens("vera").access, .support: try harness.tokens("sam").access]
        for route in Self.routes {
            let body = route.method == "POST" ? "{}" : nil
            let anonymous = try harness.request(route.method, route.path, body: body)
            XCTAssertEqual(anonymous.status, 401, "\(route.method) \(route.path) without a token")
            for (role, token) in tokens where !role.allows(route.role) {
                let refused = try harness.request(route.method, route.path, token: token, body: body)
                XCTAssertEqual(refused.status, 403, "\(route.method) \(route.path) as \(role)")
                XCTAssertEqual(harness.errorCode(refused), "forbidden_role")
            }
        }
    }

    func testReadsAnswerTheirLowestRole() throws {
        let viewer = try harness.tokens("vera").access
        let support = try harness.tokens("sam").access
        for route in Self.routes where route.method == "GET" {
            let response = try harness.request("GET", route.path, token: route.role == .viewer ? viewer : support)
            XCTAssertTrue([200, 404].contains(response.status), "\(route.path): \(response.status) \(response.bodyText)")
        }
    }
}
