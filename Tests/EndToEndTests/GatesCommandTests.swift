import Foundation
import XCTest

/// `gatehouse gates` as an operator meets it: the built binary, its output and exit status, from a fresh store to
/// Apple and Google live on iOS, a lapse, and every kind of bad input.
final class GatesCommandTests: InitialisedStoreTestCase {
    @discardableResult
    func gates(_ arguments: [String], status expected: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> CLI.Result {
        try run(["gates"] + arguments, status: expected, file: file, line: line)
    }


    /// A date `days` from today, as operators write it.
    func date(_ days: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date().addingTimeInterval(Double(days) * 86_400))
    }

    func states() throws -> [String: String] {
        let board = try json(try gates(["show", "--json"])) as! [String: Any]
        return (board["gates"] as! [[String: Any]]).reduce(into: [:]) { result, gate in
            result["\(gate["provider"]!)/\(gate["platform"]!)"] = gate["state"] as? String
        }
    }

    /// Provider configuration, an active key made by openssl, and every Apple declaration: Apple and Google ready.
    func makeEverythingReady(renewalInDays days: Int = 365) throws {
        try run(["providers", "set", "apple", "--team-id", "TEAMID1234", "--services-id", "com.example.app.web", "--bundle-id", "com.example.app",
                 "--audience", "com.example.app.web,com.example.app"])
        try run(["providers", "set", "google", "--client-id", "ios=1-ios.apps.googleusercontent.com", "--client-id", "desktop=1-desktop.apps.googleusercontent.com"])
        let key = try AppleTools.p256Key("ABCDEFGHIJ", in: scratch.url.path)
        try run(["apple", "key", "import", key])
        try run(["apple", "key", "activate", "ABCDEFGHIJ"])
        try gates(["set", "apple", "membership", "met", "--evidence", "order W1, team TEAMID1234", "--expires", date(days), "--actor", "ops-ana"])
        try gates(["set", "apple", "app_id", "met", "--evidence", "capability on com.example.app"])
        try gates(["set", "apple", "services_id", "met", "--evidence", "com.example.app.web"])
        try gates(["set", "apple", "return_urls", "met", "--evidence", "https://sync.example.com/api/auth/callback/apple"])
    }

    func testFromBlockedToLiveWithGuideline48EnforcedAndALapse() throws {
        let fresh = try gates([])
        XCTAssertTrue(fresh.stdout.hasPrefix("""
            PROVIDER  IOS      DESKTOP  WEB
            apple     blocked  blocked  blocked
            google    blocked  blocked  blocked
            """), fresh.stdout)
        XCTAssertTrue(fresh.stdout.contains("membership: not declared met"), fresh.stdout)
        XCTAssertTrue(fresh.stdout.contains("gatehouse apple key import AuthKey_<KEYID>.p8"), fresh.stdout)
        XCTAssertEqual(try gates(["history"]).stdout, "no gate changes yet\n")
        XCTAssertEqual(try run(["health"]).status, 0, "before Apple is live: reported, not alarmed")

        try makeEverythingReady()
        XCTAssertEqual(try states(), ["apple/ios": "ready", "apple/desktop": "ready", "apple/web": "ready",
                                      "google/ios": "ready", "google/desktop": "ready", "google/web": "blocked"])

        let early = try gates(["enable", "google", "--platform", "ios", "--reason", "iOS 2.0"], status: 1)
        XCTAssertTrue(early.stderr.contains("refusing to enable google on ios: apple is ready on ios. App Store Review Guideline 4.8"), early.stderr)
        XCTAssertTrue(early.stderr.contains("fix: make Apple live on ios first: gatehouse gates enable apple --platform ios"), early.stderr)
        XCTAssertEqual(try gates(["enable", "apple", "--platform", "ios", "--reason", "iOS 2.0", "--actor", "ops-bo"]).stdout,
                       "apple on ios: enabled (now live)\n")
        try gates(["enable", "google", "--platform", "ios", "--reason", "iOS 2.0"])
        XCTAssertEqual(try gates(["enable", "google", "--platform", "ios", "--reason", "again"]).stdout,
                       "google on ios is already enabled (live); nothing changed\n")
        let disable = try gates(["disable", "apple", "--platform", "ios", "--reason", "cost"], status: 1)
        XCTAssertTrue(disable.stderr.contains("refusing to disable apple on ios: google is live there. App Store Review Guideline 4.8"), disable.stderr)
        XCTAssertTrue(disable.stderr.contains("fix: disable google on ios first: gatehouse gates disable google --platform ios"), disable.stderr)
        let blocked = try gates(["enable", "google", "--platform", "web", "--reason", "web"], status: 1)
        XCTAssertTrue(blocked.stderr.contains("refusing to enable google on web: it is blocked by oauth_client (unmet)"), blocked.stderr)
        XCTAssertTrue(blocked.stderr.contains("gatehouse providers set google --client-id web=<client id>"), blocked.stderr)

        XCTAssertEqual(try gates(["export"]).stdout.split(separator: "\n").prefix(3), ["ios: apple, google", "desktop: (none)", "web: (none)"])
        let export = try json(try gates(["export", "--json"])) as! [String: Any]
        XCTAssertEqual(export["offer"] as? [String: [String]], ["ios": ["apple", "google"], "desktop": [], "web": []])
        XCTAssertNotNil(export["validUntil"])

        let history = try json(try gates(["history", "--json"])) as! [[String: Any]]
        XCTAssertEqual(history.map { $0["action"] as! String }, ["enable", "enable", "set", "set", "set", "set"])
        XCTAssertEqual(history[1]["actor"] as? String, "ops-bo")
        XCTAssertEqual(history.last?["actor"] as? String, "ops-ana")
        XCTAssertEqual(history.last?["text"] as? String, "order W1, team TEAMID1234")
        let audit = try run(["audit", "list", "--action", "gates.*"])
        let enableLine = audit.stdout.split(separator: "\n").first { $0.contains("gates.enable") && $0.contains("apple/ios") }
        XCTAssertTrue(enableLine?.contains("ops-bo") == true, audit.stdout)
        XCTAssertTrue(enableLine?.contains("reason=iOS 2.0 to_state=live") == true, audit.stdout)
        XCTAssertTrue(audit.stdout.contains("apple/membership/all"), audit.stdout)
        // Every gate is fine; with Google configured, only google.risc warns until the Cross-Account Protection stream is set up.
        let live = try run(["health"], status: 1).stdout
        XCTAssertEqual(live.split(separator: "\n").filter { $0.contains("[warning]") || $0.contains("[critical]") }.map { $0.trimmingCharacters(in: .whitespaces) },
                       ["[warning] google.risc: Google's Cross-Account Protection stream is not enabled: Google's security events about your users are not received"], live)

        // The key is revoked in Apple's portal: Apple lapses, Google on ios is a Guideline 4.8 breach and withheld.
        try run(["apple", "key", "revoke", "ABCDEFGHIJ", "--force"])
        let lapsed = try gates(["show"])
        XCTAssertTrue(lapsed.stdout.contains("apple     lapsed  blocked  blocked"), lapsed.stdout)
        XCTAssertTrue(lapsed.stdout.contains("CRITICAL: Guideline 4.8 breach: google is live on ios but apple is lapsed there"), lapsed.stdout)
        let health = try run(["health"], status: 2)
        XCTAssertTrue(health.stdout.contains("[critical] gates.guideline_4_8"), health.stdout)
        XCTAssertTrue(health.stdout.contains("[critical] gates.apple.ios: apple on ios is enabled but has lapsed: p8_key (unmet)"), health.stdout)
        XCTAssertTrue(health.stdout.contains("[ok] gates.apple.web"), health.stdout)
        XCTAssertTrue(health.stdout.contains("[critical] apple.active_key: Apple is live but no key is active"), health.stdout)
        let withheld = try json(try gates(["export", "--json"])) as! [String: Any]
        XCTAssertEqual((withheld["offer"] as? [String: [String]])?["ios"], [])
        // The way out: Google first, then Apple.
        try gates(["disable", "google", "--platform", "ios", "--reason", "Apple key revoked"])
        try gates(["disable", "apple", "--platform", "ios", "--reason", "Apple key revoked"])
        XCTAssertEqual(try states()["apple/ios"], "blocked")
    }

    func testMembershipRenewalWarningsInShowAndHealth() throws {
        try gates(["set", "apple", "membership", "met", "--evidence", "paid", "--expires", date(20)])
        let show = try gates(["show"])
        XCTAssertTrue(show.stdout.contains("membership: WARNING: the Apple Developer Program membership renews on \(date(20))"), show.stdout)
        let prom = scratch.path("gatehouse.prom")
        let warning = try run(["health", "--prometheus", prom], status: 1)
        XCTAssertTrue(warning.stdout.contains("[warning] gates.membership"), warning.stdout)
        let text = try String(contentsOfFile: prom, encoding: .utf8)
        XCTAssertTrue(text.contains("# TYPE gatehouse_membership_expiry_timestamp_seconds gauge\ngatehouse_membership_expiry_timestamp_seconds{provider=\"apple\"} "), text)
        try gates(["set", "apple", "membership", "met", "--evidence", "paid", "--expires", date(5)])
        XCTAssertTrue(try run(["health"], status: 2).stdout.contains("[critical] gates.membership"))
        XCTAssertTrue(try gates(["show"]).stdout.contains("membership: CRITICAL:"))
        try gates(["set", "apple", "membership", "met", "--evidence", "renewed", "--expires", date(40)])
        XCTAssertEqual(try run(["health"]).status, 0)
    }

    func testHostileAndBadInputIsRefusedWithTheRightExitCodeAndWritesNothing() throws {
        func refused(_ arguments: [String], status: Int32, _ words: [String], file: StaticString = #filePath, line: UInt = #line) throws {
            let result = try gates(arguments, status: status, file: file, line: line)
            XCTAssertEqual(result.stdout, "", file: file, line: line)
            for word in words { XCTAssertTrue(result.stderr.contains(word), "expected \"\(word)\" in: \(result.stderr.prefix(2000))", file: file, line: line) }
            XCTAssertLessThan(result.stderr.count, 1500, "input is not echoed back in full", file: file, line: line)
        }
        let ok = ["--evidence", "checked"]
        // Unknown names: exit 1 with a did-you-mean.
        try refused(["set", "aple", "membership", "met"] + ok, status: 1, [#"unknown provider "aple"; did you mean apple?"#, "providers: apple, google"])
        try refused(["set", "apple", "membershp", "met"] + ok, status: 1, [#"unknown apple requirement "membershp"; did you mean membership?"#])
        try refused(["set", "google", "membership", "met"] + ok, status: 1, ["membership is a requirement of apple, not of google"])
        try refused(["set", "apple", "app_id", "met", "--platform", "andriod"] + ok, status: 1, [#"unknown platform "andriod""#, "platforms: ios, desktop, web"])
        try refused(["enable", "apple", "--platform", "iso", "--reason", "x"], status: 1, ["did you mean ios?"])
        try refused(["set", "apple", "app_id", "maybe"] + ok, status: 1, [#""maybe" is not a requirement state"#, "met or unmet"])
        try refused(["set", "'; DROP TABLE gatehouse_gates; --", "app_id", "met"] + ok, status: 1, ["unknown provider"])
        try refused(["set", String(repeating: "A", count: 10_000), "app_id", "met"] + ok, status: 1, ["unknown provider"])
        // Derived requirements: exit 1, naming how they are met.
        try refused(["set", "apple", "p8_key", "met"] + ok, status: 1, ["p8_key cannot be set by hand", "gatehouse apple key import"])
        try refused(["set", "google", "oauth_client", "met", "--platform", "ios"] + ok, status: 1, ["gatehouse providers set google --client-id ios="])
        // Dates.
        try refused(["set", "apple", "membership", "met", "--expires", "2027-02-30"] + ok, status: 1, ["2027-02-30 is not a day of the calendar"])
        try refused(["set", "apple", "membership", "met", "--expires", "next tuesday"] + ok, status: 1, [#"--expires "next tuesday" is not a date"#, "YYYY-MM-DD"])
        try refused(["set", "apple", "membership", "met", "--expires", "9999-12-31"] + ok, status: 1, ["out of range"])
        try refused(["set", "apple", "membership", "met"] + ok, status: 1, ["membership met needs its renewal date"])
        try refused(["set", "apple", "membership", "met", "--expires", date(-2)] + ok, status: 1, ["is in the past", "add --force"])
        try refused(["set", "apple", "app_id", "unmet", "--expires", date(30)] + ok, status: 1, ["--expires applies only to a requirement declared met"])
        try refused(["set", "apple", "membership", "met", "--platform", "ios", "--expires", date(30)] + ok, status: 1, ["belongs to the whole Apple team"])
        // Evidence and reasons.
        try refused(["set", "apple", "app_id", "met", "--evidence", ""], status: 2, ["missing --evidence"])
        try refused(["set", "apple", "app_id", "met"], status: 2, ["missing --evidence"])
        try refused(["set", "apple", "app_id", "met", "--evidence", "   "], status: 1, ["the evidence is empty"])
        try refused(["set", "apple", "app_id", "met", "--evidence", String(repeating: "x", count: 2001)], status: 1,
                    ["the evidence is 2001 characters; at most 2000 are kept"])
        try refused(["set", "apple", "app_id", "met", "--evidence", "ok\u{1B}]0;pwned\u{07}"], status: 1, ["control characters"])
        try refused(["enable", "apple", "--platform", "ios"], status: 2, ["missing --reason"])
        try refused(["enable", "apple", "--reason", "x"], status: 2, ["missing --platform"])
        try refused(["enable", "apple", "--platform", "ios", "--reason", String(repeating: "r", count: 5000)], status: 1, ["the reason is 5000 characters"])
        // Usage.
        try refused(["set", "apple", "app_id"] + ok, status: 2, ["missing STATE"])
        try refused(["set", "apple", "app_id", "met", "extra"] + ok, status: 2, [#"unexpected argument "extra""#])
        try refused(["set", "apple", "app_id", "met", "--evidnce", "x"], status: 2, ["--evidnce"])
        try refused(["enabel", "apple"], status: 2, ["did you mean"])
        XCTAssertEqual(try sqlite3(store, "SELECT (SELECT count(*) FROM gatehouse_gate_requirements) + (SELECT count(*) FROM gatehouse_gates) + (SELECT count(*) FROM gatehouse_gate_history) + (SELECT count(*) FROM gatehouse_audit WHERE action LIKE 'gates.%');"), "0")

        // A past renewal date with --force is recorded, warned about, and reads as expired.
        let forced = try gates(["set", "apple", "membership", "met", "--expires", date(-2), "--force"] + ok)
        XCTAssertTrue(forced.stderr.contains("warning: the expiry"), forced.stderr)
        XCTAssertTrue(forced.stderr.contains("accepted with --force"), forced.stderr)
        XCTAssertEqual(try run(["health"], status: 2).status, 2, "an expired membership is critical")
        let history = try json(try gates(["history", "--json"])) as! [[String: Any]]
        XCTAssertEqual(history.first?["forced"] as? Bool, true)
        // Help is available on every level.
        XCTAssertTrue(try gates(["set", "--help"]).stdout.contains("Derived requirements (p8_key, bundle_audience, oauth_client) cannot be set"))
    }
}
