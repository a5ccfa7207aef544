@testable import D1Engine
import Foundation
@testable import Gatehouse
import JOSE
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// The key ring: import and every refusal, the lifecycle, the self-test, sealing at rest.
final class AppleKeyRingTests: XCTestCase {
    var scratch: Scratch!
    var store: Store!
    var ring: AppleKeyRing!
    let t0 = Timestamp(iso8601: "2026-06-01T12:00:00.000Z")!
    let team = try! TeamID("TEAM123456")

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester).0
        ring = AppleKeyRing(store: store)
    }

    func rows() throws -> Int64 { try store.db.scalar("SELECT count(*) FROM gatehouse_apple_keys").int64 ?? -1 }
    func auditCount() throws -> Int64 { try store.db.scalar("SELECT count(*) FROM gatehouse_audit").int64 ?? -1 }

    func testImportSealsTheKeyAndRecordsNoSecret() throws {
        let file = try AppleKeyFiles.p256("ABCDEFGHIJ", in: scratch.url.path)
        let result = try ring.importKey(file: file, teamID: team, actor: tester, now: t0)
        XCTAssertEqual(result.key.keyID.rawValue, "ABCDEFGHIJ")
        XCTAssertEqual(result.key.state, .staged)
        let expected = try P256.PrivateKey(pemRepresentation: String(contentsOfFile: file, encoding: .utf8)).publicKey.fingerprint
        XCTAssertEqual(result.key.fingerprint, expected)
        // Sealed: no line of the key in the row, and the box opens only with the key id and fingerprint bound to it.
        let sealed = try store.db.row("SELECT sealed_p8 FROM gatehouse_apple_keys")!.blob("sealed_p8")
        let dump = try store.db.rows("SELECT * FROM gatehouse_apple_keys UNION ALL SELECT id, at, actor, action, subject, details, prev_hash, hash, NULL FROM gatehouse_audit")
            .map { $0.values.map { "\($0)" }.joined(separator: "|") }.joined(separator: "\n")
        for line in try AppleKeyFiles.secretLines(file) { XCTAssertFalse(dump.contains(line)) }
        XCTAssertFalse(String(decoding: sealed, as: UTF8.self).contains("PRIVATE KEY"))
        let master = try MasterKey.load(storePath: store.path)
        XCTAssertThrowsError(try AESGCM.open(sealed, key: master.bytes, associatedData: Array("gatehouse_apple_keys:OTHERKEY01:\(expected)".utf8)))
        XCTAssertNoThrow(try AESGCM.open(sealed, key: master.bytes, associatedData: AppleKeyRing.associatedData(keyID: result.key.keyID, fingerprint: expected)))
        let entry = try store.audit.entries(store.db, .init(action: "apple.key.import")).first!
        XCTAssertEqual(entry.details["fingerprint"], .string(expected))
        XCTAssertEqual(entry.actor, "tester")
    }

    func testEveryRefusalNamesTheFileAndLeavesNoRow() throws {
        let good = try AppleKeyFiles.p256("GOODKEY001", in: scratch.url.path)
        let auditBefore = try auditCount()
        for (path, words) in try AppleKeyFiles.refusals(in: scratch.url.path, good: good) {
            let name = (path as NSString).lastPathComponent
            XCTAssertThrowsError(try ring.importKey(file: path, teamID: team, actor: tester, now: t0), name) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains(name), "\(name): \(message)")
                XCTAssertTrue(message.contains(words), "\(name) should say \(words): \(message)")
            }
            XCTAssertEqual(try rows(), 0, name)
        }
        XCTAssertEqual(try auditCount(), auditBefore, "a refused import writes no audit entry")
        // Missing file and folder.
        XCTAssertThrowsError(try ring.importKey(file: scratch.path("AuthKey_MISSING001.p8"), teamID: team, actor: tester, now: t0)) {
            XCTAssertTrue("\($0)".contains("no key file"), "\($0)")
        }
        // A key already in the ring (same fingerprint), under another file name and Key ID.
        try ring.importKey(file: good, teamID: team, actor: tester, now: t0)
        let copy = scratch.path("AuthKey_COPYKEY001.p8")
        try FileManager.default.copyItem(atPath: good, toPath: copy)
        XCTAssertThrowsError(try ring.importKey(file: copy, teamID: team, actor: tester, now: t0)) {
            XCTAssertTrue("\($0)".contains("AuthKey_COPYKEY001.p8 is already in the ring as key GOODKEY001"), "\($0)")
        }
        XCTAssertEqual(try rows(), 1)
    }

    func testKeyAndTeamIDsAreValidated() throws {
        for bad in ["", "ABC", "abcdefghij", "ABCDEFGHIJK", "ABCDE-GHIJ", "ÄBCDEFGHIJ"] {
            XCTAssertThrowsError(try KeyID(bad), bad) { XCTAssertEqual(($0 as? GatehouseError)?.code.rawValue, "invalid") }
            XCTAssertThrowsError(try TeamID(bad), bad)
        }
        XCTAssertEqual(KeyID(fileName: "/x/AuthKey_ABCDEFGHIJ.p8")?.rawValue, "ABCDEFGHIJ")
        XCTAssertNil(KeyID(fileName: "key.p8"))
        XCTAssertNil(KeyID(fileName: "AuthKey_abc.p8"))
        let file = try AppleKeyFiles.p256("ABCDEFGHIJ", in: scratch.url.path)
        let renamed = scratch.path("apple-key.p8")
        try FileManager.default.moveItem(atPath: file, toPath: renamed)
        XCTAssertThrowsError(try ring.importKey(file: renamed, teamID: team, actor: tester, now: t0)) { XCTAssertTrue(onCommandLine($0).contains("--key-id"), "\($0)") }
        XCTAssertThrowsError(try ring.importKey(file: renamed, keyID: try KeyID("ABCDEFGHIJ"), actor: tester, now: t0)) {
            XCTAssertTrue("\($0)".contains("no Team ID"), "\($0)")
        }
        XCTAssertEqual(try rows(), 0)
        // The Team ID may come from the provider configuration.
        try ProviderConfiguration(store: store).setApple(AppleProviderChange(teamID: "TEAM123456"), actor: tester, now: t0)
        XCTAssertEqual(try ring.importKey(file: renamed, keyID: try KeyID("ABCDEFGHIJ"), actor: tester, now: t0).key.teamID, team)
    }

    func testLifecycleActivateRollbackRevoke() throws {
        let a = try ring.importKey(file: try AppleKeyFiles.p256("KEYAAAAAAA", in: scratch.url.path), teamID: team, actor: tester, now: t0).key.keyID
        let b = try ring.importKey(file: try AppleKeyFiles.p256("KEYBBBBBBB", in: scratch.url.path), teamID: team, actor: tester, now: t0).key.keyID
        let first = try ring.activate(a, actor: tester, now: t0.adding(seconds: 10))
        XCTAssertTrue(first.selfTest?.passed ?? false)
        XCTAssertNil(first.retired)
        let second = try ring.activate(b, actor: tester, now: t0.adding(seconds: 20))
        XCTAssertEqual(second.retired, a)
        XCTAssertEqual(try ring.key(a).state, .retired)
        XCTAssertEqual(try ring.key(b).state, .active)
        XCTAssertFalse(try ring.activate(b, actor: tester, now: t0).changed)
        let back = try ring.rollback(actor: tester, now: t0.adding(seconds: 30))
        XCTAssertEqual(back.key.keyID, a)
        XCTAssertEqual(back.retired, b)
        // Revoke b (retired): rollback now has nothing; b can never be activated again.
        try ring.revoke(b, actor: tester, now: t0.adding(seconds: 40))
        XCTAssertThrowsError(try ring.activate(b, actor: tester, now: t0)) {
            XCTAssertEqual(($0 as? GatehouseError)?.code.rawValue, "conflict")
            XCTAssertTrue("\($0)".contains("can never be activated again"), "\($0)")
        }
        XCTAssertThrowsError(try ring.rollback(actor: tester, now: t0)) { XCTAssertTrue("\($0)".contains("no retired key"), "\($0)") }
        // Revoking the active key needs force (a mistyped id must not be an outage); then none is active, and it says so.
        XCTAssertThrowsError(try ring.revoke(a, actor: tester, now: t0.adding(seconds: 45))) {
            XCTAssertEqual(($0 as? GatehouseError)?.code.rawValue, "conflict")
            XCTAssertTrue(onCommandLine($0).contains("--force"), "\($0)")
        }
        XCTAssertEqual(try ring.key(a).state, .active)
        let revoked = try ring.revoke(a, force: true, actor: tester, now: t0.adding(seconds: 50))
        XCTAssertEqual(revoked.warnings.first?.code, "active_key_revoked")
        XCTAssertTrue(ring.warnings(try ring.list()).contains { $0.code == "no_active_key" })
        XCTAssertThrowsError(try ring.activate(try KeyID("NOSUCHKEY1"), actor: tester, now: t0)) { XCTAssertEqual(($0 as? GatehouseError)?.code.rawValue, "not_found") }
        let actions = try store.audit.entries(store.db, .init(action: "apple.key.*")).map(\.action)
        XCTAssertEqual(actions, ["apple.key.revoke", "apple.key.revoke", "apple.key.rollback", "apple.key.activate", "apple.key.activate", "apple.key.import", "apple.key.import"])
        // The schema itself refuses a second active key.
        XCTAssertThrowsError(try store.db.execute("UPDATE gatehouse_apple_keys SET state = 'active', revoked_at = NULL"))
    }

    func testThirdLiveKeyIsWarnedAbout() throws {
        for id in ["KEY1111111", "KEY2222222"] {
            XCTAssertTrue(try ring.importKey(file: try AppleKeyFiles.p256(id, in: scratch.url.path), teamID: team, actor: tester, now: t0).warnings.isEmpty)
        }
        let third = try ring.importKey(file: try AppleKeyFiles.p256("KEY3333333", in: scratch.url.path), teamID: team, actor: tester, now: t0)
        XCTAssertEqual(third.warnings.map(\.code), ["too_many_live_keys"])
        XCTAssertTrue(third.warnings[0].message.contains("Apple allows 2"), third.warnings[0].message)
        try ring.revoke(try KeyID("KEY1111111"), actor: tester, now: t0)
        XCTAssertFalse(ring.warnings(try ring.list()).contains { $0.code == "too_many_live_keys" })
    }

    /// During an app transfer the ring holds two teams' keys; Apple's limit of two is per team.
    func testTwoLiveKeysOfEachOfTwoTeamsAreNotTooMany() throws {
        let other = try TeamID("NEWTEAM123")
        for (id, owner) in [("KEY1111111", team), ("KEY2222222", team), ("KEY3333333", other), ("KEY4444444", other)] {
            let imported = try ring.importKey(file: try AppleKeyFiles.p256(id, in: scratch.url.path), teamID: owner, actor: tester, now: t0)
            XCTAssertTrue(imported.warnings.isEmpty, "\(id): \(imported.warnings)")
        }
        XCTAssertFalse(ring.warnings(try ring.list()).contains { $0.code == "too_many_live_keys" })
        let fifth = try ring.importKey(file: try AppleKeyFiles.p256("KEY5555555", in: scratch.url.path), teamID: other, actor: tester, now: t0)
        XCTAssertEqual(fifth.warnings.map(\.code), ["too_many_live_keys"])
        XCTAssertTrue(fifth.warnings[0].message.contains("team NEWTEAM123"), fifth.warnings[0].message)
    }

    func testSelfTestFailsUnderAnotherMasterKey() throws {
        let id = try ring.importKey(file: try AppleKeyFiles.p256("ABCDEFGHIJ", in: scratch.url.path), teamID: team, actor: tester, now: t0).key.keyID
        XCTAssertTrue(try ring.selfTest(id, now: t0).passed)
        let other = AppleKeyRing(store: store, masterKey: MasterKey(bytes: Array(repeating: 7, count: 32), source: "test"))
        let test = try other.selfTest(id, now: t0)
        XCTAssertFalse(test.passed)
        XCTAssertEqual(test.checks.first?.code, "unseal_failed")
        XCTAssertThrowsError(try other.activate(id, actor: tester, now: t0)) { XCTAssertTrue("\($0)".contains("self-test"), "\($0)") }
        XCTAssertEqual(try ring.key(id).state, .staged)
    }
}
