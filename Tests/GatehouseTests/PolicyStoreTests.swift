@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// Setting, timed reverts computed on read, conditional changes, history, audit and export, on the tests' in-memory
/// engine (`MemoryStoreEngine`): the policy service needs no file.
final class PolicyStoreTests: XCTestCase {
    var scratch: Scratch!
    var store: Store!
    var policy: PolicyStore!
    let t0 = Timestamp(iso8601: "2026-06-01T12:00:00.000Z")!
    let ops = Actor("ops-alice")

    override func setUpWithError() throws {
        scratch = try Scratch()
        memory = "policy-\(UInt32.random(in: .min ... .max))"
        store = try Store.initialize(path: "memory:" + memory, actor: tester).0
        policy = PolicyStore(store: store)
    }

    override func tearDown() {
        MemoryStores.drop(memory)
    }

    var memory = ""

    func minutes(_ n: Int64) -> Timestamp { t0.adding(seconds: n * 60) }

    func change(_ key: PolicyKey, _ value: PolicyValue, _ reason: String = "SUP-1", for duration: Seconds? = nil,
                ifVersion: Int? = nil, accept: Bool = false) -> PolicyChange {
        PolicyChange(key: key, value: value, reason: reason, duration: duration, ifVersion: ifVersion, acceptTakeoverRisk: accept)
    }

    func entry(_ key: PolicyKey, at now: Timestamp) throws -> PolicyEntry {
        try policy.snapshot(now: now).entries.first { $0.key == key.rawValue }!
    }

    func auditActions() throws -> [String] {
        try store.audit.entries(store.db, .init(action: "policy.*", limit: 1000)).reversed().map { "\($0.actor) \($0.action) \($0.subject ?? "")" }
    }

    func testAFreshStoreHoldsTheDefaultsAtVersionZero() throws {
        let snapshot = try policy.snapshot(now: t0)
        XCTAssertEqual(snapshot.version, 0)
        XCTAssertEqual(snapshot.policy, LinkingPolicy.defaults)
        XCTAssertTrue(snapshot.entries.allSatisfy { $0.isDefault && $0.setBy == nil })
        XCTAssertNil(snapshot.nextRevertAt)
        XCTAssertEqual(try policy.history(now: t0), [])
    }

    func testASetIsRecordedInPolicyHistoryAndAuditWithOneVersion() throws {
        let result = try policy.set(change(.linkSocialAllowDifferentEmails, .bool(true), "D3 ratified"), actor: ops, now: t0)
        XCTAssertEqual(result.version, 1)
        XCTAssertEqual(result.from, .bool(false))
        XCTAssertEqual(result.to, .bool(true))
        let shown = try entry(.linkSocialAllowDifferentEmails, at: minutes(1))
        XCTAssertEqual(shown.value, .bool(true))
        XCTAssertEqual(shown.setBy, "ops-alice")
        XCTAssertEqual(shown.setAt, t0)
        XCTAssertEqual(shown.reason, "D3 ratified")
        XCTAssertEqual(shown.changedInVersion, 1)
        XCTAssertFalse(shown.isDefault)
        XCTAssertNil(shown.revertsAt)
        let history = try policy.history(now: t0)
        XCTAssertEqual(history.map(\.version), [1])
        XCTAssertEqual(history.first?.kind, .set)
        XCTAssertEqual(history.first?.actor, "ops-alice")
        let audit = try store.audit.entries(store.db, .init(action: "policy.set"))
        XCTAssertEqual(audit.count, 1)
        XCTAssertEqual(audit.first?.details["version"], .int(1))
        XCTAssertEqual(audit.first?.details["to"], .string("true"))
        XCTAssertEqual(audit.first?.details["reason"], .string("D3 ratified"))
        XCTAssertTrue(try store.audit.verify(store.db).isIntact)
    }

    func testRefusedChangesWriteNothing() throws {
        let refusals: [(PolicyChange, Actor, String)] = [
            (change(.enabled, .bool(false), "   "), ops, "a reason is required"),
            (change(.enabled, .bool(false), String(repeating: "x", count: 2001)), ops, "2001 characters; at most 2000"),
            (change(.enabled, .bool(false), "bell\u{7}"), ops, "control characters"),
            (change(.enabled, .bool(false), for: Seconds(0)), ops, "--for 0s is outside 1m to 30d"),
            (change(.enabled, .bool(false), for: Seconds(59)), ops, "outside"),
            (change(.enabled, .bool(false), for: Seconds(30 * 86_400 + 1)), ops, "outside"),
            (change(.enabled, .providers(["google"])), ops, "is not a boolean"),
            (change(.autoLinkAllowDifferentEmails, .bool(true)), ops, "account takeover"),
            (change(.enabled, .bool(false)), PolicyStore.timerActor, "reserved for automatic reverts"),
        ]
        for (request, actor, expected) in refusals {
            XCTAssertThrowsError(try policy.set(request, actor: actor, now: t0)) { error in
                let shown = (error as? GatehouseError)?.markedDescription.onCommandLine ?? "\(error)"
                XCTAssertTrue(shown.contains(expected), "\(shown) should contain \(expected)")
            }
        }
        XCTAssertEqual(try policy.snapshot(now: t0).version, 0)
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_policy_history").int64, 0)
        XCTAssertEqual(try auditActions(), [])
        // The limits themselves are accepted.
        XCTAssertNoThrow(try policy.set(change(.enabled, .bool(true), String(repeating: "x", count: 2000), for: Seconds(30 * 86_400)), actor: ops, now: t0))
        XCTAssertNoThrow(try policy.set(change(.enabled, .bool(true), "multi\nline\treason", for: Seconds(60)), actor: ops, now: t0))
    }

    func testTakeoverRiskMustBeAcceptedAndIsAudited() throws {
        try policy.set(change(.autoLinkAllowDifferentEmails, .bool(true), accept: true), actor: ops, now: t0)
        XCTAssertEqual(try policy.snapshot(now: t0).risks.map(\.severity), [.critical])
        XCTAssertEqual(try store.audit.entries(store.db, .init(action: "policy.set")).first?.details["takeover_risk_accepted"], .bool(true))
        // Turning it back off needs no acceptance.
        XCTAssertNoThrow(try policy.set(change(.autoLinkAllowDifferentEmails, .bool(false)), actor: ops, now: t0))
    }

    func testIfVersionRefusesAStaleChangeNamingTheCurrentVersion() throws {
        try policy.set(change(.enabled, .bool(false), ifVersion: 0), actor: ops, now: t0)
        try policy.set(change(.enabled, .bool(true)), actor: Actor("ops-bob"), now: minutes(1))
        XCTAssertThrowsError(try policy.set(change(.linkSocialAllowDifferentEmails, .bool(true), ifVersion: 1), actor: ops, now: minutes(2))) { error in
            let error = error as! GatehouseError
            XCTAssertEqual(error.code.rawValue, "conflict")
            XCTAssertTrue(error.message.contains("the policy is at version 2, not 1"), error.message)
            XCTAssertTrue(error.fix?.onCommandLine.contains("--if-version 2") == true, error.fix ?? "")
        }
        XCTAssertEqual(try policy.snapshot(now: minutes(2)).version, 2)
        XCTAssertEqual(try policy.set(change(.linkSocialAllowDifferentEmails, .bool(true), ifVersion: 2), actor: ops, now: minutes(3)).version, 3)
    }

    func testATimedValueRevertsOnReadAndTheNextWriteRecordsTheRevert() throws {
        try policy.set(change(.linkSocialAllowDifferentEmails, .bool(true), "SUP-9 window", for: Seconds(3600)), actor: ops, now: t0)
        // During the window.
        let during = try entry(.linkSocialAllowDifferentEmails, at: minutes(59))
        XCTAssertEqual(during.value, .bool(true))
        XCTAssertEqual(during.revertsAt, minutes(60))
        XCTAssertEqual(during.revertsTo, .bool(false))
        XCTAssertEqual(try policy.snapshot(now: minutes(59)).nextRevertAt, minutes(60))
        XCTAssertEqual(try policy.export(now: minutes(59)).validUntil, minutes(60))
        // At expiry, with nothing running: the read computes the revert.
        let after = try policy.snapshot(now: minutes(60))
        XCTAssertEqual(after.version, 2)
        XCTAssertFalse(after.policy.linkSocialAllowDifferentEmails)
        let reverted = after.entries.first { $0.key == PolicyKey.linkSocialAllowDifferentEmails.rawValue }!
        XCTAssertEqual(reverted.setBy, "gatehouse (timer)")
        XCTAssertEqual(reverted.reason, "timed value expired")
        XCTAssertEqual(reverted.setAt, minutes(60))
        XCTAssertNil(reverted.revertsAt)
        XCTAssertNil(after.nextRevertAt)
        let pending = try policy.history(now: minutes(90))
        XCTAssertEqual(pending.map(\.version), [2, 1])
        XCTAssertEqual(pending.first?.pending, true)
        XCTAssertEqual(pending.first?.kind, .revert)
        XCTAssertEqual(try store.db.scalar("SELECT version FROM gatehouse_policy_version").int64, 1, "a read writes nothing")
        // The next write, on another key, first records the revert as its own version, then its change.
        let result = try policy.set(change(.allowUnlinkingAll, .bool(true), ifVersion: 2), actor: ops, now: minutes(120))
        XCTAssertEqual(result.version, 3)
        XCTAssertEqual(result.revertsRecorded.map(\.version), [2])
        let history = try policy.history(now: minutes(120))
        XCTAssertEqual(history.map(\.version), [3, 2, 1])
        XCTAssertEqual(history.map(\.kind), [.set, .revert, .set])
        XCTAssertEqual(history[1].actor, "gatehouse (timer)")
        XCTAssertEqual(history[1].reason, "timed value expired")
        XCTAssertEqual(history[1].effectiveAt, minutes(60))
        XCTAssertEqual(history[1].recordedAt, minutes(120))
        XCTAssertFalse(history[1].pending)
        XCTAssertEqual(history[1].from, .bool(true))
        XCTAssertEqual(history[1].to, .bool(false))
        XCTAssertEqual(try auditActions(), [
            "ops-alice policy.set linkSocial.allowDifferentEmails",
            "gatehouse (timer) policy.revert linkSocial.allowDifferentEmails",
            "ops-alice policy.set accountLinking.allowUnlinkingAll",
        ])
        XCTAssertTrue(try store.audit.verify(store.db).isIntact)
        XCTAssertEqual(try policy.snapshot(now: minutes(120)).version, 3)
    }

    func testReTimingKeepsTheValueFromBeforeTheWindowAndAnUntimedSetEndsIt() throws {
        try policy.set(change(.linkSocialAllowDifferentEmails, .bool(true), for: Seconds(3600)), actor: ops, now: t0)
        try policy.set(change(.linkSocialAllowDifferentEmails, .bool(true), "extend", for: Seconds(7200)), actor: ops, now: minutes(30))
        let extended = try entry(.linkSocialAllowDifferentEmails, at: minutes(90))
        XCTAssertEqual(extended.value, .bool(true))
        XCTAssertEqual(extended.revertsAt, minutes(150))
        XCTAssertEqual(extended.revertsTo, .bool(false), "extending a window must not make the temporary value permanent")
        XCTAssertEqual(try entry(.linkSocialAllowDifferentEmails, at: minutes(150)).value, .bool(false))
        // A permanent set inside a window cancels the timer.
        try policy.set(change(.linkSocialAllowDifferentEmails, .bool(true), "ratified"), actor: ops, now: minutes(100))
        let permanent = try entry(.linkSocialAllowDifferentEmails, at: minutes(10_000))
        XCTAssertEqual(permanent.value, .bool(true))
        XCTAssertNil(permanent.revertsAt)
    }

    func testSeveralDueRevertsTakeVersionsInTheOrderTheyExpired() throws {
        try policy.set(change(.allowUnlinkingAll, .bool(true), for: Seconds(7200)), actor: ops, now: t0)          // v1, expires +120
        try policy.set(change(.linkSocialAllowDifferentEmails, .bool(true), for: Seconds(3600)), actor: ops, now: t0) // v2, expires +60
        XCTAssertEqual(try policy.snapshot(now: minutes(61)).version, 3)
        XCTAssertEqual(try policy.snapshot(now: minutes(121)).version, 4)
        let pending = try policy.history(now: minutes(121)).filter(\.pending)
        XCTAssertEqual(pending.map(\.key), [PolicyKey.allowUnlinkingAll.rawValue, PolicyKey.linkSocialAllowDifferentEmails.rawValue])
        XCTAssertEqual(pending.map(\.version), [4, 3])
        let result = try policy.set(change(.enabled, .bool(true)), actor: ops, now: minutes(200))
        XCTAssertEqual(result.revertsRecorded.map(\.key), [PolicyKey.linkSocialAllowDifferentEmails.rawValue, PolicyKey.allowUnlinkingAll.rawValue])
        XCTAssertEqual(result.version, 5)
        XCTAssertEqual(try store.db.rows("SELECT version FROM gatehouse_policy_history ORDER BY version").compactMap { $0[0].int64 }, [1, 2, 3, 4, 5])
        // A conflict rolls the recorded reverts back with it; they stay computed on read.
        try policy.set(change(.linkSocialAllowDifferentEmails, .bool(true), for: Seconds(60)), actor: ops, now: minutes(300))   // v6
        XCTAssertThrowsError(try policy.set(change(.enabled, .bool(false), ifVersion: 6), actor: ops, now: minutes(400)))
        XCTAssertEqual(try store.db.scalar("SELECT max(version) FROM gatehouse_policy_history").int64, 6)
        XCTAssertEqual(try policy.snapshot(now: minutes(400)).version, 7)
    }

    func testHistoryFiltersByKeyAndLimits() throws {
        try policy.set(change(.enabled, .bool(false)), actor: ops, now: t0)
        try policy.set(change(.trustedProviders, .providers(["google"])), actor: ops, now: minutes(1))
        try policy.set(change(.enabled, .bool(true)), actor: ops, now: minutes(2))
        XCTAssertEqual(try policy.history(key: .enabled, now: minutes(3)).map(\.version), [3, 1])
        XCTAssertEqual(try policy.history(limit: 2, now: minutes(3)).map(\.version), [3, 2])
        XCTAssertEqual(try policy.history(key: .trustedProviders, now: minutes(3)).first?.to, .providers(["google"]))
        XCTAssertThrowsError(try store.db.execute("DELETE FROM gatehouse_policy_history")) { XCTAssertTrue("\($0)".contains("append-only"), "\($0)") }
    }

    func testExportHasBetterAuthsAccountLinkingShapeAndTheScopedSwitch() throws {
        try policy.set(change(.linkSocialAllowDifferentEmails, .bool(true)), actor: ops, now: t0)
        try policy.set(change(.trustedProviders, .providers(["google"])), actor: ops, now: t0)
        let export = try policy.export(now: minutes(1))
        let object = try JSONSerialization.jsonObject(with: Data(export.compactJSON.utf8)) as! [String: Any]
        XCTAssertEqual(Set(object.keys), ["version", "generatedAt", "account", "linkSocial", "security"], "validUntil is null and left out")
        XCTAssertEqual((object["security"] as? [String: Any])?["googleDisabledSubs"] as? [String], [], "no Google account is disabled")
        XCTAssertEqual(object["version"] as? Int, 2)
        let linking = (object["account"] as! [String: Any])["accountLinking"] as! [String: Any]
        XCTAssertEqual(Set(linking.keys), ["enabled", "trustedProviders", "disableImplicitLinking", "requireLocalEmailVerified", "allowUnlinkingAll", "allowDifferentEmails"])
        XCTAssertEqual(linking["allowDifferentEmails"] as? Bool, false, "the instance-wide value is the autoLink one")
        XCTAssertEqual(linking["trustedProviders"] as? [String], ["google"])
        XCTAssertEqual((object["linkSocial"] as! [String: Any])["allowDifferentEmails"] as? Bool, true)
        let lines = export.environment.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3)
        XCTAssertEqual(lines[0], "GATEHOUSE_POLICY_VERSION=2")
        XCTAssertEqual(lines[1], "GATEHOUSE_POLICY_VALID_UNTIL=")
        XCTAssertEqual(lines[2], "GATEHOUSE_POLICY_JSON='\(export.compactJSON)'")
    }
}
