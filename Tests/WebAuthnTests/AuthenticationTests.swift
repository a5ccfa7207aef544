import Foundation
import JOSE
import WebAuthn
@testable import WebAuthnTestSupport
import XCTest

/// Authentication (WebAuthn Level 3 §7.2): an assertion from the software authenticator passes with the key its
/// registration stored; each step, broken alone, fails with its own error.
final class AuthenticationTests: XCTestCase {
    var challenge: WebAuthnChallenge!
    var authenticator: SoftwareAuthenticator!
    var stored: StoredCredential!
    var valid: AssertionBuilder!

    override func setUpWithError() throws {
        authenticator = try SoftwareAuthenticator.es256(signCount: 10)
        stored = try register(authenticator)
        challenge = try WebAuthnChallenge.random()
        valid = AssertionBuilder(authenticator, challenge: challenge, signCount: 11)
    }

    /// Registers through the verifier, as the console will, and returns what it stores.
    func register(_ authenticator: SoftwareAuthenticator) throws -> StoredCredential {
        let challenge = try WebAuthnChallenge.random()
        let credential = try testRP.verifyRegistration(RegistrationBuilder(authenticator, challenge: challenge).response,
                                                       expectedChallenge: challenge)
        return StoredCredential(id: credential.id, publicKeyCOSE: credential.publicKeyCOSE, signCount: credential.signCount)
    }

    func verify(_ builder: AssertionBuilder, rp: RelyingParty = testRP, stored: StoredCredential? = nil,
                allowed: [CredentialID]? = nil, userHandle: [UInt8]? = nil) throws -> VerifiedAssertion {
        let stored = stored ?? self.stored!
        return try rp.verifyAuthentication(try builder.response(), expectedChallenge: challenge,
                                           allowedCredentialIDs: allowed ?? [CredentialID(bytes: [1]), stored.id],
                                           credential: stored, expectedUserHandle: userHandle)
    }

    func assertRefused(_ builder: AssertionBuilder, _ expected: WebAuthnError, rp: RelyingParty = testRP,
                       stored: StoredCredential? = nil, allowed: [CredentialID]? = nil, userHandle: [UInt8]? = nil,
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try verify(builder, rp: rp, stored: stored, allowed: allowed, userHandle: userHandle),
                             file: file, line: line) { error in
            XCTAssertEqual(error as? WebAuthnError, expected, file: file, line: line)
        }
    }

    func testAnES256AssertionVerifiesAndYieldsTheNewCounter() throws {
        let result = try verify(valid)
        XCTAssertEqual(result.credentialID, stored.id)
        XCTAssertEqual(result.signCount, 11)
        XCTAssertTrue(result.userVerified)
        XCTAssertEqual(result.flags, [.userPresent, .userVerified])
    }

    func testAnRS256AssertionVerifies() throws {
        let rsa = SoftwareAuthenticator.rs256()
        let stored = try register(rsa)
        let result = try verify(AssertionBuilder(rsa, challenge: challenge, signCount: 1), stored: stored)
        XCTAssertEqual(result.signCount, 1)
        var tampered = AssertionBuilder(rsa, challenge: challenge, signCount: 2)
        tampered.tamperSignature = { signature in var copy = signature; copy[100] ^= 1; return copy }
        assertRefused(tampered, .signatureInvalid, stored: stored)
    }

    func testTheResponseArrivesAsTheBrowsersJSON() throws {
        let response = try valid.response()
        let json = """
            {"id":"\(response.id)","rawId":"\(response.rawId)","type":"public-key","authenticatorAttachment":"cross-platform",
             "clientExtensionResults":{},
             "response":{"clientDataJSON":"\(response.response.clientDataJSON)",
                         "authenticatorData":"\(response.response.authenticatorData)",
                         "signature":"\(response.response.signature)","userHandle":null}}
            """
        let decoded = try JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(json.utf8))
        XCTAssertEqual(try testRP.verifyAuthentication(decoded, expectedChallenge: challenge, allowedCredentialIDs: [stored.id],
                                                       credential: stored).signCount, 11)
    }

    // Each step, in the order §7.2 takes them.

    func testCredentialTypeMustBePublicKey() {
        var builder = valid!
        builder.credentialType = "otp"
        assertRefused(builder, .credentialTypeNotPublicKey)
    }

    func testIDMustBeRawID() {
        var builder = valid!
        builder.id = Base64URL.encode([1])
        assertRefused(builder, .credentialIDMismatch)
    }

    func testTheCredentialMustBeAllowed() throws {
        assertRefused(valid, .credentialNotAllowed, allowed: [CredentialID(bytes: [1, 2, 3])])
        assertRefused(valid, .credentialNotAllowed, allowed: [])
        // An assertion by another registered authenticator, checked against this one's stored key.
        let other = try SoftwareAuthenticator.es256()
        assertRefused(AssertionBuilder(other, challenge: challenge, signCount: 1), .storedCredentialMismatch,
                      allowed: [stored.id, CredentialID(bytes: other.credentialID)])
    }

    func testTheUserHandleMustBeTheUsersWhenPresent() throws {
        var builder = valid!
        builder.userHandle = [1, 2, 3]
        XCTAssertEqual(try verify(builder, userHandle: [1, 2, 3]).signCount, 11)
        assertRefused(builder, .userHandleMismatch, userHandle: [4, 5, 6])
        builder.userHandle = nil
        XCTAssertNoThrow(try verify(builder, userHandle: [4, 5, 6]))
    }

    func testTypeMustBeWebAuthnGet() {
        var builder = valid!
        builder.type = "webauthn.create"
        assertRefused(builder, .clientDataTypeMismatch(expected: "webauthn.get", received: "webauthn.create"))
        builder.type = "payment.get"
        assertRefused(builder, .clientDataTypeMismatch(expected: "webauthn.get", received: "payment.get"))
    }

    func testChallengeMustBeTheOneIssued() throws {
        var builder = valid!
        builder.challengeSent = try WebAuthnChallenge.random().base64URL
        assertRefused(builder, .challengeMismatch)
        builder.challengeSent = "not base64url!"
        assertRefused(builder, .challengeMismatch)
    }

    func testOriginMustMatchExactly() {
        var builder = valid!
        builder.origin = "https://console.example.com.evil.example"
        assertRefused(builder, .originMismatch(received: "https://console.example.com.evil.example"))
        builder.origin = "android:apk-key-hash:abc"
        assertRefused(builder, .originMismatch(received: "android:apk-key-hash:abc"))
    }

    func testCrossOriginIsRefused() {
        var builder = valid!
        builder.crossOrigin = true
        assertRefused(builder, .crossOrigin)
    }

    func testClientDataMustParse() {
        var builder = valid!
        builder.clientData = Array("[]".utf8)
        assertRefused(builder, .clientDataMalformed("it is not a JSON object"))
        builder.clientData = Array("{\"type\":\"webauthn.get\",\"challenge\":\"\(challenge.base64URL)\",\"origin\":1}".utf8)
        assertRefused(builder, .clientDataMalformed("it has no string \"origin\""))
    }

    func testRPIDHashMustBeTheRPIDs() {
        var builder = valid!
        builder.rpID = "evil.example"
        assertRefused(builder, .rpIDHashMismatch)
    }

    func testUserPresenceIsRequired() {
        var builder = valid!
        builder.flags = Flag.uv
        assertRefused(builder, .userNotPresent)
    }

    func testUserVerificationIsRequiredOnlyWhenThePolicySaysSo() throws {
        var builder = valid!
        builder.flags = Flag.up
        XCTAssertFalse(try verify(builder).userVerified)
        var strict = testRP
        strict.userVerification = .required
        assertRefused(builder, .userNotVerified, rp: strict)
    }

    func testBackedUpWithoutBackupEligibleIsRefused() {
        var builder = valid!
        builder.flags |= Flag.bs
        assertRefused(builder, .backupStateInvalid)
    }

    func testAuthenticatorDataMustParse() {
        var builder = valid!
        builder.authDataSuffix = [0xA0]  // signed, but not announced by ED
        assertRefused(builder, .authenticatorDataMalformed(.trailingBytes(1)))
        builder = valid
        builder.tamperAuthenticatorData = { Array($0.prefix(36)) }
        assertRefused(builder, .authenticatorDataMalformed(.truncated("its fixed 37 bytes (rpIdHash, flags, signCount)")))
    }

    func testTheSignatureMustVerify() throws {
        var builder = valid!
        // A flipped bit in the signature's s.
        builder.tamperSignature = { signature in var copy = signature; copy[copy.count - 1] ^= 1; return copy }
        assertRefused(builder, .signatureInvalid)
        // Authenticator data changed after signing (a counter raised by someone without the key).
        builder = valid
        builder.tamperAuthenticatorData = { data in var copy = data; copy[36] &+= 1; return copy }
        assertRefused(builder, .signatureInvalid)
        // Client data changed after signing.
        builder = valid
        let response = try builder.response()
        var swapped = response
        swapped.response.clientDataJSON = Base64URL.encode(clientDataJSON(
            type: "webauthn.get", challenge: challenge.base64URL, origin: testRP.origin, crossOrigin: nil))
        XCTAssertThrowsError(try testRP.verifyAuthentication(swapped, expectedChallenge: challenge, allowedCredentialIDs: [stored.id],
                                                             credential: stored)) {
            XCTAssertEqual($0 as? WebAuthnError, .signatureInvalid)
        }
        // JOSE's raw r‖s form, and the DER signature with a byte after it.
        builder = valid
        builder.tamperSignature = { der in
            var raw = [UInt8]()
            var index = 2
            for _ in 0..<2 {
                let length = Int(der[index + 1])
                let integer = der[(index + 2)..<(index + 2 + length)].drop(while: { $0 == 0 })
                raw += [UInt8](repeating: 0, count: 32 - integer.count) + integer
                index += 2 + length
            }
            return raw
        }
        assertRefused(builder, .signatureInvalid)
        builder.tamperSignature = { $0 + [0] }
        assertRefused(builder, .signatureInvalid)
        // Another key's signature.
        let impostor = SoftwareAuthenticator(key: .p256(try P256.PrivateKey.generate()), credentialID: authenticator.credentialID)
        assertRefused(AssertionBuilder(impostor, challenge: challenge, signCount: 50), .signatureInvalid)
    }

    func testTheStoredKeyMustParse() {
        var damaged = stored!
        damaged.publicKeyCOSE.removeLast()
        XCTAssertThrowsError(try verify(valid, stored: damaged)) {
            guard case .storedPublicKeyInvalid = $0 as? WebAuthnError else { return XCTFail("\($0)") }
        }
    }

    func testACounterThatDoesNotIncreaseIsAPossibleClone() throws {
        // Equal, and lower, than the stored 10.
        for received: UInt32 in [10, 9, 0] {
            var builder = valid!
            builder.signCount = received
            assertRefused(builder, .signCountNotIncreasing(stored: 10, received: received))
        }
        // Both zero: an authenticator that keeps no counter (most synced passkeys) passes every time.
        let counterless = try SoftwareAuthenticator.es256(signCount: 0)
        let stored = try register(counterless)
        XCTAssertEqual(stored.signCount, 0)
        for _ in 0..<2 {
            XCTAssertEqual(try verify(AssertionBuilder(counterless, challenge: challenge, signCount: 0), stored: stored).signCount, 0)
        }
        // Stored zero, a counter appears: accepted, and from then on it must rise.
        var rising = stored
        rising.signCount = try verify(AssertionBuilder(counterless, challenge: challenge, signCount: 3), stored: stored).signCount
        assertRefused(AssertionBuilder(counterless, challenge: challenge, signCount: 3), .signCountNotIncreasing(stored: 3, received: 3),
                      stored: rising)
        assertRefused(AssertionBuilder(counterless, challenge: challenge, signCount: 0), .signCountNotIncreasing(stored: 3, received: 0),
                      stored: rising)
    }

    /// Mutated assertions (authenticator data, client data, signature; a fixed seed): each is refused unless the
    /// mutations cancelled out, and none crashes.
    func testFuzzedAssertionsAreRefused() throws {
        var random = SeededGenerator(seed: 0x44_A55E_7710)
        let rsa = SoftwareAuthenticator.rs256()
        let rsaStored = try register(rsa)
        for (authenticator, stored) in [(authenticator!, stored!), (rsa, rsaStored)] {
            let valid = try AssertionBuilder(authenticator, challenge: challenge, signCount: 100).response()
            let members: [WritableKeyPath<AuthenticatorAssertionResponseJSON, String>] = [\.authenticatorData, \.clientDataJSON, \.signature]
            var refused = 0
            for index in 0..<3_000 {
                let member = members[index % members.count]
                var bytes = try XCTUnwrap(Base64URL.decode(valid.response[keyPath: member]))
                let original = bytes
                for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                    let at = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: bytes[at] ^= 1 << UInt8.random(in: 0...7, using: &random)
                    case 1: bytes.insert(UInt8.random(in: 0...255, using: &random), at: at)
                    case 2: bytes.remove(at: at)
                    default: bytes.removeSubrange(at...)
                    }
                }
                var response = valid
                response.response[keyPath: member] = Base64URL.encode(bytes)
                do {
                    _ = try testRP.verifyAuthentication(response, expectedChallenge: challenge, allowedCredentialIDs: [stored.id],
                                                        credential: stored)
                    XCTAssertEqual(bytes, original, "a mutated \(member) was accepted")
                } catch {
                    refused += 1
                }
            }
            XCTAssertGreaterThan(refused, 2_900)
        }
    }

    /// Issue 44's budget: a login with a passkey under 50 ms of server time. Verification is most of it.
    func testVerificationIsWellWithinTheLoginBudget() throws {
        let rsa = SoftwareAuthenticator.rs256()
        let rsaStored = try register(rsa)
        for (name, authenticator, stored) in [("ES256", authenticator!, stored!), ("RS256", rsa, rsaStored)] {
            let response = try AssertionBuilder(authenticator, challenge: challenge, signCount: 100).response()
            let rounds = 200
            let started = Date()
            for _ in 0..<rounds {
                _ = try testRP.verifyAuthentication(response, expectedChallenge: challenge, allowedCredentialIDs: [stored.id],
                                                    credential: stored)
            }
            let each = Date().timeIntervalSince(started) / Double(rounds) * 1000
            print("WebAuthn \(name) assertion verified in \(String(format: "%.3f", each)) ms (debug build)")
            XCTAssertLessThan(each, 25, name)
        }
    }

    func testTheCounterIsJudgedOnlyAfterTheSignature() {
        // A forged assertion with a stale counter is a bad signature, not a clone alarm.
        var builder = valid!
        builder.signCount = 1
        builder.tamperSignature = { signature in var copy = signature; copy[copy.count - 1] ^= 1; return copy }
        assertRefused(builder, .signatureInvalid)
    }
}
