@testable import Console
@testable import D1Engine
import Foundation
import Gatehouse
import HTTPTestSupport
import JOSE
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// The Apple key ring and client-secret APIs over a real socket: the lifecycle through the console,
/// hostile bodies, re-authentication for the export, and no key material or secret in any response
/// except the mint result and the re-authenticated export.
final class ConsoleAppleTests: XCTestCase {
    var harness: ConsoleHarness!
    var admin: String!
    var viewer: String!
    /// A fresh P-256 key in PKCS#8 PEM, as Apple issues `.p8` files.
    var pem: String!
    /// The base64 body of `pem`, the part a leak would show.
    var keyBody: String!

    static let keyID = "ABCDEFGHIJ"
    static let teamID = "TEAM123456"
    static let servicesID = "com.example.web"

    override func setUpWithError() throws {
        harness = try ConsoleHarness(users: 5)
        admin = try harness.tokens("root").access
        viewer = try harness.tokens("vera").access
        pem = try P256.PrivateKey.generate().pemRepresentation
        keyBody = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let store = try Store.open(path: harness.storePath)
        _ = try ProviderConfiguration(store: store).setApple(AppleProviderChange(teamID: Self.teamID, servicesID: Self.servicesID),
                                                             actor: Actor("tester"), now: .now())
    }
    override func tearDown() { harness = nil }

    func post(_ path: String, _ object: [String: Any] = [:], token: String? = nil) throws -> RawResponse {
        try harness.request("POST", path, token: token ?? admin, body: try harness.body(object))
    }

    func importKey() throws -> RawResponse {
        try post("/api/apple/keys", ["pem": pem!, "fileName": "AuthKey_\(Self.keyID).p8"])
    }

    /// Fails if any response text holds the private key's body.
    func assertNoKeyMaterial(_ response: RawResponse, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        for part in [keyBody.prefix(40), keyBody.suffix(40)] {
            XCTAssertFalse(response.bodyText.contains(String(part)), "\(what) carries key material", file: file, line: line)
        }
    }

    func testImportActivateSelfTestMintAndInspect() throws {
        let imported = try importKey()
        XCTAssertEqual(imported.status, 201, imported.bodyText)
        assertNoKeyMaterial(imported, "the import")
        let key = try XCTUnwrap(try harness.json(imported)["key"] as? [String: Any])
        XCTAssertEqual(key["keyID"] as? String, Self.keyID, "the Key ID comes from Apple's file name")
        XCTAssertEqual(key["teamID"] as? String, Self.teamID, "the Team ID from the provider configuration")
        XCTAssertEqual(key["state"] as? String, "staged")
        XCTAssertEqual(try importKey().status, 409, "the same key twice")

        let selftest = try post("/api/apple/keys/\(Self.keyID)/selftest")
        XCTAssertEqual(selftest.status, 200, selftest.bodyText)
        XCTAssertEqual(try harness.json(selftest)["passed"] as? Bool, true)
        assertNoKeyMaterial(selftest, "the self-test")

        let activated = try post("/api/apple/keys/\(Self.keyID)/activate")
        XCTAssertEqual(activated.status, 200, activated.bodyText)
        XCTAssertEqual((try harness.json(activated)["key"] as? [String: Any])?["state"] as? String, "active")
        assertNoKeyMaterial(activated, "the activation")

        let listing = try harness.request("GET", "/api/apple/keys", token: viewer)
        XCTAssertEqual(listing.status, 200)
        XCTAssertEqual((try harness.json(listing)["active"] as? [String: Any])?["keyID"] as? String, Self.keyID)
        assertNoKeyMaterial(listing, "the listing")

        let minted = try post("/api/apple/secret/mint", ["ttl": "1h"])
        XCTAssertEqual(minted.status, 200, minted.bodyText)
        let secret = try harness.json(minted)
        let token = try XCTUnwrap(secret["token"] as? String)
        XCTAssertEqual(token.split(separator: ".").count, 3)
        XCTAssertEqual(secret["clientID"] as? String, Self.servicesID)
        assertNoKeyMaterial(minted, "the mint")

        let inspected = try post("/api/apple/secret/inspect", ["token": token], token: viewer)
        XCTAssertEqual(inspected.status, 200, inspected.bodyText)
        XCTAssertEqual(try harness.json(inspected)["acceptable"] as? Bool, true)
        XCTAssertFalse(inspected.bodyText.contains(token), "the inspection does not echo the secret")

        // The secret and the key are in no later response and not in the audit log.
        let signature = String(token.split(separator: ".")[2])
        for response in [try harness.request("GET", "/api/apple/keys", token: admin), try harness.request("GET", "/api/audit?limit=100", token: admin),
                         try harness.request("GET", "/api/providers", token: admin), try harness.request("GET", "/api/health", token: admin)] {
            XCTAssertFalse(response.bodyText.contains(signature))
            assertNoKeyMaterial(response, "a later read")
        }
        let audit = try harness.auditText()
        XCTAssertFalse(audit.contains(signature) || audit.contains(String(keyBody.prefix(40))))
        XCTAssertTrue(audit.contains("apple.key.import") && audit.contains("apple.key.activate") && audit.contains("apple.secret.mint"))
    }

    func testLifetimeOverApplesCapIsRefused() throws {
        XCTAssertEqual(try importKey().status, 201)
        XCTAssertEqual(try post("/api/apple/keys/\(Self.keyID)/activate").status, 200)
        let response = try post("/api/apple/secret/mint", ["ttl": 15_777_001])
        XCTAssertEqual(response.status, 400, response.bodyText)
        XCTAssertEqual(try post("/api/apple/secret/mint", ["ttl": "soon"]).status, 400)
    }

    func testRevokeAndRollback() throws {
        XCTAssertEqual(try importKey().status, 201)
        XCTAssertEqual(try post("/api/apple/keys/rollback").status, 404, "nothing retired to roll back to")
        XCTAssertEqual(try post("/api/apple/keys/\(Self.keyID)/revoke").status, 200)
        XCTAssertEqual(try post("/api/apple/keys/\(Self.keyID)/activate").status, 409, "a revoked key never comes back")
        XCTAssertEqual(try post("/api/apple/keys/ZZZZZZZZZZ/revoke").status, 404)
    }

    func testHostileImportBodies() throws {
        let cases: [[String: Any]] = [
            ["pem": "not a key", "fileName": "AuthKey_\(Self.keyID).p8"],
            ["pem": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "fileName": "AuthKey_\(Self.keyID).p8"],
            ["pem": "-----BEGIN PRIVATE KEY-----\n" + String(repeating: "A", count: 100), "fileName": "AuthKey_\(Self.keyID).p8"],
            ["pem": "", "fileName": "AuthKey_\(Self.keyID).p8"],
            ["pem": pem!, "fileName": "key.pem"],
            ["pem": pem!, "fileName": "../../etc/AuthKey_\(Self.keyID).p8", "keyId": "lowercase1"],
            ["pem": pem!, "keyId": "SHORT"],
            ["pem": pem!, "keyId": Self.keyID, "teamId": "team"],
            ["pem": String(repeating: "A", count: 70_000), "keyId": Self.keyID],
            ["fileName": "AuthKey_\(Self.keyID).p8"],
            ["pem": 42, "keyId": Self.keyID],
        ]
        for body in cases {
            let response = try post("/api/apple/keys", body)
            XCTAssertEqual(response.status, 400, "\(body.keys.sorted()): \(response.bodyText)")
            assertNoKeyMaterial(response, "an import refusal")
        }
        for (text, type) in [("{", "application/json"), ("pem=x", "application/x-www-form-urlencoded"), (pem!, "application/x-pem-file"), ("[]", "application/json")] {
            let response = try harness.request("POST", "/api/apple/keys", token: admin, body: text, contentType: type)
            XCTAssertTrue([400, 415].contains(response.status), "\(type): \(response.status)")
            assertNoKeyMaterial(response, "a malformed body")
        }
        let oversized = try harness.request("POST", "/api/apple/keys", token: admin, body: "{\"pem\":\"" + String(repeating: "A", count: 1 << 20) + "\"}", over: .socket)
        XCTAssertEqual(oversized.status, 413)
        // A path-like file name is reduced to its last component; nothing is written outside the staging folder.
        let traversal = try post("/api/apple/keys", ["pem": pem!, "fileName": "../../AuthKey_\(Self.keyID).p8"])
        XCTAssertEqual(traversal.status, 201, traversal.bodyText)
        XCTAssertEqual((try harness.json(traversal)["key"] as? [String: Any])?["keyID"] as? String, Self.keyID)
        XCTAssertEqual(try harness.request("GET", "/api/apple/keys", token: viewer).status, 200)
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm"))?.filter { $0.hasPrefix("gatehouse-upload-") } ?? []
        XCTAssertEqual(leftovers, [], "staged uploads are removed")
    }

    func testInvalidKeyIDsAndNonJSON() throws {
        for id in ["abcdefghij", "ABC", "ABCDEFGHIJK", "%25_%25%25%25%25%25%25%25", "A%01CDEFGHIJ"] {
            let response = try post("/api/apple/keys/\(id)/activate")
            XCTAssertEqual(response.status, 400, "\(id): \(response.bodyText)")
        }
        XCTAssertEqual(try harness.request("POST", "/api/apple/secret/inspect", token: viewer, body: "eyJ", contentType: "text/plain").status, 415)
        XCTAssertEqual(try harness.request("POST", "/api/apple/secret/inspect", token: viewer, body: "eyJ").status, 400)
        let garbage = try post("/api/apple/secret/inspect", ["token": "not.a.jwt"], token: viewer)
        XCTAssertEqual(garbage.status, 200, garbage.bodyText)
        XCTAssertEqual(try harness.json(garbage)["acceptable"] as? Bool, false)
        XCTAssertEqual(try post("/api/apple/secret/mint").status, 404, "no active key to mint with")
    }

    func testExportNeedsThePasswordAgain() throws {
        XCTAssertEqual(try importKey().status, 201)
        XCTAssertEqual(try post("/api/apple/keys/\(Self.keyID)/activate").status, 200)
        let wrong = try post("/api/apple/export", ["password": "not the password"])
        XCTAssertEqual(wrong.status, 403, wrong.bodyText)
        XCTAssertEqual(harness.errorCode(wrong), "reauthentication_failed")
        assertNoKeyMaterial(wrong, "a refused export")
        XCTAssertEqual(try post("/api/apple/export", [:]).status, 400, "no password at all")
        XCTAssertEqual(try post("/api/apple/export", ["password": ConsoleHarness.password, "format": "xml"]).status, 400)
        XCTAssertTrue(try harness.auditText().contains("console.reauth.failed"), "a wrong password is audited")

        let exported = try post("/api/apple/export", ["password": ConsoleHarness.password, "format": "json"])
        XCTAssertEqual(exported.status, 200, exported.bodyText)
        XCTAssertTrue(exported.bodyText.contains(String(keyBody.prefix(40))), "the re-authenticated export carries the key")
        let body = try harness.json(exported)
        let names = (body["values"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        XCTAssertEqual(names, ["APPLE_TEAM_ID", "APPLE_KEY_ID", "APPLE_CLIENT_ID", "APPLE_PRIVATE_KEY"])
        XCTAssertTrue(try harness.auditText().contains("apple.export.reveal"))
        XCTAssertFalse(try harness.auditText().contains(String(keyBody.prefix(40))))
        // The session survives a wrong password: the admin is still signed in.
        XCTAssertEqual(try harness.request("GET", "/api/auth/me", token: admin).status, 200)
    }
}
