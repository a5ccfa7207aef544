@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The gate's health checks: the membership's renewal (31 / 29 / 6 days, expired), a Guideline 4.8 breach,
/// a lapsed gate; blocked and ready gates reported, not alarmed.
final class GateHealthChecksTests: XCTestCase {
    var f: GateFixture!

    override func setUpWithError() throws { f = try GateFixture() }

    func checks(at time: Timestamp) throws -> [String: HealthCheck] {
        Dictionary(uniqueKeysWithValues: try GateHealthChecks().checks(f.store, HealthContext(now: time)).map { ($0.id, $0) })
    }

    func testAFreshStoreIsReportedNotAlarmed() throws {
        let checks = try self.checks(at: f.t0)
        XCTAssertEqual(checks.count, 8)
        XCTAssertTrue(checks.values.allSatisfy { $0.status == .ok }, "\(checks.values.filter { $0.status != .ok })")
        XCTAssertEqual(checks["gates.apple.ios"]?.summary, "apple on ios is blocked by membership (undeclared), app_id (undeclared), p8_key (unmet), bundle_audience (unmet)")
        XCTAssertTrue(checks["gates.membership"]!.samples.isEmpty)
        XCTAssertTrue(HealthRunner.providers.contains { $0.group == "gates" })
    }

    func testMembershipRenewalWarnsAt30DaysAndIsCriticalFrom7() throws {
        try f.gates.set(GateChange(requirement: .membership, met: true, evidence: "paid", expires: f.renewal), actor: tester, now: f.t0)
        for (daysLeft, status) in [(31, HealthStatus.ok), (29, .warning), (30, .warning), (8, .warning), (7, .critical), (6, .critical), (0, .critical), (-2, .critical)] {
            let check = try checks(at: f.renewal.adding(seconds: -Int64(daysLeft) * 86_400))["gates.membership"]!
            XCTAssertEqual(check.status, status, "\(daysLeft) days left: \(check.summary)")
            XCTAssertEqual(check.samples, [HealthSample(metric: "gatehouse_membership_expiry_timestamp_seconds", labels: ["provider": "apple"],
                                                        value: Double(f.renewal.seconds), help: check.samples.first?.help ?? "")])
            if status != .ok { XCTAssertNotNil(check.action) }
            // The chart's number is the check's: days left, with the lines the status was judged by.
            XCTAssertEqual(check.gauge, HealthGauge(value: Double(daysLeft), warning: 30, critical: 7, lowerIsWorse: true))
        }
        XCTAssertTrue(try checks(at: f.renewal.adding(seconds: -6 * 86_400))["gates.membership"]!.summary.contains("in 6 day(s): renew it now"))
        XCTAssertTrue(try checks(at: f.renewal)["gates.membership"]!.summary.contains("expired on"))
        // The renewal is reported in the Prometheus file.
        let report = HealthRunner(providers: [GateHealthChecks()]).run(f.store, HealthContext(now: f.t0))
        XCTAssertTrue(PrometheusTextfile.render(report).contains("gatehouse_membership_expiry_timestamp_seconds{provider=\"apple\"} \(f.renewal.seconds)"))
    }

    func testMembershipLevels() {
        let renewal = f.renewal
        XCTAssertEqual(MembershipRenewal(renewsAt: renewal, now: renewal.adding(seconds: -31 * 86_400)).level, .ok)
        XCTAssertEqual(MembershipRenewal(renewsAt: renewal, now: renewal.adding(seconds: -29 * 86_400)).level, .warning)
        XCTAssertEqual(MembershipRenewal(renewsAt: renewal, now: renewal.adding(seconds: -6 * 86_400)).level, .critical)
        XCTAssertEqual(MembershipRenewal(renewsAt: renewal, now: renewal.adding(seconds: -6 * 86_400)).daysLeft, 6)
        XCTAssertEqual(MembershipRenewal(renewsAt: renewal, now: renewal.adding(seconds: 1)).level, .expired)
    }

    func testALapsedGateIsCriticalAndReadyOrLiveOnesAreOK() throws {
        try f.everythingReady()
        try f.gates.enable(.apple, on: .ios, reason: "r", actor: tester, now: f.t0)
        var checks = try self.checks(at: f.t0)
        XCTAssertEqual(checks["gates.apple.ios"]?.status, .ok)
        XCTAssertEqual(checks["gates.apple.ios"]?.summary, "apple on ios is live")
        XCTAssertEqual(checks["gates.apple.desktop"]?.status, .ok, "ready is not alarmed")
        try AppleKeyRing(store: f.store).revoke(try KeyID("ABCDEFGHIJ"), force: true, actor: tester, now: f.t0)
        checks = try self.checks(at: f.t0)
        XCTAssertEqual(checks["gates.apple.ios"]?.status, .critical)
        XCTAssertTrue(checks["gates.apple.ios"]!.summary.contains("enabled but has lapsed: p8_key (unmet)"))
        XCTAssertTrue(checks["gates.apple.ios"]!.action!.onCommandLine.contains("gatehouse gates disable apple --platform ios"))
        XCTAssertEqual(checks["gates.apple.desktop"]?.status, .ok, "never enabled: blocked, reported only")
        XCTAssertEqual(checks["gates.guideline_4_8"]?.status, .ok, "Google is not live on ios")
    }

    func testAGuideline48BreachIsCritical() throws {
        try f.everythingReady()
        try f.gates.enable(.apple, on: .ios, reason: "r", actor: tester, now: f.t0)
        try f.gates.enable(.google, on: .ios, reason: "r", actor: tester, now: f.t0)
        XCTAssertEqual(try checks(at: f.t0)["gates.guideline_4_8"]?.status, .ok)
        // The membership lapses: Apple is no longer live on ios, Google still is.
        let checks = try self.checks(at: f.renewal)
        XCTAssertEqual(checks["gates.guideline_4_8"]?.status, .critical)
        XCTAssertTrue(checks["gates.guideline_4_8"]!.summary.contains("google is live on ios but apple is lapsed there"))
        XCTAssertTrue(checks["gates.guideline_4_8"]!.action!.onCommandLine.contains("gatehouse gates disable google --platform ios"))
        XCTAssertEqual(checks["gates.membership"]?.status, .critical)
        let report = HealthRunner().run(f.store, HealthContext(now: f.renewal))
        XCTAssertEqual(report.status, .critical)
        XCTAssertEqual(report.status.exitCode, 2)
    }
}
