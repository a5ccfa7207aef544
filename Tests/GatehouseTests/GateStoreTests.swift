@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// Declaring, enabling and disabling: every refusal (derived requirements, dates, evidence, Guideline 4.8 both
/// ways) leaves no row, no history and no audit entry; every change leaves all three.
final class GateStoreTests: XCTestCase {
    var f: GateFixture!

    override func setUpWithError() throws { f = try GateFixture() }

    /// Row counts of everything a gate change writes.
    func footprint() throws -> [Int64] {
        try ["gatehouse_gate_requirements", "gatehouse_gates", "gatehouse_gate_history", "gatehouse_audit"].map { try f.count($0) }
    }

    func testDerivedRequirementsCannotBeSetAndSayHowTheyAreMet() throws {
        try f.configureApple(acceptBundle: false)
        try f.addKey(activate: false)
        let before = try footprint()
        assertRefused(try f.gates.set(GateChange(requirement: .p8Key, met: true, evidence: "x"), actor: tester, now: f.t0),
                      code: "derived", "p8_key cannot be set by hand", "no active key (ABCDEFGHIJ staged)",
                      "activate a key with gatehouse apple key activate ABCDEFGHIJ")
        assertRefused(try f.gates.set(GateChange(requirement: .bundleAudience, met: true, evidence: "x"), actor: tester, now: f.t0),
                      code: "derived", "bundle_audience cannot be set by hand", "gatehouse providers set apple --audience")
        assertRefused(try f.gates.set(GateChange(requirement: .oauthClient, platform: .desktop, met: true, evidence: "x"), actor: tester, now: f.t0),
                      code: "derived", "unmet on desktop now", "gatehouse providers set google --client-id desktop=<client id>")
        XCTAssertEqual(try footprint(), before)
    }

    func testBadDeclarationsAreRefusedAndWriteNothing() throws {
        let before = try footprint()
        let past = f.day(-1)
        let cases: [(GateChange, [String])] = [
            (GateChange(requirement: .membership, met: true, evidence: "paid"), ["membership met needs its renewal date", "--expires YYYY-MM-DD"]),
            (GateChange(requirement: .membership, met: true, evidence: "paid", expires: past),
             ["is in the past", "not accepted as met", "add --force"]),
            (GateChange(requirement: .membership, met: true, evidence: "paid", expires: f.day(6 * 366)), ["more than 5 years ahead"]),
            (GateChange(requirement: .membership, platform: .ios, met: true, evidence: "paid", expires: f.day(100)), ["belongs to the whole Apple team", "omit --platform"]),
            (GateChange(requirement: .appID, platform: .web, met: true, evidence: "x"), ["app_id applies to ios only, not to web"]),
            (GateChange(requirement: .servicesID, platform: .ios, met: true, evidence: "x"), ["services_id applies to desktop and web only"]),
            (GateChange(requirement: .appID, met: false, evidence: "x", expires: f.day(10)), ["--expires applies only to a requirement declared met"]),
            (GateChange(requirement: .appID, met: true, evidence: "  \n "), ["the evidence is empty"]),
            (GateChange(requirement: .appID, met: true, evidence: String(repeating: "e", count: 2001)), ["the evidence is 2001 characters; at most 2000 are kept"]),
            (GateChange(requirement: .appID, met: true, evidence: "ok\u{1B}[2Jcleared"), ["control characters"]),
        ]
        for (change, words) in cases {
            XCTAssertThrowsError(try f.gates.set(change, actor: tester, now: f.t0)) { error in
                let text = (error as? GatehouseError)?.markedDescription.onCommandLine ?? "\(error)"
                for word in words { XCTAssertTrue(text.contains(word), "expected \"\(word)\" in: \(text)") }
                XCTAssertLessThan("\(error)".count, 600, "the input is not echoed back in full")
            }
        }
        XCTAssertEqual(try footprint(), before)
        // Exactly 2000 is kept.
        XCTAssertNoThrow(try f.gates.set(GateChange(requirement: .appID, met: true, evidence: String(repeating: "é", count: 2000)), actor: tester, now: f.t0))
    }

    func testAPastRenewalDateWithForceIsRecordedAsExpired() throws {
        let result = try f.gates.set(GateChange(requirement: .membership, met: true, evidence: "old receipt", expires: f.day(-3), force: true), actor: tester, now: f.t0)
        XCTAssertTrue(result.warnings.contains { $0.onCommandLine.contains("accepted with --force") }, "\(result.warnings)")
        XCTAssertEqual(result.board.gate(.apple, .ios).requirements.first?.condition, .expired)
        XCTAssertEqual(try f.gates.history().first?.forced, true)
        XCTAssertEqual(try f.store.audit.entries(f.store.db, .init(action: "gates.set")).first?.details["forced_past_date"], .bool(true))
        // A future date with --force is simply a date: not marked forced.
        try f.gates.set(GateChange(requirement: .membership, met: true, evidence: "renewed", expires: f.day(300), force: true), actor: tester, now: f.t0)
        XCTAssertEqual(try f.gates.history().first?.forced, false)
    }

    func testEveryChangeIsAuditedAndInTheHistory() throws {
        try f.everythingReady()
        try f.gates.enable(.apple, on: .ios, reason: "iOS 2.0 ships Sign in with Apple", actor: Actor("ops-ana"), now: f.day(1))
        try f.gates.disable(.apple, on: .ios, reason: "rollback of 2.0", actor: Actor("ops-bo"), now: f.day(2))
        let history = try f.gates.history()
        XCTAssertEqual(history.map(\.action), [.disable, .enable, .set, .set, .set, .set])
        XCTAssertEqual(history[0].actor, "ops-bo")
        XCTAssertEqual(history[0].text, "rollback of 2.0")
        XCTAssertEqual(history[0].fromState, .live)
        XCTAssertEqual(history[0].toState, .ready)
        XCTAssertEqual(history[1].fromState, .ready)
        XCTAssertEqual(history[1].toState, .live)
        let membership = history.last!
        XCTAssertEqual(membership.requirement, "membership")
        XCTAssertEqual(membership.platform, "all")
        XCTAssertEqual(membership.met, true)
        XCTAssertEqual(membership.expiresAt, f.renewal)
        XCTAssertEqual(membership.text, "order W1")
        let audit = try f.store.audit.entries(f.store.db, .init(action: "gates.*"))
        XCTAssertEqual(Set(audit.map(\.action)), ["gates.set", "gates.enable", "gates.disable"])
        let enable = audit.first { $0.action == "gates.enable" }!
        XCTAssertEqual(enable.actor, "ops-ana")
        XCTAssertEqual(enable.subject, "apple/ios")
        XCTAssertEqual(enable.details["reason"], .string("iOS 2.0 ships Sign in with Apple"))
        XCTAssertEqual(enable.details["to_state"], .string("live"))
        let set = audit.first { $0.action == "gates.set" && $0.subject == "apple/membership/all" }!
        XCTAssertEqual(set.details["expires_at"], .string(f.renewal.iso8601))
        // The history cannot be rewritten.
        XCTAssertThrowsError(try f.store.db.execute("DELETE FROM gatehouse_gate_history"))
        XCTAssertThrowsError(try f.store.db.execute("UPDATE gatehouse_gate_history SET actor = 'x'"))
    }

    func testEnablingNeedsReadyAndRepeatingChangesNothing() throws {
        try f.configureApple()
        let before = try footprint()
        assertRefused(try f.gates.enable(.apple, on: .ios, reason: "too early", actor: tester, now: f.t0), code: "conflict",
                      "refusing to enable apple on ios: it is blocked by membership (undeclared), app_id (undeclared), p8_key (unmet)",
                      "gatehouse gates set apple membership met")
        assertRefused(try f.gates.enable(.apple, on: .ios, reason: "  ", actor: tester, now: f.t0), code: "invalid", "the reason is empty")
        XCTAssertEqual(try footprint(), before)
        try f.addKey()
        try f.declareApple()
        XCTAssertTrue(try f.gates.enable(.apple, on: .ios, reason: "go", actor: tester, now: f.t0).changed)
        let after = try footprint()
        let again = try f.gates.enable(.apple, on: .ios, reason: "go again", actor: tester, now: f.t0)
        XCTAssertFalse(again.changed)
        XCTAssertEqual(again.gate.state, .live)
        XCTAssertFalse(try f.gates.disable(.google, on: .web, reason: "never on", actor: tester, now: f.t0).changed)
        XCTAssertEqual(try footprint(), after, "no-op enables and disables write nothing")
    }

    func testSettingARequirementUnmetOnALiveGateWarnsThatItLapsed() throws {
        try f.everythingReady()
        try f.gates.enable(.apple, on: .desktop, reason: "r", actor: tester, now: f.t0)
        let result = try f.gates.set(GateChange(requirement: .servicesID, met: false, evidence: "Services ID deleted"), actor: tester, now: f.t0)
        XCTAssertEqual(result.transitions, [GateTransition(gate: "apple/desktop", from: .live, to: .lapsed), GateTransition(gate: "apple/web", from: .ready, to: .blocked)])
        XCTAssertTrue(result.warnings.first!.contains("apple on desktop is now lapsed"), "\(result.warnings)")
        XCTAssertEqual(result.previous?.met, true)
    }

    func testGoogleCannotBeEnabledOnIOSUnlessAppleIsLive() throws {
        try f.everythingReady()
        let before = try footprint()
        assertRefused(try f.gates.enable(.google, on: .ios, reason: "iOS 2.0", actor: tester, now: f.t0), code: "guideline_4_8",
                      "refusing to enable google on ios: apple is ready on ios", "Guideline 4.8",
                      "gatehouse gates enable apple --platform ios")
        XCTAssertEqual(try footprint(), before)
        // Google elsewhere is not affected.
        XCTAssertTrue(try f.gates.enable(.google, on: .desktop, reason: "desktop", actor: tester, now: f.t0).changed)
        // Apple blocked on ios: the refusal names what blocks it.
        try f.gates.set(GateChange(requirement: .appID, met: false, evidence: "capability missing"), actor: tester, now: f.t0)
        assertRefused(try f.gates.enable(.google, on: .ios, reason: "iOS 2.0", actor: tester, now: f.t0), code: "guideline_4_8",
                      "apple is blocked on ios", "blocked by app_id (unmet)")
        try f.gates.set(GateChange(requirement: .appID, met: true, evidence: "capability added"), actor: tester, now: f.t0)
        try f.gates.enable(.apple, on: .ios, reason: "iOS 2.0", actor: tester, now: f.t0)
        XCTAssertTrue(try f.gates.enable(.google, on: .ios, reason: "iOS 2.0", actor: tester, now: f.t0).changed)
        XCTAssertEqual(try f.state(.google, .ios), .live)
    }

    func testAppleCannotBeDisabledOnIOSWhileGoogleIsEnabledThere() throws {
        try f.everythingReady()
        try f.gates.enable(.apple, on: .ios, reason: "r", actor: tester, now: f.t0)
        try f.gates.enable(.google, on: .ios, reason: "r", actor: tester, now: f.t0)
        let before = try footprint()
        assertRefused(try f.gates.disable(.apple, on: .ios, reason: "cost cutting", actor: tester, now: f.t0), code: "guideline_4_8",
                      "refusing to disable apple on ios: google is live there", "Guideline 4.8",
                      "disable google on ios first: gatehouse gates disable google --platform ios")
        XCTAssertEqual(try footprint(), before)
        // Still refused when Apple itself has lapsed: Google must go first.
        try AppleKeyRing(store: f.store).revoke(try KeyID("ABCDEFGHIJ"), force: true, actor: tester, now: f.t0)
        assertRefused(try f.gates.disable(.apple, on: .ios, reason: "key revoked", actor: tester, now: f.t0), code: "guideline_4_8")
        // Apple elsewhere is not affected.
        XCTAssertTrue(try f.gates.disable(.apple, on: .desktop, reason: "x", actor: tester, now: f.t0).changed == false)
        try f.gates.disable(.google, on: .ios, reason: "Apple key revoked", actor: tester, now: f.t0)
        XCTAssertTrue(try f.gates.disable(.apple, on: .ios, reason: "key revoked", actor: tester, now: f.t0).changed)
    }

    func testDatesAreValidated() throws {
        XCTAssertEqual(try GateInput.date("2027-03-01", field: .expires), Timestamp(iso8601: "2027-03-01T00:00:00.000Z"))
        XCTAssertEqual(try GateInput.date("2027-03-01T10:00:00+02:00", field: .expires), Timestamp(iso8601: "2027-03-01T08:00:00.000Z"))
        assertRefused(try GateInput.date("2027-02-30", field: .expires), code: "invalid", "2027-02-30 is not a day of the calendar")
        assertRefused(try GateInput.date("2026-02-29", field: .expires), "not a day of the calendar")
        XCTAssertNoThrow(try GateInput.date("2028-02-29", field: .expires))
        for bad in ["01/03/2027", "tomorrow", "", "2027-3-1", "2027-03-01T25:00:00Z", "2027-03-01; DROP TABLE x", String(repeating: "9", count: 500)] {
            assertRefused(try GateInput.date(bad, field: .expires), code: "invalid", "--expires")
        }
        assertRefused(try GateInput.date("9999-12-31", field: .expires), "out of range")
        assertRefused(try GateInput.date("1970-01-01", field: .expires), "out of range")
    }
}
