import Foundation
import Gatehouse
import JOSE
import WebAuthn

/// The console's `WebAuthnAssertionVerifier`: WebAuthn Level 3 §7.2 through `RelyingParty.verifyAuthentication`,
/// for the login's second step and for step-up. Gatehouse finds the stored credential by the assertion's `rawId`
/// among the admin's own and judges the counter (`SecondFactors.recordAssertion`, which audits a possible clone):
/// a verified assertion whose counter does not grow is handed back with its counter for that judgement.
///
///     let rp = try RelyingParty(origin: "https://console.example.com", name: "Gatehouse")
///     let auth = AuthSettings(webauthn: PasskeyVerifier(relyingParty: rp))
struct PasskeyVerifier: WebAuthnAssertionVerifier {
    let relyingParty: RelyingParty

    /// Why an assertion was refused: the relying party's step, or JSON that is not an `AuthenticationResponseJSON`.
    enum Refusal: Error, CustomStringConvertible {
        case notAnAssertion
        case webauthn(WebAuthnError)

        var description: String {
            switch self {
            case .notAnAssertion: return "the credential is not an AuthenticationResponseJSON"
            case .webauthn(let error): return error.description
            }
        }
    }

    var relyingPartyID: String? { relyingParty.id }

    func credentialID(of assertion: String) throws -> String {
        let response = try Self.decode(assertion)
        guard CredentialID(base64URL: response.rawId) != nil else { throw Refusal.notAnAssertion }
        return response.rawId
    }

    func challenge(of assertion: String) throws -> String {
        let response = try Self.decode(assertion)
        guard let bytes = Base64URL.decode(response.response.clientDataJSON), bytes.count <= 64 * 1024,
              let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let challenge = object["challenge"] as? String else { throw Refusal.notAnAssertion }
        return challenge
    }

    func verify(assertion: String, challenge: String, credential: WebAuthnCredential) throws -> UInt32 {
        let response = try Self.decode(assertion)
        guard let challengeBytes = Base64URL.decode(challenge), let id = CredentialID(base64URL: credential.credentialID) else {
            throw Refusal.notAnAssertion
        }
        let stored = StoredCredential(id: id, publicKeyCOSE: credential.publicKey, signCount: credential.signCount)
        do {
            return try relyingParty.verifyAuthentication(response, expectedChallenge: WebAuthnChallenge(bytes: challengeBytes),
                                                         allowedCredentialIDs: [id], credential: stored,
                                                         expectedUserHandle: credential.userHandle.flatMap(Base64URL.decode)).signCount
        } catch .signCountNotIncreasing(_, let received) {
            // The signature verified: Gatehouse refuses this counter and audits the possible clone.
            return received
        } catch {
            throw Refusal.webauthn(error)
        }
    }

    /// The assertion JSON, at most 64 KiB.
    static func decode(_ assertion: String) throws -> AuthenticationResponseJSON {
        guard assertion.utf8.count <= 64 * 1024,
              let response = try? JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(assertion.utf8)) else {
            throw Refusal.notAnAssertion
        }
        return response
    }
}
