import Foundation
import JOSE

/// What `ClientSecretInspector` found.
public struct ClientSecretInspection: Sendable, Codable {
    /// The decoded header and claims, nil when the token could not be decoded.
    public let claims: JWTClaimsSummary?
    /// Seconds until `exp` (negative once expired).
    public let secondsToExpiry: Int64?
    /// `exp` − `iat`.
    public let lifetimeSeconds: Int64?
    /// Whether the signature was checked against a key in the ring.
    public let signatureChecked: Bool
    /// Every check, errors first.
    public let findings: [AppleFinding]
    /// One line: whether Apple would accept it, and if not the first reason.
    public let verdict: String
    /// True when no check failed.
    public var acceptable: Bool { !findings.contains { $0.severity == .error } }
}

/// Diagnoses a client secret that is already deployed: everything that makes Apple answer an opaque
/// `invalid_client`, each in words — a DER-sized signature, a revoked or unknown `kid`, a lifetime over the cap,
/// `iss`/`sub`/`aud`/`alg` mismatches against the key ring and the provider configuration, expiry. The token is
/// never stored.
public struct ClientSecretInspector {
    /// The store.
    public let store: Store
    let ring: AppleKeyRing

    public init(store: Store, masterKey: MasterKey? = nil) {
        self.init(store: store, masterKey: masterKey, ring: AppleKeyRing(store: store, masterKey: masterKey))
    }

    init(store: Store, masterKey: MasterKey?, ring: AppleKeyRing) {
        self.store = store
        self.ring = ring
    }

    /// A secret expiring sooner than this (or than a quarter of its lifetime, for short-lived ones) gets a warning.
    public static let expiryWarning: Int64 = 7 * 86_400
    /// Clock skew tolerated for `iat` in the future.
    public static let clockSkew: Int64 = 60
    static let apple = "invalid_client"

    /// Inspects `token` at `now`.
    public func inspect(_ token: String, now: Timestamp) throws -> ClientSecretInspection {
        let compact: JWT.Compact
        switch TokenInput.decode(token, what: "client secret", reported: Self.apple) {
        case .failure(let finding):
            return ClientSecretInspection(claims: nil, secondsToExpiry: nil, lifetimeSeconds: nil, signatureChecked: false,
                                          findings: [finding], verdict: "Apple would answer invalid_client: \(finding.message)")
        case .success(let value): compact = value
        }
        let claims = JWTClaimsSummary(compact)
        var findings: [AppleFinding] = []
        func error(_ code: String, _ message: String, fix: String? = nil) { findings.append(AppleFinding(.error, code, message, reported: Self.apple, fix: fix)) }
        let config = try ProviderConfiguration(store: store).apple()

        // Header.
        if claims.algorithm == "ES256" {
            findings.append(AppleFinding(.ok, "alg", "alg is ES256"))
        } else {
            error("alg_mismatch", "alg is \"\(claims.algorithm.prefix(20))\"; Apple accepts only ES256 client secrets", fix: "mint with \(command: .appleSecretMint) (ES256)")
        }
        var ringKey: AppleKey?
        if let kid = claims.keyID {
            if let id = try? KeyID(kid), let key = try ring.list().first(where: { $0.keyID == id }) {
                ringKey = key
                switch key.state {
                case .revoked:
                    error("revoked_key", "kid \(kid) names a key revoked in Apple's portal (recorded \(key.revokedAt?.iso8601 ?? "?")): Apple rejects every secret signed with it",
                          fix: "mint a new secret from the active key: \(run: .appleSecretMint)")
                case .active:
                    findings.append(AppleFinding(.ok, "kid", "kid \(kid) is the active key"))
                case .retired:
                    findings.append(AppleFinding(.note, "retired_key", "kid \(kid) is a retired key: Apple still accepts it until it is revoked, but new secrets come from the active key"))
                case .staged:
                    findings.append(AppleFinding(.note, "staged_key", "kid \(kid) is a staged key that was never activated here"))
                }
            } else {
                findings.append(AppleFinding(.warning, "unknown_kid", "kid \(kid.prefix(40)) is not a key in this ring, so the signature cannot be checked; if Apple does not know the key either, it answers invalid_client",
                                             reported: Self.apple, fix: "import the key (\(run: .appleKeyImport, "AuthKey_\(kid.prefix(10)).p8")) or check the kid against Apple's portal"))
            }
        } else {
            error("no_kid", "the header has no kid: Apple cannot tell which key signed the secret", fix: "mint with \(command: .appleSecretMint), which sets kid to the Key ID")
        }

        // Signature.
        var signatureChecked = false
        let derRaw = claims.signatureLength == 64 ? nil : ECDSASignature.raw(fromDER: compact.signature)
        if claims.signatureLength == 64 {
            findings.append(AppleFinding(.ok, "signature_size", "the signature is 64 bytes (raw r‖s, as JWS requires)"))
        } else if derRaw != nil {
            error("der_signature", "the signature is \(claims.signatureLength) bytes of DER (ASN.1 ECDSA-Sig-Value), not the 64-byte r‖s JWS requires — the classic cause of invalid_client",
                  fix: "sign with a JWS library (or convert DER to r‖s); \(command: .appleSecretMint) does this right")
        } else {
            error("signature_size", "the signature is \(claims.signatureLength) bytes; an ES256 signature is exactly 64 (r‖s)", fix: "the token was truncated or signed with another algorithm: mint it again")
        }
        if let ringKey, claims.algorithm == "ES256", let publicKey = try? ring.privateKey(ringKey).publicKey {
            let signature = derRaw ?? compact.signature
            signatureChecked = true
            if publicKey.isValidSignature(signature, for: compact.signingInput) {
                findings.append(AppleFinding(.ok, "signature", derRaw == nil ? "the signature verifies with key \(ringKey.keyID)"
                                                                                : "the DER signature is otherwise correct for key \(ringKey.keyID): only its encoding is wrong"))
            } else {
                error("bad_signature", "the signature does not verify with key \(ringKey.keyID): the secret was signed with another key than its kid says, or altered after signing",
                      fix: "mint it again with \(command: .appleSecretMint)")
            }
        }

        // Claims.
        let teamID = ringKey?.teamID ?? config.teamID
        if let iss = claims.issuer {
            if !AppleIdentifier.isWellFormed(iss) {
                error("iss_malformed", "iss \"\(iss.prefix(40))\" is not a Team ID (10 upper-case letters or digits)", fix: "iss must be your Team ID")
            } else if let ringKey, iss != ringKey.teamID.rawValue {
                error("iss_mismatch", "iss \(iss) is not the Team ID \(ringKey.teamID) that key \(ringKey.keyID) belongs to", fix: "iss must be the Team ID of the key's team")
            } else if let team = config.teamID, iss != team.rawValue {
                error("iss_mismatch", "iss \(iss) is not the configured Team ID \(team)", fix: "iss must be your Team ID; check \(command: .providersShow)")
            } else {
                findings.append(AppleFinding(.ok, "iss", "iss \(iss) is the Team ID" + (teamID == nil ? " (shape only: no Team ID is configured)" : "")))
            }
        } else {
            error("no_iss", "the secret has no iss: it must be the Team ID")
        }
        if let sub = claims.subject {
            let expected = [config.servicesID, config.bundleID].compactMap { $0 }
            if expected.isEmpty {
                findings.append(AppleFinding(.note, "sub", "sub is \(sub); no Services ID is configured to compare it with"))
            } else if expected.contains(sub) {
                findings.append(AppleFinding(.ok, "sub", "sub \(sub) is the configured \(sub == config.servicesID ? "Services ID" : "bundle id")"))
            } else {
                error("sub_mismatch", "sub \(sub.prefix(80)) is not the client id the token request uses (the Services ID \(config.servicesID ?? "(unset)")\(config.bundleID.map { " or the bundle id \($0)" } ?? ""))",
                      fix: "sub must equal the client_id sent to Apple: mint with \(field: .clientID) \(config.servicesID ?? "<Services ID>")")
            }
        } else {
            error("no_sub", "the secret has no sub: it must be the client id (the Services ID)")
        }
        switch claims.audience {
        case [ClientSecretMinter.audience]?:
            if compact.payload["aud"]?.stringValue != nil {
                findings.append(AppleFinding(.ok, "aud", "aud is \(ClientSecretMinter.audience)"))
            } else {
                findings.append(AppleFinding(.warning, "aud_array", "aud is a one-element array; Apple documents it as the string \(ClientSecretMinter.audience)", fix: "mint with \(command: .appleSecretMint)"))
            }
        case let values?:
            error("aud_mismatch", "aud is \(values.map { "\"\($0.prefix(60))\"" }.joined(separator: ", ")); Apple requires exactly \(ClientSecretMinter.audience)")
        case nil:
            error("no_aud", "the secret has no aud: it must be \(ClientSecretMinter.audience)")
        }

        // Times.
        let nowSeconds = now.seconds
        var secondsToExpiry: Int64?
        var lifetime: Int64?
        if let iat = claims.issuedAt {
            if iat > nowSeconds + Self.clockSkew { error("iat_future", "iat is \(iat - nowSeconds) s in the future (\(Timestamp(seconds: iat).iso8601)): the minting clock is wrong") }
        } else {
            error("no_iat", compact.payload["iat"].map { "iat is \(IDTokenDiagnosis.describeType($0)), not a whole number of seconds since 1970 (years 0000–9999)" }
                  ?? "the secret has no numeric iat (issued-at, seconds since 1970)")
        }
        if let exp = claims.expiresAt {
            secondsToExpiry = exp - nowSeconds
            let at = Timestamp(seconds: exp).iso8601
            if let iat = claims.issuedAt {
                lifetime = exp - iat
                if exp <= iat { error("exp_before_iat", "exp is not after iat") }
                if exp - iat > ClientSecretMinter.maxLifetimeSeconds {
                    error("lifetime_over_cap", "the lifetime exp − iat is \(exp - iat) s, over Apple's cap of 15,777,000 s (about 182 days)",
                          fix: "mint with \(field: .ttl) \(ClientSecretMinter.maxLifetimeSeconds) or less (better: 1h, minted in the runtime)")
                }
            }
            if exp <= nowSeconds {
                error("expired", "the secret expired at \(at), \(Seconds(nowSeconds - exp)) ago", fix: "mint a new one: \(run: .appleSecretMint), and redeploy it")
            } else if exp - nowSeconds > ClientSecretMinter.maxLifetimeSeconds {
                error("exp_over_cap", "exp is \(exp - nowSeconds) s from now, over Apple's cap of 15,777,000 s")
            } else if exp - nowSeconds < min(Self.expiryWarning, max(0, (lifetime ?? Self.expiryWarning * 4) / 4)) {
                findings.append(AppleFinding(.warning, "expires_soon", "the secret expires at \(at), in \(Seconds(exp - nowSeconds))", fix: "mint and deploy a new one before then"))
            } else {
                findings.append(AppleFinding(.ok, "exp", "the secret expires at \(at), in \(Seconds(exp - nowSeconds))"))
            }
        } else {
            error("no_exp", compact.payload["exp"].map { "exp is \(IDTokenDiagnosis.describeType($0)), not a whole number of seconds since 1970 (years 0000–9999)" }
                  ?? "the secret has no numeric exp (expiry, seconds since 1970)")
        }

        findings.sort { $0.severity > $1.severity }
        let verdict: String
        if let first = findings.first(where: { $0.severity == .error }) {
            verdict = "Apple would answer invalid_client: \(first.message)"
        } else if !signatureChecked {
            verdict = "no fault found in the claims, but the signature could not be checked (the key is not in this ring)"
        } else {
            verdict = "Apple should accept this client secret"
        }
        return ClientSecretInspection(claims: claims, secondsToExpiry: secondsToExpiry, lifetimeSeconds: lifetime,
                                      signatureChecked: signatureChecked, findings: findings, verdict: verdict)
    }
}
