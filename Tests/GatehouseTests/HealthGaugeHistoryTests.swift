import Foundation
@testable import Gatehouse
import XCTest

/// The deadlines a recorded run keeps for the console's charts: the real checks' numbers and lines, read back per
/// check over a range; a long series thinned to its worst values and its latest.
final class HealthGaugeHistoryTests: XCTestCase {
    func testRecordedRunsKeepTheMembershipsDaysLeftAndLines() throws {
        let f = try GateFixture()
        try f.gates.set(GateChange(requirement: .membership, met: true, evidence: "paid", expires: f.renewal), actor: tester, now: f.t0)
        let runner = HealthRunner(providers: [GateHealthChecks()])
        for days in [0, 100, 180, 195] {
            try runner.record(runner.run(f.store, HealthContext(now: f.day(Int64(days)))), in: f.store)
        }
        let series = try HealthGaugeHistory.series(f.store, since: f.day(50))
        XCTAssertEqual(series.map(\.check), ["gates.membership"])
        XCTAssertEqual(series[0].points.map(\.value), [100, 20, 5])
        XCTAssertEqual(series[0].points.map(\.status), [.ok, .warning, .critical])
        XCTAssertEqual(series[0].points.map(\.at), [f.day(100), f.day(180), f.day(195)])
        XCTAssertEqual([series[0].warning, series[0].critical], [30, 7])
        XCTAssertTrue(series[0].lowerIsWorse)
        XCTAssertEqual(series[0].recorded, 3)
        XCTAssertEqual(try HealthGaugeHistory.series(f.store, since: f.day(0), check: "apple.key_age"), [])
    }

    func testALongSeriesKeepsItsWorstValuesAndItsLatest() {
        let start = Timestamp(milliseconds: 1_800_000_000_000)
        var points = (0..<1000).map { HealthGaugeSeries.Point(at: start.adding(seconds: Int64($0) * 3600), value: 100 - Double($0) / 100, status: .ok) }
        points[500] = HealthGaugeSeries.Point(at: points[500].at, value: 3, status: .critical)
        let thin = HealthGaugeHistory.thin(points, lowerIsWorse: true)
        XCTAssertEqual(thin.count, HealthGaugeHistory.maxPoints)
        XCTAssertTrue(thin.contains(points[500]), "a critical spike is never thinned away")
        XCTAssertEqual(thin.last, points.last)
        XCTAssertEqual(thin.map(\.at), thin.map(\.at).sorted())
        XCTAssertEqual(HealthGaugeHistory.thin(Array(points.prefix(10)), lowerIsWorse: true), Array(points.prefix(10)))
    }
}
