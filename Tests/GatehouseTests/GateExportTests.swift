@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The export: only live gates, never Google on ios without Apple, and when to read it again.
final class GateExportTests: XCTestCase {
    var f: GateFixture!

    override func setUpWithError() throws { f = try GateFixture() }

    func testOnlyLiveGatesAreOffered() throws {
        try f.everythingReady()
        var export = try f.gates.export(now: f.t0)
        XCTAssertEqual(export.offer, ["ios": [], "desktop": [], "web": []], "ready is not live")
        XCTAssertEqual(export.withheld.count, 6)
        XCTAssertEqual(export.withheld.first?.reason, "ready but not enabled")
        XCTAssertNil(export.validUntil)
        try f.gates.enable(.apple, on: .ios, reason: "r", actor: tester, now: f.t0)
        try f.gates.enable(.google, on: .ios, reason: "r", actor: tester, now: f.t0)
        try f.gates.enable(.google, on: .web, reason: "r", actor: tester, now: f.t0)
        export = try f.gates.export(now: f.t0)
        XCTAssertEqual(export.providers(on: .ios), [.apple, .google])
        XCTAssertEqual(export.providers(on: .web), [.google])
        XCTAssertEqual(export.providers(on: .desktop), [])
        XCTAssertEqual(export.validUntil, f.renewal, "the membership's renewal bounds the offer of Apple")
        let json = try JSONEncoder().encode(export)
        let decoded = try JSONDecoder().decode(GateExport.self, from: json)
        XCTAssertEqual(decoded, export)
    }

    func testGoogleIsNeverOfferedOnIOSWithoutApple() throws {
        try f.everythingReady()
        try f.gates.enable(.apple, on: .ios, reason: "r", actor: tester, now: f.t0)
        try f.gates.enable(.google, on: .ios, reason: "r", actor: tester, now: f.t0)
        try f.gates.enable(.google, on: .desktop, reason: "r", actor: tester, now: f.t0)
        // The membership expires: Apple lapses on ios, so Google is withheld there too (not on desktop).
        let export = try f.gates.export(now: f.renewal)
        XCTAssertEqual(export.providers(on: .ios), [])
        XCTAssertEqual(export.providers(on: .desktop), [.google])
        let google = export.withheld.first { $0.provider == .google && $0.platform == .ios }!
        XCTAssertEqual(google.state, .live)
        XCTAssertTrue(google.reason.contains("Guideline 4.8"), google.reason)
        let apple = export.withheld.first { $0.provider == .apple && $0.platform == .ios }!
        XCTAssertEqual(apple.reason, "lapsed: membership (expired)")
    }
}
