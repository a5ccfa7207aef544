@testable import D1Engine
import Foundation
@testable import Gatehouse
import JOSE
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// Minting, the lifetime cap, tracking and every finding of the inspector.
final class AppleClientSecretTests: XCTestCase {
    var scratch: Scratch!
    var store: Store!
    var key: P256.PrivateKey!
    let now = Timestamp(iso8601: "2026-06-01T12:00:00.000Z")!
    let team = try! TeamID("TEAM123456")
    let kid = try! KeyID("ABCDEFGHIJ")

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester).0
        let file = try AppleKeyFiles.p256("ABCDEFGHIJ", in: scratch.url.path)
        key = try P256.PrivateKey(pemRepresentation: String(contentsOfFile: file, encoding: .utf8))
        let ring = AppleKeyRing(store: store)
        try ring.importKey(file: file, teamID: team, actor: tester, now: now)
        try ring.activate(kid, actor: tester, now: now)
        try ProviderConfiguration(store: store).setApple(AppleProviderChange(teamID: "TEAM123456", servicesID: "com.example.web", bundleID: "com.example.app"), actor: tester, now: now)
    }

    var claims: [String: JSONValue] {
        ["iss": "TEAM123456", "iat": .integer(now.seconds), "exp": .integer(now.seconds + 3600), "aud": "https://appleid.apple.com", "sub": "com.example.web"]
    }

    func inspect(_ token: String) throws -> ClientSecretInspection { try ClientSecretInspector(store: store).inspect(token, now: now) }
    func codes(_ token: String) throws -> [String] { try inspect(token).findings.filter { $0.severity == .error }.map(\.code) }

    func testMintHasAppleClaimsAndVerifies() throws {
        let minted = try ClientSecretService(store: store).mint(actor: tester, now: now)
        let compact = try JWT.verify(minted.token, key: key.publicKey)
        XCTAssertEqual(compact.header, ["alg": "ES256", "kid": "ABCDEFGHIJ"])
        XCTAssertEqual(compact.payload["iss"], "TEAM123456")
        XCTAssertEqual(compact.payload["sub"], "com.example.web")
        XCTAssertEqual(compact.payload["aud"], "https://appleid.apple.com")
        XCTAssertEqual(compact.payload["exp"]?.int64Value, now.seconds + 3600)
        XCTAssertEqual(compact.signature.count, 64)
        XCTAssertTrue(try inspect(minted.token).acceptable)
        let audit = try store.audit.entries(store.db, .init(action: "apple.secret.mint")).first!
        XCTAssertEqual(audit.details["fingerprint"], .string(SHA256.hex(minted.token)))
        XCTAssertFalse(try store.db.rows("SELECT details FROM gatehouse_audit").contains { ($0["details"].string ?? "").contains(minted.token) })
    }

    func testLifetimeCap() throws {
        let service = ClientSecretService(store: store)
        XCTAssertNoThrow(try service.mint(lifetime: Seconds(15_777_000), actor: tester, now: now))
        XCTAssertThrowsError(try service.mint(lifetime: Seconds(15_777_001), actor: tester, now: now)) {
            XCTAssertTrue("\($0)".contains("15,777,000"), "\($0)")
        }
        XCTAssertThrowsError(try service.mint(lifetime: Seconds(0), actor: tester, now: now)) { XCTAssertTrue("\($0)".contains("positive"), "\($0)") }
        XCTAssertEqual(ClientSecretMinter.maxLifetimeSeconds, 15_777_000)
    }

    func testInspectorNamesEachFault() throws {
        let header: [String: JSONValue] = ["alg": "ES256", "kid": "ABCDEFGHIJ"]
        var c = claims
        XCTAssertEqual(try codes(try JWT.sign(header: header, claims: c, key: key)), [])
        XCTAssertEqual(try codes(try HandMadeJWT.derSigned(header: header, claims: c, key: key)), ["der_signature"])
        XCTAssertTrue(try inspect(try HandMadeJWT.derSigned(header: header, claims: c, key: key)).findings.contains { $0.message.contains("only its encoding is wrong") })
        c["exp"] = .integer(now.seconds + 15_777_001)
        XCTAssertEqual(Set(try codes(try JWT.sign(header: header, claims: c, key: key))), ["lifetime_over_cap", "exp_over_cap"])
        c = claims; c["iss"] = "OTHERTEAM1"
        XCTAssertEqual(try codes(try JWT.sign(header: header, claims: c, key: key)), ["iss_mismatch"])
        c = claims; c["sub"] = "com.example.other"
        XCTAssertEqual(try codes(try JWT.sign(header: header, claims: c, key: key)), ["sub_mismatch"])
        c = claims; c["aud"] = "https://appleid.apple.com/"
        XCTAssertEqual(try codes(try JWT.sign(header: header, claims: c, key: key)), ["aud_mismatch"])
        c = claims; c["exp"] = .integer(now.seconds - 10); c["iat"] = .integer(now.seconds - 3610)
        XCTAssertEqual(try codes(try JWT.sign(header: header, claims: c, key: key)), ["expired"])
        let hs = try HandMadeJWT.make(header: ["alg": "HS256", "kid": "ABCDEFGHIJ"], claims: claims, signature: Array(repeating: 1, count: 32))
        XCTAssertEqual(Set(try codes(hs)), ["alg_mismatch", "signature_size"])
        let other = try P256.PrivateKey.generate()
        XCTAssertEqual(try codes(try JWT.sign(header: header, claims: claims, key: other)), ["bad_signature"])
        let unknown = try inspect(try JWT.sign(header: ["kid": "UNKNOWNKEY"], claims: claims, key: other))
        XCTAssertTrue(unknown.acceptable)
        XCTAssertFalse(unknown.signatureChecked)
        XCTAssertEqual(unknown.findings.first?.code, "unknown_kid")
        try AppleKeyRing(store: store).revoke(kid, force: true, actor: tester, now: now)
        XCTAssertEqual(try codes(try JWT.sign(header: header, claims: claims, key: key)), ["revoked_key"])
        XCTAssertTrue(try inspect(try JWT.sign(header: header, claims: claims, key: key)).verdict.hasPrefix("Apple would answer invalid_client: kid ABCDEFGHIJ names a key revoked"))
    }

    func testMalformedInputNeverEchoesTheToken() throws {
        let good = try JWT.sign(header: ["kid": "ABCDEFGHIJ"], claims: claims, key: key)
        let parts = good.split(separator: ".")
        let cases: [(String, String)] = [
            (parts[0] + "." + parts[1], "malformed"),
            (parts[0] + ".%%%." + parts[2], "malformed"),
            (String(repeating: "a", count: 1 << 20), "too_large"),
            (String(decoding: (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37) }, as: UTF8.self), "not_text"),
            ("", "empty"),
        ]
        for (input, code) in cases {
            let result = try inspect(input)
            XCTAssertEqual(result.findings.map(\.code), [code])
            XCTAssertFalse(result.acceptable)
            if input.count > 20 { XCTAssertFalse(result.findings[0].message.contains(input.prefix(20))) }
        }
        XCTAssertThrowsError(try ClientSecretService(store: store).track(String(parts[0] + "." + parts[1]), actor: tester, now: now))
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_tracked_secrets").int64, 0)
    }

    func testTrackStoresExpiryAndFingerprintNeverTheToken() throws {
        let minted = try ClientSecretService(store: store).mint(lifetime: Seconds(86_400 * 90), actor: tester, now: now)
        let result = try ClientSecretService(store: store).track(minted.token + "\n", actor: tester, now: now)
        XCTAssertEqual(result.tracked.expiresAt, now.adding(seconds: 86_400 * 90))
        XCTAssertEqual(result.tracked.fingerprint, SHA256.hex(minted.token))
        XCTAssertThrowsError(try ClientSecretService(store: store).track(minted.token, actor: tester, now: now)) { XCTAssertTrue("\($0)".contains("already tracked"), "\($0)") }
        let everything = try store.db.rows("SELECT * FROM gatehouse_tracked_secrets").map { "\($0.values)" }.joined()
            + (try store.db.rows("SELECT details FROM gatehouse_audit").map { $0["details"].string ?? "" }.joined())
        XCTAssertFalse(everything.contains(minted.token))
        XCTAssertFalse(everything.contains(String(minted.token.split(separator: ".")[2])))
    }

    /// The Apple checks give the console's charts their own numbers: a tracked secret's days left against the expiry
    /// lines the status is judged by, and the active key's age against its rotation line.
    func testTheChecksGaugeTheSecretsDaysLeftAndTheKeysAge() throws {
        let minted = try ClientSecretService(store: store).mint(lifetime: Seconds(86_400 * 90), actor: tester, now: now)
        _ = try ClientSecretService(store: store).track(minted.token, actor: tester, now: now)
        let later = now.adding(seconds: 86_400 * 70)
        let checks = Dictionary(uniqueKeysWithValues: try AppleHealthChecks().checks(store, HealthContext(now: later)).map { ($0.id, $0) })
        let secret = try XCTUnwrap(checks["apple.secret.com.example.web"] ?? checks.first { $0.key.hasPrefix("apple.secret.") }?.value)
        XCTAssertEqual(secret.status, .warning, secret.summary)
        XCTAssertEqual(secret.gauge, HealthGauge(value: 20, warning: 28, critical: 14, lowerIsWorse: true))
        XCTAssertEqual(checks["apple.key_age"]?.gauge, HealthGauge(value: 70, warning: 365, critical: nil, lowerIsWorse: false))
        XCTAssertNil(checks["apple.master_key"]?.gauge)
    }
}
