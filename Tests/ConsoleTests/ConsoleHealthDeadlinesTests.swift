import Foundation
import Gatehouse
import HTTPTestSupport
import Storage
import TestEngines
import XCTest

/// `GET /api/health/deadlines` over a real socket on each engine: the gauges recorded runs carry, per check,
/// oldest first, within the range asked, with the lines the checks judged them by.
final class ConsoleHealthDeadlinesTests: XCTestCase {
    /// Checks that give a secret's days left and a key's age, as the real checks do (`HealthGauge`).
    struct Deadlines: HealthCheckProvider {
        let group = "test"
        func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
            let expiry = Timestamp(milliseconds: 1_800_000_000_000).adding(seconds: 40 * 86_400)
            let gauge = HealthGauge.daysLeft(until: expiry, now: context.now, warning: Double(context.warnDays), critical: Double(context.critDays))
            return [HealthCheck(id: "apple.secret.com.example.web", status: context.expiryStatus(expiry), summary: "a secret", gauge: gauge),
                    HealthCheck(id: "apple.key_age", status: .ok, summary: "a key",
                                gauge: HealthGauge(value: 100, warning: 365, critical: nil, lowerIsWorse: false)),
                    HealthCheck(id: "store.integrity", status: .ok, summary: "no gauge")]
        }
    }

    func testDeadlinesOnSQLite() throws { try deadlines(on: .sqlite) }
    func testDeadlinesOnPostgres() throws { try deadlines(on: .postgres) }
    func testDeadlinesOnD1() throws { try deadlines(on: .d1) }

    func deadlines(on engine: EngineKind) throws {
        let harness = try ConsoleHarness(users: 10, transport: .socket, engine: engine)
        let viewer = try harness.tokens("vera").access
        func get(_ path: String) throws -> [String: Any] {
            let response = try harness.request("GET", path, token: viewer)
            XCTAssertEqual(response.status, 200, response.bodyText)
            return try harness.json(response)
        }
        let empty = try get("/api/health/deadlines")
        XCTAssertEqual(empty["days"] as? Int, 30)
        XCTAssertEqual((empty["series"] as? [Any])?.count, 0, "no recorded run yet")

        // Runs 60, 20 and 1 day(s) before the console's clock; the 30-day range holds the last two.
        let store = try Store.open(path: harness.storePath)
        let runner = HealthRunner(providers: [Deadlines()])
        for daysAgo in [60, 20, 1] {
            let at = harness.clock.now.adding(seconds: -Int64(daysAgo) * 86_400)
            try runner.record(runner.run(store, HealthContext(now: at)), in: store)
        }
        let month = try get("/api/health/deadlines?days=30")
        let series = try XCTUnwrap(month["series"] as? [[String: Any]])
        XCTAssertEqual(series.map { $0["check"] as? String }, ["apple.key_age", "apple.secret.com.example.web"])
        let secret = series[1]
        XCTAssertEqual(secret["warning"] as? Double, 28)
        XCTAssertEqual(secret["critical"] as? Double, 14)
        XCTAssertEqual(secret["lowerIsWorse"] as? Bool, true)
        let points = try XCTUnwrap(secret["points"] as? [[String: Any]])
        XCTAssertEqual(points.map { $0["value"] as? Double }, [60, 41])
        XCTAssertEqual(points.map { $0["status"] as? String }, ["ok", "ok"])
        XCTAssertNil(series[0]["critical"], "the key age has no critical line")
        XCTAssertEqual(series[0]["lowerIsWorse"] as? Bool, false)

        let quarter = try get("/api/health/deadlines?days=90&check=apple.secret.com.example.web")
        let only = try XCTUnwrap(quarter["series"] as? [[String: Any]])
        XCTAssertEqual(only.count, 1)
        XCTAssertEqual((only[0]["points"] as? [[String: Any]])?.map { $0["value"] as? Double }, [100, 60, 41])
        XCTAssertEqual((only[0]["points"] as? [[String: Any]])?.map { $0["status"] as? String }, ["ok", "ok", "ok"])

        XCTAssertEqual(only[0]["recorded"] as? Int, 3)

        for bad in ["days=0", "days=367", "days=x"] {
            XCTAssertEqual(try harness.request("GET", "/api/health/deadlines?\(bad)", token: viewer).status, 400, bad)
        }
        XCTAssertEqual(try harness.request("GET", "/api/health/deadlines").status, 401)
    }
}
