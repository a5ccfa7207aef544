import Foundation
import JOSE
import WebAuthn
@testable import WebAuthnTestSupport
import XCTest

/// The options JSON, exactly as issue 44 names its members, and as `PublicKeyCredential.parseCreationOptionsFromJSON`
/// reads it (binary members in base64url).
final class CeremonyOptionsTests: XCTestCase {
    func encode<T: Encodable>(_ value: T) throws -> [String: JSONValue] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try JSONValue.parseObject(Array(try encoder.encode(value)))
    }

    func testCreationOptions() throws {
        let user = WebAuthnUser(handle: Array(repeating: 0xAA, count: 16), name: "alice", displayName: "Alice Martin")
        let existing = CredentialDescriptor(id: CredentialID(bytes: [1, 2, 3]), transports: ["usb"])
        let options = try testRP.creationOptions(user: user, excludeCredentials: [existing])
        XCTAssertEqual(options.challenge.bytes.count, 32)
        let json = try encode(options)
        XCTAssertEqual(Set(json.keys), ["rp", "user", "challenge", "pubKeyCredParams", "timeout", "excludeCredentials",
                                        "authenticatorSelection", "attestation"])
        XCTAssertEqual(json["rp"], ["id": "console.example.com", "name": "Gatehouse"])
        XCTAssertEqual(json["user"], ["id": .string(Base64URL.encode(user.handle)), "name": "alice", "displayName": "Alice Martin"])
        XCTAssertEqual(json["challenge"], .string(options.challenge.base64URL))
        XCTAssertEqual(Base64URL.decode(json["challenge"]?.stringValue ?? ""), options.challenge.bytes)
        XCTAssertEqual(json["pubKeyCredParams"], [["type": "public-key", "alg": -7], ["type": "public-key", "alg": -257]])
        XCTAssertEqual(json["timeout"], 300_000)
        XCTAssertEqual(json["excludeCredentials"], [["type": "public-key", "id": "AQID", "transports": ["usb"]]])
        XCTAssertEqual(json["authenticatorSelection"], ["residentKey": "preferred", "userVerification": "preferred"])
        XCTAssertEqual(json["attestation"], "none")
    }

    func testRequestOptions() throws {
        let options = try testRP.requestOptions(allowCredentials: [CredentialDescriptor(id: CredentialID(bytes: [0xFB, 0xFF]))])
        let json = try encode(options)
        XCTAssertEqual(Set(json.keys), ["challenge", "timeout", "rpId", "allowCredentials", "userVerification"])
        XCTAssertEqual(json["rpId"], "console.example.com")
        XCTAssertEqual(json["userVerification"], "preferred")
        XCTAssertEqual(json["timeout"], 300_000)
        // base64url, not base64: no "+", "/" or "=", and no transports member when none is known.
        XCTAssertEqual(json["allowCredentials"], [["type": "public-key", "id": "-_8"]])
        XCTAssertEqual(Base64URL.decode(json["challenge"]?.stringValue ?? "")?.count, 32)
    }

    func testEveryChallengeIsFresh() throws {
        var seen = Set<WebAuthnChallenge>()
        for _ in 0..<100 { seen.insert(try testRP.requestOptions(allowCredentials: []).challenge) }
        XCTAssertEqual(seen.count, 100)
    }

    func testOptionsAreUsableForTheCeremonyTheyOpen() throws {
        // The challenge the options carry is the one verification expects.
        let authenticator = try SoftwareAuthenticator.es256()
        let user = WebAuthnUser(handle: [7], name: "alice", displayName: "Alice")
        let creation = try testRP.creationOptions(user: user, excludeCredentials: [])
        let credential = try testRP.verifyRegistration(RegistrationBuilder(authenticator, challenge: creation.challenge).response,
                                                       expectedChallenge: creation.challenge)
        let request = try testRP.requestOptions(allowCredentials: [CredentialDescriptor(id: credential.id, transports: credential.transports)])
        let assertion = try AssertionBuilder(authenticator, challenge: request.challenge, signCount: 1).response()
        XCTAssertNoThrow(try testRP.verifyAuthentication(
            assertion, expectedChallenge: request.challenge, allowedCredentialIDs: request.allowCredentials.map(\.id),
            credential: StoredCredential(id: credential.id, publicKeyCOSE: credential.publicKeyCOSE, signCount: credential.signCount)))
    }

    func testUserHandlesAreOneTo64Bytes() throws {
        XCTAssertThrowsError(try testRP.creationOptions(user: WebAuthnUser(handle: [], name: "a", displayName: "a"), excludeCredentials: [])) {
            XCTAssertEqual($0 as? WebAuthnOptionsError, .userHandleLength(0))
        }
        XCTAssertThrowsError(try testRP.creationOptions(user: WebAuthnUser(handle: Array(repeating: 1, count: 65), name: "a", displayName: "a"),
                                                        excludeCredentials: [])) {
            XCTAssertEqual($0 as? WebAuthnOptionsError, .userHandleLength(65))
        }
        XCTAssertNoThrow(try testRP.creationOptions(user: WebAuthnUser(handle: Array(repeating: 1, count: 64), name: "a", displayName: "a"),
                                                    excludeCredentials: []))
    }

    func testAPolicyOfRequiredUserVerificationIsWhatTheOptionsAskFor() throws {
        var strict = testRP
        strict.userVerification = .required
        strict.timeoutMilliseconds = 60_000
        let json = try encode(try strict.requestOptions(allowCredentials: []))
        XCTAssertEqual(json["userVerification"], "required")
        XCTAssertEqual(json["timeout"], 60_000)
    }
}
