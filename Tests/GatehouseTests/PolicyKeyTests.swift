@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// Keys, value parsing and validation of the account-linking policy.
final class PolicyKeyTests: XCTestCase {
    func testDefaultsAreThePlansD3Configuration() {
        let policy = LinkingPolicy.defaults
        XCTAssertTrue(policy.enabled)
        XCTAssertEqual(policy.trustedProviders, ["google", "apple"])
        XCTAssertFalse(policy.disableImplicitLinking)
        XCTAssertTrue(policy.requireLocalEmailVerified)
        XCTAssertFalse(policy.allowUnlinkingAll)
        XCTAssertFalse(policy.autoLinkAllowDifferentEmails)
        XCTAssertFalse(policy.linkSocialAllowDifferentEmails)
        XCTAssertEqual(policy.risks, [])
        XCTAssertEqual(PolicyKey.allCases.count, 7)
    }

    func testBooleansAcceptOnlyTrueAndFalse() throws {
        let key = PolicyKey.linkSocialAllowDifferentEmails
        XCTAssertEqual(try key.parse("true"), .bool(true))
        XCTAssertEqual(try key.parse("FALSE"), .bool(false))
        for bad in ["yes", "1", "", "tru", "true false", "null"] {
            XCTAssertThrowsError(try key.parse(bad), bad) { error in
                let error = error as! GatehouseError
                XCTAssertEqual(error.code.rawValue, "invalid")
                XCTAssertTrue(error.message.contains("it takes true or false"), error.message)
            }
        }
    }

    func testProviderListsAsJSONOrCommaList() throws {
        let key = PolicyKey.trustedProviders
        XCTAssertEqual(try key.parse(#"["google","apple"]"#), .providers(["google", "apple"]))
        XCTAssertEqual(try key.parse("google, apple,google"), .providers(["google", "apple"]))
        XCTAssertEqual(try key.parse("[]"), .providers([]))
        XCTAssertEqual(try key.parse("email-password"), .providers(["email-password"]))
        XCTAssertThrowsError(try key.parse("")) { XCTAssertTrue("\($0)".contains("write [] for no trusted providers"), "\($0)") }
        // Better Auth takes any non-empty string as a (generic) provider id and matches it exactly: kept as spelt.
        XCTAssertEqual(try key.parse("Google,corp SSO"), .providers(["Google", "corp SSO"]))
        XCTAssertEqual(try key.parse(#"["AcmeSSO","acmesso"]"#), .providers(["AcmeSSO", "acmesso"]))
        XCTAssertThrowsError(try key.parse("google,goo\u{1B}[2Jgle")) { XCTAssertTrue("\($0)".contains("without control or invisible formatting characters"), "\($0)") }
        XCTAssertThrowsError(try key.parse("goo\u{200B}gle"))
        XCTAssertThrowsError(try key.parse(String(repeating: "p", count: 129)))
        XCTAssertThrowsError(try key.parse(#"["google""#)) { XCTAssertTrue("\($0)".contains("not a JSON array"), "\($0)") }
        XCTAssertThrowsError(try key.parse("google,,apple"))
        XCTAssertThrowsError(try key.parse((1...33).map { "p\($0)" }.joined(separator: ","))) { XCTAssertTrue("\($0)".contains("more than the 32"), "\($0)") }
        XCTAssertThrowsError(try key.check(.bool(true)))
        XCTAssertThrowsError(try PolicyKey.enabled.check(.providers([])))
    }

    func testUnknownKeysGetASuggestionAndTheListOfValidKeys() {
        func message(_ name: String) -> String {
            do { _ = try PolicyKey.named(name); return "" } catch { return "\(error)" }
        }
        XCTAssertTrue(message("linkSocial.alowDifferentEmail").contains(#"did you mean "linkSocial.allowDifferentEmails"?"#))
        XCTAssertTrue(message("allowDifferentEmails").contains(#"did you mean "autoLink.allowDifferentEmails" or "linkSocial.allowDifferentEmails"?"#))
        XCTAssertTrue(message("accountlinking.enabled").contains("keys are case-sensitive"))
        let unrelated = message("frobnicate")
        XCTAssertFalse(unrelated.contains("did you mean"), unrelated)
        for key in PolicyKey.allCases { XCTAssertTrue(unrelated.contains(key.rawValue), unrelated) }
        XCTAssertEqual(try PolicyKey.named("accountLinking.allowUnlinkingAll"), .allowUnlinkingAll)
    }

    func testAssignmentsForHypotheticals() throws {
        let (key, value) = try PolicyKey.assignment("accountLinking.trustedProviders=google")
        XCTAssertEqual(key, .trustedProviders)
        XCTAssertEqual(value, .providers(["google"]))
        XCTAssertThrowsError(try PolicyKey.assignment("linkSocial.allowDifferentEmails"))
        XCTAssertThrowsError(try PolicyKey.assignment("nope=true"))
        XCTAssertThrowsError(try PolicyKey.assignment("accountLinking.enabled=maybe"))
    }

    func testTakeoverAndOtherRisks() {
        XCTAssertTrue(PolicyKey.autoLinkAllowDifferentEmails.opensTakeover(.bool(true)))
        XCTAssertFalse(PolicyKey.linkSocialAllowDifferentEmails.opensTakeover(.bool(true)))
        let risky = LinkingPolicy.defaults.setting(.autoLinkAllowDifferentEmails, .bool(true)).setting(.requireLocalEmailVerified, .bool(false))
        XCTAssertEqual(risky.risks.map(\.severity), [.critical, .warning])
        XCTAssertEqual(LinkingPolicy.defaults.setting(.linkSocialAllowDifferentEmails, .bool(true)).risks, [])
    }

    func testValuesRoundTripThroughTheirStoredJSON() {
        for value: PolicyValue in [.bool(true), .bool(false), .providers([]), .providers(["google", "apple"])] {
            XCTAssertEqual(PolicyValue(json: value.json), value)
        }
        XCTAssertNil(PolicyValue(json: "yes"))
    }
}
