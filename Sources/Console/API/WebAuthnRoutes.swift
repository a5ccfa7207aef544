import Foundation
import Gatehouse
import HTTPServer
import JOSE
import WebAuthn

/// The signed-in admin's passkeys (WebAuthn Level 3), registered with the console's relying party
/// (`AuthSettings.relyingParty`: `serve --origin`, or `http://localhost:PORT` on loopback):
///
/// - `POST /api/auth/webauthn/register/options` {password} → `PublicKeyCredentialCreationOptionsJSON`: a fresh
///   challenge (single use, 5 minutes), `rp` {id, name}, `user` {id: the admin's random handle, name, displayName},
///   ES256 and RS256, the admin's passkeys as `excludeCredentials`, a discoverable credential and user verification
///   preferred, attestation `none` (open during enrolment; step-up when the admin has a factor already)
/// - `POST /api/auth/webauthn/register` {credential: RegistrationResponseJSON, name?} → {id, recoveryCodes?}: verified
///   (§7.1) against that challenge, which it uses up; a credential id registered to anyone is 409 `conflict`; with the
///   admin's first factor come 10 recovery codes, shown once; the login's factor check is now (open during enrolment)
///
/// A refused registration is 400 `passkey_refused` naming the step, and audited; without a relying party both routes
/// answer 409 `passkeys_unavailable`.
enum WebAuthnRoutes {
    struct OptionsRequest: Decodable {
        let password: String
    }

    struct RegisterRequest: Decodable {
        let credential: RegistrationResponseJSON
        let name: String?
    }

    struct Registered: Encodable {
        let id: String
        /// Only with the admin's first factor: shown this once.
        let recoveryCodes: [String]?
    }

    static func register(on router: inout Router) {
        router.add("POST", "/api/auth/webauthn/register/options", role: .viewer, factor: [.enrolment, .stepUp]) { ctx in
            let body = try ctx.body(OptionsRequest.self)
            let relyingParty = try relyingParty(ctx)
            try ctx.reauthenticate(password: body.password)
            let admin = try ctx.admin
            let options = try ctx.stores.withStore { store in
                let factors = ctx.tokens(store).factors
                let handle = try factors.webAuthnUserHandle(of: admin)
                let registered = try factors.webAuthnCredentials(of: admin).compactMap { CredentialID(base64URL: $0.credentialID) }
                let issued = try MFAChallenges(store: store).issue(.register, for: admin, now: ctx.now)
                guard let challenge = Base64URL.decode(issued) else { throw GatehouseError("a registration challenge could not be read back") }
                return try relyingParty.creationOptions(user: WebAuthnUser(handle: handle, name: admin.username, displayName: admin.username),
                                                        excludeCredentials: registered.map { CredentialDescriptor(id: $0) },
                                                        challenge: WebAuthnChallenge(bytes: challenge))
            }
            return try JSONBody.response(options)
        }
        router.add("POST", "/api/auth/webauthn/register", role: .viewer, factor: .enrolment) { ctx in
            let body = try ctx.body(RegisterRequest.self)
            let relyingParty = try relyingParty(ctx)
            // Checked before the challenge is used up, so a name to fix does not cost the ceremony.
            let name = try SecondFactors.factorName(body.name ?? "Passkey")
            let session = try ctx.requireSession()
            let admin = session.admin
            let registered: Registered = try ctx.stores.withStore { store in
                let tokens = ctx.tokens(store)
                func refuse(_ step: String, _ message: String) throws -> Never {
                    try tokens.factors.recordRefusedRegistration(admin, step: step, actor: session.actor, now: ctx.now)
                    throw APIError(status: 400, code: "passkey_refused", message: message, fix: "ask for new options and register the passkey again")
                }
                // The challenge the client data names must be one issued to this admin for a registration: used up now,
                // whatever the outcome.
                guard let challenge = clientDataChallenge(body.credential),
                      try MFAChallenges(store: store).consume(.register, challenge, for: admin, now: ctx.now),
                      let bytes = Base64URL.decode(challenge) else {
                    try refuse("challenge", "the passkey signed a challenge that was not issued to you for a registration, or is used or expired")
                }
                let credential: RegisteredCredential
                do throws(WebAuthnError) {
                    credential = try relyingParty.verifyRegistration(body.credential, expectedChallenge: WebAuthnChallenge(bytes: bytes))
                } catch {
                    try refuse(error.step, "the passkey's registration was refused: \(error.description)")
                }
                let added: (factor: AdminFactor, recoveryCodes: [String]?)
                do {
                    added = try tokens.factors.addWebAuthnCredential(admin, name: name, credentialID: credential.id.base64URL,
                                                                     publicKey: credential.publicKeyCOSE, signCount: credential.signCount,
                                                                     actor: session.actor, now: ctx.now)
                } catch let error as GatehouseError where error.code == .conflict {
                    try tokens.factors.recordRefusedRegistration(admin, step: "credential id already registered", actor: session.actor, now: ctx.now)
                    throw error
                }
                try tokens.markFactorChecked(session, now: ctx.now)
                return Registered(id: added.factor.id, recoveryCodes: added.recoveryCodes)
            }
            return try JSONBody.response(registered)
        }
    }

    /// The console's relying party, or 409 when it has none.
    static func relyingParty(_ ctx: RequestContext) throws -> RelyingParty {
        guard let relyingParty = ctx.auth.relyingParty else {
            throw APIError(status: 409, code: "passkeys_unavailable", message: "passkeys need the console's origin, which is not known",
                           fix: "start the console with --origin https://HOST (behind a TLS proxy), or on loopback and open it as http://localhost:PORT")
        }
        return relyingParty
    }

    /// The challenge a registration's client data names (base64url), read before anything is checked.
    static func clientDataChallenge(_ credential: RegistrationResponseJSON) -> String? {
        guard credential.response.clientDataJSON.utf8.count <= 64 * 1024, let bytes = Base64URL.decode(credential.response.clientDataJSON),
              let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return nil }
        return object["challenge"] as? String
    }
}
