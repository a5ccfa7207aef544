import JOSE
import WebAuthn
@testable import WebAuthnTestSupport
import XCTest

/// Registration (WebAuthn Level 3 §7.1): a real ceremony from the software authenticator passes; each step, when the
/// ceremony breaks exactly what it checks, fails with its own error.
final class RegistrationTests: XCTestCase {
    var challenge: WebAuthnChallenge!
    var authenticator: SoftwareAuthenticator!
    var valid: RegistrationBuilder!

    override func setUpWithError() throws {
        challenge = try WebAuthnChallenge.random()
        authenticator = try SoftwareAuthenticator.es256()
        valid = RegistrationBuilder(authenticator, challenge: challenge)
    }

    func assertRefused(_ builder: RegistrationBuilder, _ expected: WebAuthnError, rp: RelyingParty = testRP,
                       file: StaticString = #filePath, line: UInt = #line) {
        assertRefused(builder.response, expected, rp: rp, file: file, line: line)
    }

    func assertRefused(_ response: RegistrationResponseJSON, _ expected: WebAuthnError, rp: RelyingParty = testRP,
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try rp.verifyRegistration(response, expectedChallenge: challenge), file: file, line: line) { error in
            XCTAssertEqual(error as? WebAuthnError, expected, file: file, line: line)
        }
    }

    func testAnES256RegistrationYieldsTheCredentialToStore() throws {
        var builder = valid!
        builder.flags |= Flag.be | Flag.bs
        let credential = try testRP.verifyRegistration(builder.response, expectedChallenge: challenge)
        XCTAssertEqual(credential.id.bytes, authenticator.credentialID)
        XCTAssertEqual(credential.publicKeyCOSE, authenticator.coseKey.encoded)
        XCTAssertEqual(credential.algorithm, .es256)
        XCTAssertEqual(credential.signCount, 0)
        XCTAssertEqual(credential.flags, [.userPresent, .userVerified, .backupEligible, .backedUp, .attestedCredentialData])
        XCTAssertEqual(credential.aaguid, [UInt8](repeating: 0, count: 16))
        XCTAssertEqual(credential.attestationFormat, "none")
        XCTAssertEqual(credential.transports, ["internal", "hybrid"])
    }

    func testAnRS256RegistrationYieldsTheCredentialToStore() throws {
        let rsa = SoftwareAuthenticator.rs256(signCount: 5)
        let credential = try testRP.verifyRegistration(RegistrationBuilder(rsa, challenge: challenge).response,
                                                       expectedChallenge: challenge)
        XCTAssertEqual(credential.algorithm, .rs256)
        XCTAssertEqual(credential.signCount, 5)
        XCTAssertEqual(credential.publicKeyCOSE, rsa.coseKey.encoded)
    }

    func testTheResponseArrivesAsTheBrowsersJSON() throws {
        let json = """
            {"id":"\(valid.response.id)","rawId":"\(valid.response.rawId)","type":"public-key",
             "authenticatorAttachment":"platform","clientExtensionResults":{"credProps":{"rk":true}},
             "response":{"clientDataJSON":"\(valid.response.response.clientDataJSON)",
                         "attestationObject":"\(valid.response.response.attestationObject)",
                         "authenticatorData":"AAAA","publicKeyAlgorithm":-7,"transports":["usb"]}}
            """
        let response = try JSONDecoder().decode(RegistrationResponseJSON.self, from: Data(json.utf8))
        XCTAssertEqual(try testRP.verifyRegistration(response, expectedChallenge: challenge).transports, ["usb"])
    }

    // Each step, in the order §7.1 takes them.

    func testCredentialTypeMustBePublicKey() {
        var builder = valid!
        builder.credentialType = "password"
        assertRefused(builder, .credentialTypeNotPublicKey)
    }

    func testIDMustBeRawIDAndTheAttestedCredentialID() {
        var builder = valid!
        builder.id = Base64URL.encode([1, 2, 3])
        assertRefused(builder, .credentialIDMismatch)
        builder = valid
        builder.credentialIDInAuthData = [9, 9, 9]
        assertRefused(builder, .credentialIDMismatch)
    }

    func testBase64URLMembersMustBeCanonical() {
        var response = valid.response
        response.rawId += "="
        response.id = response.rawId
        assertRefused(response, .malformedResponse("rawId"))
        response = valid.response
        response.response.clientDataJSON = "e30+"
        assertRefused(response, .malformedResponse("response.clientDataJSON"))
        response = valid.response
        response.response.attestationObject = "o2Nm!"
        assertRefused(response, .malformedResponse("response.attestationObject"))
    }

    func testClientDataMustBeJSONWithItsMembers() {
        var builder = valid!
        builder.clientData = Array("not json".utf8)
        assertRefused(builder, .clientDataMalformed("it is not a JSON object"))
        builder.clientData = [0x7B, 0xFF, 0x7D]
        assertRefused(builder, .clientDataMalformed("it is not UTF-8"))
        builder.clientData = Array("{\"type\":\"webauthn.create\",\"origin\":\"https://console.example.com\"}".utf8)
        assertRefused(builder, .clientDataMalformed("it has no string \"challenge\""))
        builder.clientData = Array("{\"type\":\"webauthn.create\",\"challenge\":\"\(challenge.base64URL)\",\"origin\":\"https://console.example.com\",\"crossOrigin\":\"no\"}".utf8)
        assertRefused(builder, .clientDataMalformed("its \"crossOrigin\" is not a boolean"))
    }

    func testTypeMustBeWebAuthnCreate() {
        var builder = valid!
        builder.type = "webauthn.get"
        assertRefused(builder, .clientDataTypeMismatch(expected: "webauthn.create", received: "webauthn.get"))
    }

    func testChallengeMustBeTheOneIssued() throws {
        var builder = valid!
        builder.challengeSent = try WebAuthnChallenge.random().base64URL
        assertRefused(builder, .challengeMismatch)
        builder.challengeSent = String(challenge.base64URL.dropLast())  // a prefix
        assertRefused(builder, .challengeMismatch)
        builder.challengeSent = challenge.base64URL + "="  // padded
        assertRefused(builder, .challengeMismatch)
    }

    func testOriginMustMatchExactly() {
        for origin in ["https://evil.example", "https://console.example.com:8443", "http://console.example.com",
                       "https://console.example.com/", "https://CONSOLE.example.com", "https://sub.console.example.com"] {
            var builder = valid!
            builder.origin = origin
            assertRefused(builder, .originMismatch(received: origin))
        }
    }

    func testCrossOriginCeremoniesAreRefused() {
        var builder = valid!
        builder.crossOrigin = true
        assertRefused(builder, .crossOrigin)
        builder.crossOrigin = nil
        builder.topOrigin = "https://evil.example"
        assertRefused(builder, .crossOrigin)
        builder.topOrigin = nil
        XCTAssertNoThrow(try testRP.verifyRegistration(builder.response, expectedChallenge: challenge))
    }

    func testAttestationObjectMustBeWellFormedCBOR() {
        var builder = valid!
        builder.attestationObjectSuffix = [0x00]
        assertRefused(builder, .attestationObjectMalformed("CBOR has bytes after the item (from byte \(valid.attestationObject.count))"))
        var response = valid.response
        response.response.attestationObject = Base64URL.encode([0xBF, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0xFF])
        assertRefused(response, .attestationObjectMalformed("CBOR indefinite lengths are not accepted (byte 0)"))
        response.response.attestationObject = Base64URL.encode(TestCBOR.array([]).encoded)
        assertRefused(response, .attestationObjectMalformed("it is not a CBOR map"))
        response.response.attestationObject = Base64URL.encode(TestCBOR.map([
            (.text("fmt"), .text("none")), (.text("attStmt"), .map([])),
        ]).encoded)
        assertRefused(response, .attestationObjectMalformed("it has no byte string \"authData\""))
        response.response.attestationObject = Base64URL.encode(TestCBOR.map([
            (.text("fmt"), .unsigned(1)), (.text("attStmt"), .map([])), (.text("authData"), .bytes(valid.authenticatorData)),
        ]).encoded)
        assertRefused(response, .attestationObjectMalformed("it has no text \"fmt\""))
        response.response.attestationObject = Base64URL.encode(TestCBOR.map([
            (.text("fmt"), .text("none")), (.text("attStmt"), .null), (.text("authData"), .bytes(valid.authenticatorData)),
        ]).encoded)
        assertRefused(response, .attestationObjectMalformed("it has no map \"attStmt\""))
        // The same key twice: which authData would count?
        response.response.attestationObject = Base64URL.encode(TestCBOR.map([
            (.text("fmt"), .text("none")), (.text("attStmt"), .map([])), (.text("authData"), .bytes(valid.authenticatorData)),
            (.text("fmt"), .text("packed")),
        ]).encoded)
        assertRefused(response, .attestationObjectMalformed("a CBOR map repeats the key \"fmt\" (byte \(valid.attestationObject.count))"))
    }

    func testAuthenticatorDataMustParse() {
        var builder = valid!
        builder.authDataSuffix = [0x00]
        assertRefused(builder, .authenticatorDataMalformed(.trailingBytes(1)))
    }

    func testRPIDHashMustBeTheRPIDs() {
        var builder = valid!
        builder.rpID = "example.com"
        assertRefused(builder, .rpIDHashMismatch)
        let otherRP = RelyingParty(id: "other.example.com", name: "Gatehouse", origin: testRP.origin)
        assertRefused(valid, .rpIDHashMismatch, rp: otherRP)
    }

    func testUserPresenceIsRequired() {
        var builder = valid!
        builder.flags &= ~Flag.up
        assertRefused(builder, .userNotPresent)
    }

    func testUserVerificationIsRequiredOnlyWhenThePolicySaysSo() throws {
        var builder = valid!
        builder.flags &= ~Flag.uv
        XCTAssertNoThrow(try testRP.verifyRegistration(builder.response, expectedChallenge: challenge))
        var strict = testRP
        strict.userVerification = .required
        assertRefused(builder, .userNotVerified, rp: strict)
        XCTAssertNoThrow(try strict.verifyRegistration(valid.response, expectedChallenge: challenge))
    }

    func testBackedUpWithoutBackupEligibleIsRefused() {
        var builder = valid!
        builder.flags |= Flag.bs
        assertRefused(builder, .backupStateInvalid)
    }

    func testAttestedCredentialDataIsRequired() {
        var builder = valid!
        builder.flags &= ~Flag.at
        assertRefused(builder, .attestedCredentialDataMissing)
    }

    func testOnlyES256AndRS256KeysAreAccepted() throws {
        var builder = valid!
        let point = try P256.PrivateKey.generate().publicKey.x963Representation
        // Ed25519, as Firefox with a YubiKey offers when asked.
        builder.coseKey = .map([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(6)), (.int(-2), .bytes(Array(point[1..<33])))])
        assertRefused(builder, .unsupportedPublicKey(.unsupportedKeyType(1)))
        builder.coseKey = .map([(.int(1), .int(2)), (.int(3), .int(-35)), (.int(-1), .int(2)),
                                (.int(-2), .bytes(Array(point[1..<33]))), (.int(-3), .bytes(Array(point[33..<65])))])
        assertRefused(builder, .unsupportedPublicKey(.unsupportedAlgorithm(-35)))
        // A relying party configured for ES256 only refuses an RS256 key.
        var es256Only = testRP
        es256Only.algorithms = [.es256]
        assertRefused(RegistrationBuilder(SoftwareAuthenticator.rs256(), challenge: challenge), .unsupportedPublicKey(.unsupportedAlgorithm(-257)),
                      rp: es256Only)
    }

    func testAttestationNoneMustHaveAnEmptyStatement() {
        var builder = valid!
        builder.attStmt = [(.text("sig"), .bytes([1]))]
        assertRefused(builder, .attestationStatementInvalid)
    }

    func testOtherAttestationFormatsAreAcceptedAndTheirStatementIgnored() throws {
        var builder = valid!
        builder.fmt = "packed"
        builder.aaguid = Array(repeating: 0xAB, count: 16)
        builder.attStmt = [(.text("alg"), .int(-7)), (.text("sig"), .bytes([0x30, 0x00])),
                           (.text("x5c"), .array([.bytes([0x30, 0x82, 0x01, 0x00])]))]
        let credential = try testRP.verifyRegistration(builder.response, expectedChallenge: challenge)
        XCTAssertEqual(credential.attestationFormat, "packed")
        XCTAssertEqual(credential.aaguid, Array(repeating: 0xAB, count: 16))
    }

    func testTransportsAreKeptOnlyWhenTheyLookLikeTransports() throws {
        var builder = valid!
        builder.transports = ["usb", "usb", "<script>", "", String(repeating: "a", count: 40), "smart-card", "nfc"]
        XCTAssertEqual(try testRP.verifyRegistration(builder.response, expectedChallenge: challenge).transports,
                       ["usb", "smart-card", "nfc"])
        builder.transports = nil
        XCTAssertEqual(try testRP.verifyRegistration(builder.response, expectedChallenge: challenge).transports, [])
    }

    func testEveryErrorNamesItsStep() {
        XCTAssertEqual(WebAuthnError.challengeMismatch.step, "challenge")
        XCTAssertEqual(WebAuthnError.signCountNotIncreasing(stored: 5, received: 5).step, "signature counter")
        XCTAssertEqual(WebAuthnError.signCountNotIncreasing(stored: 5, received: 3).description,
                       "the signature counter went from 5 to 3, not up: the authenticator may have been cloned")
        XCTAssertFalse(WebAuthnError.challengeMismatch.description.contains(challenge.base64URL))
    }
}
