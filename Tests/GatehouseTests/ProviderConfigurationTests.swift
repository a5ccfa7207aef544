@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// Better Auth 1.7's audience rule for Apple (`audience`, else `appBundleIdentifier`, else `clientId`) and the warnings.
final class ProviderConfigurationTests: XCTestCase {
    var scratch: Scratch!
    var config: ProviderConfiguration!
    let now = Timestamp(iso8601: "2026-06-01T12:00:00.000Z")!

    override func setUpWithError() throws {
        scratch = try Scratch()
        config = ProviderConfiguration(store: try Store.initialize(path: scratch.path("s.sqlite"), actor: tester).0)
    }

    func testAudienceRuleIsEitherOr() throws {
        var report = try config.setApple(AppleProviderChange(teamID: "TEAM123456", servicesID: "com.example.web"), actor: tester, now: now)
        XCTAssertEqual(report.apple.audienceSource, .clientId)
        XCTAssertEqual(report.apple.acceptedAudiences, ["com.example.web"])
        XCTAssertTrue(report.apple.findings.contains { $0.code == "no_bundle_id" })
        report = try config.setApple(AppleProviderChange(bundleID: "com.example.app"), actor: tester, now: now)
        XCTAssertEqual(report.apple.audienceSource, .appBundleIdentifier)
        XCTAssertEqual(report.apple.acceptedAudiences, ["com.example.app"])
        XCTAssertEqual(report.apple.desktopTokensAccepted, false)
        XCTAssertEqual(report.apple.nativeTokensAccepted, true)
        let desktop = report.apple.findings.first { $0.code == "desktop_tokens_rejected" }!
        XCTAssertEqual(desktop.reported, #"JWTClaimValidationFailed: unexpected "aud" claim value"#)
        XCTAssertTrue(desktop.fix!.onCommandLine.contains("--audience com.example.web --audience com.example.app"), desktop.fix!.onCommandLine)
        XCTAssertEqual(report.apple.recommendedConfig, #"apple({ clientId: "com.example.web", appBundleIdentifier: "com.example.app", audience: ["com.example.web", "com.example.app"], clientSecret })"#)
        report = try config.setApple(AppleProviderChange(audience: ["com.example.web"]), actor: tester, now: now)
        XCTAssertEqual(report.apple.audienceSource, .audience)
        XCTAssertEqual(report.apple.nativeTokensAccepted, false)
        XCTAssertTrue(report.apple.findings.contains { $0.code == "native_tokens_rejected" })
        report = try config.setApple(AppleProviderChange(audience: ["com.example.web", "com.example.app", "com.example.web"]), actor: tester, now: now)
        XCTAssertEqual(report.apple.acceptedAudiences, ["com.example.web", "com.example.app"])
        XCTAssertEqual(report.apple.findings.filter { $0.severity >= .warning }, [])
        report = try config.setApple(AppleProviderChange(audience: []), actor: tester, now: now)
        XCTAssertEqual(report.apple.audienceSource, .appBundleIdentifier)
        XCTAssertEqual(try config.store.audit.entries(config.store.db, .init(action: "providers.set")).count, 5)
    }

    func testBadInputIsRefusedAndChangesNothing() throws {
        XCTAssertThrowsError(try config.setApple(AppleProviderChange(teamID: "team123456", servicesID: "com.example.web"), actor: tester, now: now))
        XCTAssertThrowsError(try config.setApple(AppleProviderChange(servicesID: "com example web"), actor: tester, now: now))
        XCTAssertThrowsError(try config.setApple(AppleProviderChange(), actor: tester, now: now))
        XCTAssertEqual(try config.apple(), AppleProviderSettings())
        XCTAssertThrowsError(try ProviderConfiguration.googleAssignment("iso=abc")) { XCTAssertTrue("\($0)".contains("did you mean ios"), "\($0)") }
        XCTAssertThrowsError(try ProviderConfiguration.googleAssignment("ios"))
    }

    func testGoogleAcceptsEveryPlatformClientID() throws {
        let report = try config.setGoogle([.ios: "1-ios.apps.googleusercontent.com", .desktop: "1-desk.apps.googleusercontent.com"], actor: tester, now: now)
        XCTAssertEqual(report.google.acceptedAudiences, ["1-ios.apps.googleusercontent.com", "1-desk.apps.googleusercontent.com"])
        XCTAssertEqual(report.google.findings.map(\.code), ["audiences"])
        let removed = try config.setGoogle([.ios: ""], actor: tester, now: now)
        XCTAssertTrue(removed.google.findings.contains { $0.code == "no_ios_client_id" })
    }
}
