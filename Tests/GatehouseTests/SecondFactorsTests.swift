import Foundation
@testable import Gatehouse
import JOSE
import Storage
import XCTest

/// The admins' second factors in the domain: TOTP enrolment and confirmation, each code once, recovery codes once,
/// the secret sealed at rest, rename and remove, the break-glass reset, the requirement, the WebAuthn counter rule.
final class SecondFactorsTests: XCTestCase {
    var scratch: Scratch!
    var store: Store!
    var factors: SecondFactors!
    var admin: Admin!
    let t0 = Timestamp(iso8601: "2026-06-01T12:00:10.000Z")!

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester).0
        admin = try AdminDirectory(store: store, hasher: PasswordHasher(iterations: 1000))
            .add(try AdminUsername("root"), role: .admin, password: try AdminPassword("correct horse battery staple"), actor: tester, now: t0)
        factors = SecondFactors(store: store)
    }

    /// Enrols and confirms a TOTP factor; returns its secret and the recovery codes.
    func enrolled(at time: Timestamp? = nil) throws -> (TOTP, [String]) {
        let enrolment = try factors.enrolTOTP(admin, actor: admin.consoleActor, now: time ?? t0)
        let totp = TOTP(secret: try XCTUnwrap(Base32.decode(enrolment.secret)))
        let codes = try factors.confirmTOTP(admin, code: totp.code(at: time ?? t0), actor: admin.consoleActor, now: time ?? t0)
        return (totp, codes)
    }

    func testEnrolmentIsPendingUntilAConfirmingCodeAndSealsTheSecret() throws {
        let enrolment = try factors.enrolTOTP(admin, actor: admin.consoleActor, now: t0)
        XCTAssertEqual(enrolment.secret.count, 32, "160 bits in base32")
        XCTAssertTrue(enrolment.otpauthUri.hasPrefix("otpauth://totp/Gatehouse:root?secret=\(enrolment.secret)&issuer=Gatehouse"), enrolment.otpauthUri)
        XCTAssertFalse(try factors.hasFactor(admin), "pending proves nothing")
        XCTAssertEqual(try factors.methods(of: admin), [])
        let totp = TOTP(secret: try XCTUnwrap(Base32.decode(enrolment.secret)))
        // A wrong code does not confirm.
        let wrong = totp.code(step: TOTP.step(at: t0) + 5)
        XCTAssertThrowsError(try factors.confirmTOTP(admin, code: wrong, actor: admin.consoleActor, now: t0))
        XCTAssertFalse(try factors.hasFactor(admin))
        let codes = try factors.confirmTOTP(admin, code: totp.code(at: t0), actor: admin.consoleActor, now: t0)
        XCTAssertEqual(codes.count, 10)
        XCTAssertEqual(Set(codes).count, 10)
        XCTAssertTrue(try factors.hasFactor(admin))
        XCTAssertEqual(try factors.methods(of: admin), [.totp, .recovery])
        // At rest: neither the secret (base32 or raw) nor a recovery code in any row of the store, the audit log included.
        let dump = try storeDump()
        XCTAssertFalse(dump.contains(enrolment.secret))
        XCTAssertFalse(dump.lowercased().contains(enrolment.secret.lowercased()))
        XCTAssertFalse(dump.contains(Hex.encode(try XCTUnwrap(Base32.decode(enrolment.secret)))))
        for code in codes { XCTAssertFalse(dump.contains(code)); XCTAssertFalse(dump.contains(code.replacingOccurrences(of: "-", with: ""))) }
        let fileBytes = try Data(contentsOf: URL(fileURLWithPath: store.path))
        XCTAssertNil(fileBytes.range(of: Data(enrolment.secret.utf8)))
        XCTAssertNil(fileBytes.range(of: Data(try XCTUnwrap(Base32.decode(enrolment.secret)))))
        // The sealed secret is bound to its row: moved to another id it does not open.
        let sealed = try store.db.row("SELECT sealed_secret FROM gatehouse_admin_factors")!.blob("sealed_secret")
        let master = try MasterKey.load(storePath: store.path)
        XCTAssertNoThrow(try AESGCM.open(sealed, key: master.bytes, associatedData: SecondFactors.associatedData(id: enrolment.id, adminID: admin.id)))
        XCTAssertThrowsError(try AESGCM.open(sealed, key: master.bytes, associatedData: SecondFactors.associatedData(id: enrolment.id, adminID: admin.id + 1)))
    }

    func testACodeIsAcceptedOnceAndOnlyWithinOneStep() throws {
        let (totp, _) = try enrolled()
        let later = t0.adding(seconds: 90)
        let step = TOTP.step(at: later)
        XCTAssertTrue(try factors.verify(admin, method: .totp, answer: totp.code(step: step), challenge: nil, now: later))
        XCTAssertFalse(try factors.verify(admin, method: .totp, answer: totp.code(step: step), challenge: nil, now: later), "reused")
        XCTAssertFalse(try factors.verify(admin, method: .totp, answer: totp.code(step: step - 1), challenge: nil, now: later), "older than the accepted step")
        XCTAssertTrue(try factors.verify(admin, method: .totp, answer: totp.code(step: step + 1), challenge: nil, now: later), "one step ahead")
        let muchLater = later.adding(seconds: 600)
        let now = TOTP.step(at: muchLater)
        XCTAssertFalse(try factors.verify(admin, method: .totp, answer: totp.code(step: now + 2), challenge: nil, now: muchLater), "two steps ahead")
        XCTAssertFalse(try factors.verify(admin, method: .totp, answer: totp.code(step: now - 2), challenge: nil, now: muchLater), "two steps behind")
        XCTAssertTrue(try factors.verify(admin, method: .totp, answer: totp.code(step: now - 1), challenge: nil, now: muchLater), "one step behind")
    }

    func testRecoveryCodesWorkOnceAndARegeneratedSetReplacesTheOld() throws {
        let (_, codes) = try enrolled()
        XCTAssertTrue(try factors.verify(admin, method: .recovery, answer: codes[0].uppercased(), challenge: nil, now: t0))
        XCTAssertFalse(try factors.verify(admin, method: .recovery, answer: codes[0], challenge: nil, now: t0), "used")
        XCTAssertEqual(try factors.recoveryCodesLeft(admin), 9)
        XCTAssertFalse(try factors.verify(admin, method: .recovery, answer: "aaaa-bbbb-cccc-dddd", challenge: nil, now: t0))
        let fresh = try factors.regenerateRecoveryCodes(admin, actor: admin.consoleActor, now: t0)
        XCTAssertFalse(try factors.verify(admin, method: .recovery, answer: codes[1], challenge: nil, now: t0), "the old set stopped working")
        XCTAssertTrue(try factors.verify(admin, method: .recovery, answer: fresh[1].replacingOccurrences(of: "-", with: " "), challenge: nil, now: t0))
    }

    func testRenameRemoveResetAndRequireAreAudited() throws {
        _ = try enrolled()
        let factor = try XCTUnwrap(try factors.factors(of: admin).first)
        XCTAssertEqual(try factors.rename(admin, factor: factor.id, to: "Phone", actor: admin.consoleActor, now: t0).name, "Phone")
        XCTAssertThrowsError(try factors.rename(admin, factor: "no-such-factor-id-here", to: "x", actor: admin.consoleActor, now: t0))
        XCTAssertThrowsError(try factors.rename(admin, factor: factor.id, to: "   ", actor: admin.consoleActor, now: t0))
        try factors.remove(admin, factor: factor.id, actor: admin.consoleActor, now: t0)
        XCTAssertFalse(try factors.hasFactor(admin))
        XCTAssertEqual(try factors.recoveryCodesLeft(admin), 0, "the codes go with the last factor")
        _ = try enrolled(at: t0.adding(seconds: 60))
        XCTAssertThrowsError(try factors.reset(try AdminUsername("root"), reason: " ", actor: Actor("ops"), now: t0))
        let reset = try factors.reset(try AdminUsername("root"), reason: "lost phone", actor: Actor("ops"), now: t0)
        XCTAssertEqual(reset, SecondFactorReset(username: "root", factorsRemoved: 1, recoveryCodesRemoved: 10, sessionsEnded: 0))
        XCTAssertFalse(try factors.hasFactor(admin))
        XCTAssertFalse(try factors.isRequired())
        XCTAssertTrue(try factors.setRequired(true, actor: Actor("ops"), now: t0))
        XCTAssertFalse(try factors.setRequired(true, actor: Actor("ops"), now: t0))
        XCTAssertTrue(try factors.isRequired())
        let actions = try store.db.rows("SELECT action FROM gatehouse_audit WHERE action LIKE 'admin.mfa.%' ORDER BY id").map { try $0.string("action") }
        XCTAssertEqual(actions, ["admin.mfa.totp.enrol", "admin.mfa.totp.confirm", "admin.mfa.rename", "admin.mfa.remove", "admin.mfa.totp.enrol",
                                 "admin.mfa.totp.confirm", "admin.mfa.reset", "admin.mfa.require", "admin.mfa.require"])
        XCTAssertTrue(try store.db.scalar("SELECT details FROM gatehouse_audit WHERE action = 'admin.mfa.reset'").string?.contains("lost phone") ?? false)
    }

    /// WebAuthn §6.1.1: a counter that does not grow is refused (a cloned key) and audited; zero stays zero.
    func testAPasskeyCounterThatDoesNotGrowIsRefused() throws {
        let (made, codes) = try factors.addWebAuthnCredential(admin, name: "YubiKey", credentialID: "Y3JlZGVudGlhbA", publicKey: [1, 2, 3],
                                                             signCount: 5, actor: admin.consoleActor, now: t0)
        XCTAssertEqual(made.kind, .webauthn)
        XCTAssertEqual(codes?.count, 10)
        XCTAssertThrowsError(try factors.addWebAuthnCredential(admin, name: "Again", credentialID: "Y3JlZGVudGlhbA", publicKey: [1], signCount: 0,
                                                               actor: admin.consoleActor, now: t0), "a credential id registered once")
        let credential = try XCTUnwrap(try factors.webAuthnCredentials(of: admin).first)
        XCTAssertEqual(credential.signCount, 5)
        XCTAssertFalse(try factors.recordAssertion(admin, credential: credential, counter: 5, now: t0))
        XCTAssertFalse(try factors.recordAssertion(admin, credential: credential, counter: 3, now: t0))
        XCTAssertTrue(try factors.recordAssertion(admin, credential: credential, counter: 6, now: t0))
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_audit WHERE action = 'admin.mfa.webauthn.counter_refused'").int64, 2)
        // Without a verifier plugged in, a passkey is stored but not offered.
        XCTAssertEqual(try factors.methods(of: admin), [.recovery])
    }

    /// TOTP secrets are sealed like the Apple keys, so `init` guards them alike: without the key file it refuses to make
    /// a new key, and a key that opens none of them is refused.
    func testInitKeepsCustodyOfSealedTOTPSecrets() throws {
        _ = try enrolled()
        let keyFile = MasterKey.defaultPath(forStore: store.path)
        XCTAssertNoThrow(try MasterKey.checkOpensSealed(store.db, storePath: store.path, environment: [:]))
        XCTAssertThrowsError(try MasterKey.checkOpensSealed(store.db, storePath: store.path, environment: ["GATEHOUSE_MASTER_KEY": String(repeating: "ab", count: 32)])) {
            XCTAssertEqual(($0 as? GatehouseError)?.code, .unsealFailed)
            XCTAssertTrue("\($0)".contains("does not open the store's 1 sealed TOTP secret(s)"), "\($0)")
        }
        try FileManager.default.removeItem(atPath: keyFile)
        XCTAssertThrowsError(try MasterKey.checkCustody(store.db, storePath: store.path, environment: [:])) {
            XCTAssertEqual(($0 as? GatehouseError)?.code, .masterKeyMissing)
            XCTAssertTrue("\($0)".contains("the store holds 1 sealed TOTP secret(s) but its master key file"), "\($0)")
        }
        XCTAssertThrowsError(try Store.initialize(path: store.path, actor: tester))
        XCTAssertFalse(FileManager.default.fileExists(atPath: keyFile), "no new key was made")
    }

    func storeDump() throws -> String {
        var lines: [String] = []
        for table in try store.db.tableNames() {
            for row in try store.db.rows("SELECT * FROM \"\(table)\"") {
                lines.append(row.values.map { value -> String in
                    if case .blob(let bytes) = value { return Hex.encode(bytes) + " " + String(decoding: bytes, as: UTF8.self) }
                    return "\(value)"
                }.joined(separator: "|"))
            }
        }
        return lines.joined(separator: "\n")
    }
}
