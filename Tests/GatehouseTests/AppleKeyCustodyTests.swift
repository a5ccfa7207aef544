@testable import D1Engine
import Foundation
@testable import Gatehouse
import JOSE
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// Doctored `.p8` files: the public key embedded in the file is the genuine one (so the fingerprint is the genuine
/// key's), but the secret scalar is 0, the curve order n, above it, or simply another key's. None may enter the
/// ring, and one already in a store's ring must not block the genuine key.
final class AppleKeyCustodyTests: XCTestCase {
    var scratch: Scratch!
    var store: Store!
    var ring: AppleKeyRing!
    let t0 = Timestamp(iso8601: "2026-06-01T12:00:00.000Z")!
    let team = try! TeamID("TEAM123456")
    static let order = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"

    override func setUpWithError() throws {
        scratch = try Scratch()
        store = try Store.initialize(path: scratch.path("s.sqlite"), actor: tester).0
        ring = AppleKeyRing(store: store)
    }

    /// The PEM of `file` with its 32-byte secret scalar replaced by `scalar` (hex), the public key left as it is.
    func doctored(_ file: String, scalar: String) throws -> String {
        let body = try AppleKeyFiles.secretLines(file).joined()
        var der = Array(Data(base64Encoded: body)!)
        // openssl's PKCS#8 P-256 layout: ... 02 01 01 04 20 <d: 32 bytes> a1 44 03 42 00 04 <X‖Y>.
        XCTAssertEqual(Array(der[31..<36]), [0x02, 0x01, 0x01, 0x04, 0x20], "unexpected PKCS#8 layout")
        der.replaceSubrange(36..<68, with: Hex.decode(scalar)!)
        let lines = Data(der).base64EncodedString().chunked(64)
        return "-----BEGIN PRIVATE KEY-----\n" + lines.joined(separator: "\n") + "\n-----END PRIVATE KEY-----\n"
    }

    func testKeysWithAnInvalidSecretScalarAreRefusedAtImport() throws {
        let genuine = try AppleKeyFiles.p256("GENUINE001", in: scratch.url.path)
        let other = try AppleKeyFiles.p256("OTHERKEY01", in: scratch.url.path)
        let otherScalar = Hex.encode(Array(Array(Data(base64Encoded: try AppleKeyFiles.secretLines(other).joined())!)[36..<68]))
        let scalars = ["zero": String(repeating: "0", count: 64), "n": Self.order,
                       "n+1": "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632552",
                       "all ones": String(repeating: "f", count: 64), "another key's": otherScalar]
        for (what, scalar) in scalars {
            let path = scratch.path("AuthKey_DOCTORED01.p8")
            try doctored(genuine, scalar: scalar).write(toFile: path, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try P256.PrivateKey(pemRepresentation: String(contentsOfFile: path, encoding: .utf8)), what) { error in
                XCTAssertEqual(error as? KeyImportError, .invalidPrivateScalar, what)
            }
            XCTAssertThrowsError(try ring.importKey(file: path, teamID: team, actor: tester, now: t0), what) { error in
                XCTAssertTrue("\(error)".contains("secret scalar"), "\(what): \(error)")
            }
        }
        XCTAssertEqual(try store.db.scalar("SELECT count(*) FROM gatehouse_apple_keys").int64, 0)
        // The genuine key itself still imports.
        XCTAssertNoThrow(try ring.importKey(file: genuine, teamID: team, actor: tester, now: t0))
    }

    func testAnImpostorAlreadyInTheRingGivesWayToTheGenuineKey() throws {
        let genuine = try AppleKeyFiles.p256("GENUINE002", in: scratch.url.path)
        let key = try P256.PrivateKey(pemRepresentation: String(contentsOfFile: genuine, encoding: .utf8))
        let fingerprint = key.publicKey.fingerprint
        // As a ring without the scalar check holds it: sealed, same fingerprint, then revoked by an operator.
        let impostor = try doctored(genuine, scalar: String(repeating: "0", count: 64))
        let master = try MasterKey.load(storePath: store.path)
        let impostorID = try KeyID("IMPOSTOR01")
        let sealed = try AESGCM.seal(Array(impostor.utf8), key: master.bytes, associatedData: AppleKeyRing.associatedData(keyID: impostorID, fingerprint: fingerprint))
        try store.db.execute("INSERT INTO gatehouse_apple_keys (key_id, team_id, state, fingerprint, sealed_p8, imported_at, revoked_at) VALUES (?, ?, 'revoked', ?, ?, ?, ?)",
                             [impostorID.rawValue, team.rawValue, fingerprint, sealed, t0.iso8601, t0.iso8601])
        let result = try ring.importKey(file: genuine, teamID: team, actor: tester, now: t0)
        XCTAssertEqual(result.key.fingerprint, fingerprint)
        XCTAssertEqual(try ring.list().map(\.keyID.rawValue), ["GENUINE002"])
        let entry = try store.audit.entries(store.db, .init(action: "apple.key.import")).first!
        XCTAssertEqual(entry.details["replaced_unusable_key"], .string("IMPOSTOR01 (revoked)"))
        // The genuine key, once revoked, stays revoked: importing it again is refused.
        _ = try ring.revoke(try KeyID("GENUINE002"), actor: tester, now: t0)
        XCTAssertThrowsError(try ring.importKey(file: genuine, teamID: team, actor: tester, now: t0)) { error in
            XCTAssertTrue("\(error)".contains("already in the ring"), "\(error)")
            XCTAssertTrue((error as? GatehouseError)?.fix?.contains("a revoked key stays revoked") == true, "\(error)")
        }
    }
}

private extension String {
    func chunked(_ size: Int) -> [String] {
        stride(from: 0, to: count, by: size).map { start in
            let from = index(startIndex, offsetBy: start)
            return String(self[from..<(index(from, offsetBy: size, limitedBy: endIndex) ?? endIndex)])
        }
    }
}
