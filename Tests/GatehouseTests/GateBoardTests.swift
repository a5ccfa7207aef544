@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The gate's state machine: blocked, ready, live, lapsed; derived requirements following the key ring and the
/// provider configuration; lapse by membership expiry (injected clock) and by key revocation.
final class GateBoardTests: XCTestCase {
    var f: GateFixture!

    override func setUpWithError() throws { f = try GateFixture() }

    func testAFreshStoreIsBlockedEverywhereWithEveryRequirementListed() throws {
        let board = try f.gates.board(now: f.t0)
        XCTAssertEqual(board.gates.map(\.name), ["apple/ios", "apple/desktop", "apple/web", "google/ios", "google/desktop", "google/web"])
        XCTAssertTrue(board.gates.allSatisfy { $0.state == .blocked && !$0.enabled })
        XCTAssertEqual(board.gate(.apple, .ios).unmet, ["membership", "app_id", "p8_key", "bundle_audience"])
        XCTAssertEqual(board.gate(.apple, .desktop).unmet, ["membership", "services_id", "p8_key", "return_urls"])
        XCTAssertEqual(board.gate(.google, .web).unmet, ["oauth_client"])
        XCTAssertEqual(board.gate(.apple, .ios).requirements.first?.condition, .undeclared)
        XCTAssertNil(board.membership)
        XCTAssertNil(board.nextExpiry)
        XCTAssertFalse(board.guideline48.breached)
        // Every unmet requirement says how to meet it.
        XCTAssertTrue(board.gates.flatMap(\.requirements).allSatisfy { $0.isMet || $0.fix != nil })
    }

    func testEachStateInTurn() throws {
        try f.configureApple()
        try f.addKey()
        try f.declareApple()
        XCTAssertEqual(try f.state(.apple, .ios), .ready)
        try f.gates.enable(.apple, on: .ios, reason: "iOS 2.0", actor: tester, now: f.t0)
        XCTAssertEqual(try f.state(.apple, .ios), .live)
        try f.gates.set(GateChange(requirement: .appID, met: false, evidence: "capability removed by mistake"), actor: tester, now: f.t0)
        XCTAssertEqual(try f.state(.apple, .ios), .lapsed)
        XCTAssertEqual(try f.gates.board(now: f.t0).gate(.apple, .ios).unmet, ["app_id"])
        try f.gates.disable(.apple, on: .ios, reason: "until the App ID is fixed", actor: tester, now: f.t0)
        XCTAssertEqual(try f.state(.apple, .ios), .blocked)
    }

    func testMembershipExpiryLapsesEveryLiveAppleGateAtTheInjectedTime() throws {
        try f.everythingReady()
        try f.gates.enable(.apple, on: .ios, reason: "r", actor: tester, now: f.t0)
        try f.gates.enable(.apple, on: .desktop, reason: "r", actor: tester, now: f.t0)
        let justBefore = f.renewal.adding(seconds: -1)
        XCTAssertEqual(try f.state(.apple, .ios, at: justBefore), .live)
        XCTAssertEqual(try f.gates.board(now: justBefore).gate(.apple, .ios).nextExpiry, f.renewal)
        let board = try f.gates.board(now: f.renewal)
        XCTAssertEqual(board.gate(.apple, .ios).state, .lapsed)
        XCTAssertEqual(board.gate(.apple, .desktop).state, .lapsed)
        XCTAssertEqual(board.gate(.apple, .web).state, .blocked, "never enabled: blocked, not lapsed")
        let membership = board.gate(.apple, .ios).requirements.first { $0.requirement == .membership }!
        XCTAssertEqual(membership.condition, .expired)
        XCTAssertTrue(membership.fix!.contains("renew the membership"), membership.fix!)
        XCTAssertEqual(board.membership?.level, .expired)
        XCTAssertEqual(board.gate(.google, .ios).state, .ready, "Google does not depend on the membership")
        // Renewal recorded: live again.
        try f.gates.set(GateChange(requirement: .membership, met: true, evidence: "renewed", expires: f.day(600)), actor: tester, now: f.renewal)
        XCTAssertEqual(try f.state(.apple, .ios, at: f.renewal), .live)
    }

    func testKeyRevocationLapsesTheGateAndActivationRestoresIt() throws {
        try f.everythingReady()
        try f.gates.enable(.apple, on: .ios, reason: "r", actor: tester, now: f.t0)
        let ring = AppleKeyRing(store: f.store)
        try ring.revoke(try KeyID("ABCDEFGHIJ"), force: true, actor: tester, now: f.t0)
        let board = try f.gates.board(now: f.t0)
        XCTAssertEqual(board.gate(.apple, .ios).state, .lapsed)
        let p8 = board.gate(.apple, .ios).requirements.first { $0.requirement == .p8Key }!
        XCTAssertEqual(p8.condition, .unmet)
        XCTAssertTrue(p8.detail.contains("ABCDEFGHIJ revoked"), p8.detail)
        XCTAssertTrue(p8.fix!.onCommandLine.contains("gatehouse apple key import"), "no key left to activate: import one")
        try f.addKey("KLMNOPQRST")
        XCTAssertEqual(try f.state(.apple, .ios), .live)
    }

    func testP8KeyFollowsTheKeyRing() throws {
        try f.configureApple()
        try f.declareApple()
        func p8() throws -> GateRequirementStatus {
            try f.gates.board(now: f.t0).gate(.apple, .desktop).requirements.first { $0.requirement == .p8Key }!
        }
        XCTAssertEqual(try p8().detail, "the key ring is empty")
        let id = try f.addKey(activate: false)
        XCTAssertFalse(try p8().isMet, "a staged key is not active")
        XCTAssertEqual(try p8().fix?.onCommandLine, "activate a key with gatehouse apple key activate ABCDEFGHIJ")
        try AppleKeyRing(store: f.store).activate(id, actor: tester, now: f.t0)
        XCTAssertTrue(try p8().isMet)
        XCTAssertEqual(try p8().source, .derived)
        XCTAssertEqual(try f.state(.apple, .desktop), .ready)
    }

    func testBundleAudienceFollowsTheProviderConfiguration() throws {
        try f.addKey()
        try f.declareApple()
        func audience() throws -> GateRequirementStatus {
            try f.gates.board(now: f.t0).gate(.apple, .ios).requirements.first { $0.requirement == .bundleAudience }!
        }
        XCTAssertEqual(try audience().detail, "no bundle id is configured")
        try f.configureApple(acceptBundle: false)
        XCTAssertFalse(try audience().isMet)
        let rejected = try audience()
        XCTAssertTrue(rejected.detail.contains("would reject native iOS tokens (aud = com.example.app)"), rejected.detail)
        XCTAssertTrue(rejected.fix!.onCommandLine.contains("--audience com.example.app.web --audience com.example.app"), rejected.fix!.onCommandLine)
        // Desktop does not need the bundle id: only ios is blocked.
        XCTAssertEqual(try f.state(.apple, .desktop), .ready)
        XCTAssertEqual(try f.state(.apple, .ios), .blocked)
        try ProviderConfiguration(store: f.store).setApple(AppleProviderChange(audience: ["com.example.app.web", "com.example.app"]), actor: tester, now: f.t0)
        XCTAssertTrue(try audience().isMet)
        XCTAssertEqual(try f.state(.apple, .ios), .ready)
        // Bundle id alone (no audience list): Better Auth accepts it via appBundleIdentifier.
        try ProviderConfiguration(store: f.store).setApple(AppleProviderChange(audience: []), actor: tester, now: f.t0)
        XCTAssertTrue(try audience().isMet)
    }

    func testGoogleClientIDsArePerPlatform() throws {
        try f.configureGoogle([.ios])
        XCTAssertEqual(try f.state(.google, .ios), .ready)
        XCTAssertEqual(try f.state(.google, .desktop), .blocked)
        try f.configureGoogle([.desktop])
        XCTAssertEqual(try f.state(.google, .desktop), .ready)
        try f.gates.enable(.google, on: .desktop, reason: "desktop", actor: tester, now: f.t0)
        try ProviderConfiguration(store: f.store).setGoogle([.desktop: ""], actor: tester, now: f.t0)
        XCTAssertEqual(try f.state(.google, .desktop), .lapsed, "removing the client id lapses a live gate")
    }

    func testAPlatformDeclarationOverridesTheOneForAllPlatforms() throws {
        try f.everythingReady()
        try f.gates.set(GateChange(requirement: .returnURLs, platform: .web, met: false, evidence: "web return URL not registered yet"), actor: tester, now: f.t0)
        XCTAssertEqual(try f.state(.apple, .web), .blocked)
        XCTAssertEqual(try f.state(.apple, .desktop), .ready)
        let web = try f.gates.board(now: f.t0).gate(.apple, .web).requirements.first { $0.requirement == .returnURLs }!
        XCTAssertEqual(web.declaredFor, "web")
        XCTAssertEqual(web.evidence, "web return URL not registered yet")
    }

    func testNamesResolveWithDidYouMean() throws {
        XCTAssertEqual(try GatePlatform.named("iOS"), .ios)
        XCTAssertEqual(try GateRequirement.named("app-id", provider: .apple), .appID)
        assertRefused(try GateProvider.named("aple"), code: "invalid", #"unknown provider "aple"; did you mean apple?"#, "providers: apple, google")
        assertRefused(try GatePlatform.named("andriod"), code: "invalid", #"unknown platform "andriod""#, "platforms: ios, desktop, web")
        assertRefused(try GatePlatform.named("desktp"), "did you mean desktop?")
        assertRefused(try GateRequirement.named("membershp", provider: .apple), "did you mean membership?")
        assertRefused(try GateRequirement.named("membership", provider: .google), "membership is a requirement of apple, not of google", "google's requirements: oauth_client")
        assertRefused(try GateProvider.named(String(repeating: "x", count: 5000)), "unknown provider")
    }

    func testRequirementModel() {
        XCTAssertEqual(GateProvider.apple.requirements(on: .ios), [.membership, .appID, .p8Key, .bundleAudience])
        XCTAssertEqual(GateProvider.apple.requirements(on: .web), [.membership, .servicesID, .p8Key, .returnURLs])
        XCTAssertEqual(GateProvider.google.requirements(on: .ios), [.oauthClient])
        XCTAssertEqual(GateRequirement.allCases.filter { $0.source == .derived }, [.p8Key, .bundleAudience, .oauthClient])
    }
}
