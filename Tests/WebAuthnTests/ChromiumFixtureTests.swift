import Foundation
import JOSE
import WebAuthn
@testable import WebAuthnTestSupport
import XCTest

/// Real ceremonies from Chromium's virtual authenticator (CTAP2, internal, user verification on), recorded once by
/// Tests/Fixtures/webauthn/make_chromium_fixtures.py as `credential.toJSON()` gave them: what the console's page will
/// post, byte for byte.
final class ChromiumFixtureTests: XCTestCase {
    struct Fixtures: Decodable {
        struct Assertion: Decodable {
            let challenge: String
            let response: AuthenticationResponseJSON
        }

        struct Ceremony: Decodable {
            let name: String
            let rpId: String
            let origin: String
            let userHandle: String
            let registrationChallenge: String
            let registration: RegistrationResponseJSON
            let assertions: [Assertion]
        }

        let ceremonies: [Ceremony]
    }

    func challenge(_ text: String) throws -> WebAuthnChallenge {
        WebAuthnChallenge(bytes: try XCTUnwrap(Base64URL.decode(text)))
    }

    func testChromiumsCeremoniesVerify() throws {
        let url = packageRoot.appendingPathComponent("Tests/Fixtures/webauthn/chromium_fixtures.json")
        let fixtures = try JSONDecoder().decode(Fixtures.self, from: Data(contentsOf: url))
        XCTAssertEqual(fixtures.ceremonies.map(\.name), ["es256", "rs256"])
        for ceremony in fixtures.ceremonies {
            let rp = try RelyingParty(origin: ceremony.origin, name: "Gatehouse")
            XCTAssertEqual(rp.id, ceremony.rpId)
            let credential = try rp.verifyRegistration(ceremony.registration,
                                                       expectedChallenge: try challenge(ceremony.registrationChallenge))
            XCTAssertEqual(credential.algorithm, ceremony.name == "es256" ? .es256 : .rs256)
            XCTAssertEqual(credential.transports, ["internal"])
            XCTAssertTrue(credential.flags.isSuperset(of: [.userPresent, .userVerified, .attestedCredentialData]))
            XCTAssertEqual(credential.attestationFormat, "none")

            var stored = StoredCredential(id: credential.id, publicKeyCOSE: credential.publicKeyCOSE, signCount: credential.signCount)
            let userHandle = try XCTUnwrap(Base64URL.decode(ceremony.userHandle))
            for assertion in ceremony.assertions {
                let verified = try rp.verifyAuthentication(
                    assertion.response, expectedChallenge: try challenge(assertion.challenge),
                    allowedCredentialIDs: [credential.id], credential: stored, expectedUserHandle: userHandle)
                XCTAssertGreaterThan(verified.signCount, stored.signCount, ceremony.name)
                XCTAssertTrue(verified.userVerified)
                stored.signCount = verified.signCount
            }
            // The first assertion replayed after the second: Chromium's counter rose, so this is a clone's.
            let first = try XCTUnwrap(ceremony.assertions.first)
            XCTAssertThrowsError(try rp.verifyAuthentication(
                first.response, expectedChallenge: try challenge(first.challenge), allowedCredentialIDs: [credential.id],
                credential: stored)) {
                guard case .signCountNotIncreasing = $0 as? WebAuthnError else { return XCTFail("\($0)") }
            }
            // Another user's handle.
            XCTAssertThrowsError(try rp.verifyAuthentication(
                ceremony.assertions[1].response, expectedChallenge: try challenge(ceremony.assertions[1].challenge),
                allowedCredentialIDs: [credential.id], credential: stored, expectedUserHandle: [1, 2, 3])) {
                XCTAssertEqual($0 as? WebAuthnError, .userHandleMismatch)
            }
            // The console behind another origin (a proxy's name the operator did not configure).
            let elsewhere = try RelyingParty(origin: "https://localhost", name: "Gatehouse")
            XCTAssertThrowsError(try elsewhere.verifyRegistration(
                ceremony.registration, expectedChallenge: try challenge(ceremony.registrationChallenge))) {
                XCTAssertEqual($0 as? WebAuthnError, .originMismatch(received: ceremony.origin))
            }
        }
    }
}
