import Foundation
import JOSE

/// The identity providers whose ID tokens Gatehouse can diagnose.
public enum IDTokenProvider: String, Sendable, Codable, CaseIterable {
    case apple, google

    /// The issuers Better Auth 1.7 accepts for the provider.
    public var issuers: [String] {
        switch self {
        case .apple: return ["https://appleid.apple.com"]
        case .google: return ["https://accounts.google.com", "accounts.google.com"]
        }
    }

    /// Where the provider publishes its signing keys (save it and pass it as the JWKS file).
    public var jwksURL: String {
        switch self {
        case .apple: return "https://appleid.apple.com/auth/keys"
        case .google: return "https://www.googleapis.com/oauth2/v3/certs"
        }
    }
}

/// What `IDTokenDiagnosis` concluded about one ID token.
public struct IDTokenReport: Sendable, Codable {
    public let provider: IDTokenProvider
    /// What the token says (never the token or its signature).
    public let claims: Claims?
    /// The `aud` values Better Auth accepts under the stored provider configuration.
    public let acceptedAudiences: [String]
    /// Whether the signature was checked against a JWKS file.
    public let signatureChecked: Bool
    /// Every check, in the order Better Auth makes them.
    public let findings: [AppleFinding]
    /// The first failing check: where Better Auth stops.
    public let decisive: AppleFinding?
    /// One line: accepted, or rejected and why.
    public let verdict: String
    /// True when Better Auth would accept the token.
    public var accepted: Bool { decisive == nil }

    /// The claims a support engineer needs.
    public struct Claims: Sendable, Codable {
        public let algorithm: String
        public let keyID: String?
        public let issuer: String?
        public let audience: [String]?
        public let subject: String?
        public let email: String?
        /// `email_verified` as sent: `true`, `"true"`, `false`, `"false"`, or absent.
        public let emailVerifiedAsSent: String?
        /// What Better Auth makes of it.
        public let emailVerified: Bool
        public let privateRelay: Bool
        public let hasNonce: Bool
        public let issuedAt: Int64?
        public let expiresAt: Int64?
    }
}

/// Diagnoses an Apple or Google ID token the way Better Auth 1.7 checks it on `signIn.social({ idToken })`:
/// signature against a saved JWKS (by `kid`), `iss`, `aud` against the audiences the stored provider configuration
/// makes Better Auth accept (Apple: `audience`, else `appBundleIdentifier`, else `clientId`; Google: every client
/// id), `exp`, `iat` no older than 1 h, the nonce (Apple: raw or lowercase hex SHA-256; Google: exact), then the
/// email claims. Each failure is named as Better Auth's verifier reports it, with the change that fixes it. The
/// token is never stored.
public struct IDTokenDiagnosis {
    /// The store (for the provider configuration).
    public let store: Store

    public init(store: Store) { self.store = store }

    /// Better Auth's `maxTokenAge` for Apple and Google ID tokens.
    public static let maxTokenAge: Int64 = 3600
    /// What the client receives for every verifier failure.
    public static let clientError = #"401 INVALID_TOKEN ("Invalid token")"#
    /// The largest JWKS file read.
    public static let maxJWKSFileSize = 1 << 20
    /// Domains of Apple's private relay (Hide My Email) addresses.
    public static let relayDomains = ["privaterelay.appleid.com", "private.icloud.com"]

    /// Reads a JWKS file the operator saved, with errors that name it.
    public static func loadJWKS(file path: String) throws -> JWKS {
        let name = (path as NSString).lastPathComponent
        try InputFile.requireRegular(path, what: "the JWKS file")
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw GatehouseError.notFound("cannot read the JWKS file \(path)", fix: "save the provider's keys first, e.g. curl -o apple-keys.json https://appleid.apple.com/auth/keys")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maxJWKSFileSize + 1)) ?? Data()
        guard data.count <= maxJWKSFileSize else { throw GatehouseError.invalid("\(name) is over 1 MiB; a JWKS document is a few KiB") }
        do { return try JWKS(json: Array(data)) } catch {
            throw GatehouseError.invalid("\(name) is not a usable JWKS document: \(error)", fix: "save the provider's keys unchanged (a JSON object with a \"keys\" array)")
        }
    }

    /// Diagnoses `token`. `provider` defaults to the one its `iss` names; `nonce` is the raw nonce the client sent as
    /// `idToken.nonce`; without `jwks` the signature is not checked (and the report says so).
    public func diagnose(_ token: String, provider explicitProvider: IDTokenProvider? = nil, nonce: String? = nil,
                         jwks: JWKS? = nil, now: Timestamp) throws -> IDTokenReport {
        let report = try ProviderConfiguration(store: store).report()
        let compact: JWT.Compact
        switch TokenInput.decode(token, what: "ID token", reported: "JWSInvalid: Invalid Compact JWS") {
        case .failure(let finding):
            let provider = explicitProvider ?? .apple
            return IDTokenReport(provider: provider, claims: nil, acceptedAudiences: Self.audiences(provider, report), signatureChecked: false,
                                 findings: [finding], decisive: finding, verdict: Self.verdict(finding))
        case .success(let value): compact = value
        }
        let payload = compact.payload
        let iss = payload["iss"]?.stringValue
        guard let provider = explicitProvider ?? IDTokenProvider.allCases.first(where: { $0.issuers.contains(iss ?? "") }) else {
            let finding = AppleFinding(.error, "unknown_provider", "iss \"\((iss ?? "(none)").prefix(80))\" is neither Apple's nor Google's, so the provider is unknown",
                                       reported: #"JWTClaimValidationFailed: unexpected "iss" claim value"#, fix: "pass \(field: .provider) apple|google")
            return IDTokenReport(provider: .apple, claims: nil, acceptedAudiences: [], signatureChecked: false, findings: [finding],
                                 decisive: finding, verdict: Self.verdict(finding))
        }
        let accepted = Self.audiences(provider, report)
        var findings: [AppleFinding] = []
        func fail(_ code: String, _ message: String, _ reported: String, fix: String? = nil) {
            findings.append(AppleFinding(.error, code, message, reported: reported, fix: fix))
        }
        func ok(_ code: String, _ message: String) { findings.append(AppleFinding(.ok, code, message)) }

        // 1. Algorithm and signature (jose's jwtVerify checks the JWS before any claim).
        if compact.algorithm != "RS256" {
            fail("alg", "alg is \"\(compact.algorithm.prefix(20))\"; \(provider.rawValue.capitalized) signs ID tokens with RS256", "JOSEAlgNotAllowed / JWSSignatureVerificationFailed",
                 fix: "this token was not issued by \(provider.rawValue.capitalized)'s sign-in")
        }
        var signatureChecked = false
        if let jwks {
            if let kid = compact.keyID {
                do {
                    let key = try jwks.key(withID: kid)
                    signatureChecked = true
                    do {
                        try compact.verify(with: key)
                        ok("signature", "the signature verifies with key \(kid) of the JWKS")
                    } catch {
                        fail("bad_signature", "the signature does not verify with key \(kid): \(error)", "JWSSignatureVerificationFailed: signature verification failed",
                             fix: "the token was altered or not issued by \(provider.rawValue.capitalized)")
                    }
                } catch {
                    fail("unknown_kid", "kid \(kid.prefix(40)) is not in the JWKS file: \(error)", provider == .apple ? "Error: JWK with kid \(kid.prefix(40)) not found" : "no Google key for kid \(kid.prefix(40))",
                         fix: "save the current keys again from \(provider.jwksURL) (keys rotate); if it is still missing, the token is not \(provider.rawValue.capitalized)'s")
                }
            } else {
                fail("no_kid", "the header has no kid: Better Auth looks the key up by kid", "Error: JWK with kid undefined not found")
            }
        } else {
            findings.append(AppleFinding(.warning, "signature_unchecked", "the signature was not checked: no JWKS file was given",
                                         fix: "save \(provider.jwksURL) to a file and pass \(field: .jwks) FILE"))
        }

        // 2. Presence of the claims jose requires (iss, aud, iat with maxTokenAge), in jose's order.
        for claim in ["iss", "aud", "iat"] where payload[claim] == nil {
            fail("missing_\(claim)", "the token has no \(claim) claim", #"JWTClaimValidationFailed: missing required "\#(claim)" claim"#)
        }
        // 3. Issuer.
        if let iss {
            if provider.issuers.contains(iss) { ok("iss", "iss is \(iss)") } else {
                fail("iss", "iss is \"\(iss.prefix(80))\"; Better Auth accepts only \(provider.issuers.joined(separator: " or ")) for \(provider.rawValue)",
                     #"JWTClaimValidationFailed: unexpected "iss" claim value"#, fix: "this is not a \(provider.rawValue.capitalized) ID token, or \(field: .provider) is wrong")
            }
        } else if payload["iss"] != nil {
            fail("iss", "iss is not a string", #"JWTClaimValidationFailed: unexpected "iss" claim value"#)
        }
        // 4. Audience.
        let aud: [String]?
        switch payload["aud"] {
        case .string(let value): aud = [value]
        case .array(let values): aud = values.compactMap(\.stringValue)
        case nil: aud = nil
        case let other?:
            // jose's checkAudiencePresence: anything but a string or an array never matches.
            aud = nil
            fail("aud_type", "aud is \(Self.describeType(other)), not a string or an array of strings", #"JWTClaimValidationFailed: unexpected "aud" claim value"#,
                 fix: "this token was not issued by \(provider.rawValue.capitalized)'s sign-in")
        }
        if let aud {
            if accepted.isEmpty {
                fail("aud", "no audience is configured for \(provider.rawValue), so Gatehouse cannot tell whether \(aud.joined(separator: ", ")) is accepted",
                     #"JWTClaimValidationFailed: unexpected "aud" claim value"#, fix: "configure the provider: \(run: .providersSet, "\(provider.rawValue) …")")
            } else if aud.contains(where: accepted.contains) {
                ok("aud", "aud \(aud.joined(separator: ", ")) is accepted (Better Auth accepts \(accepted.joined(separator: ", ")))")
            } else {
                fail("aud", "aud is \(aud.map { "\"\($0.prefix(80))\"" }.joined(separator: ", ")); Better Auth accepts only \(accepted.joined(separator: ", "))",
                     #"JWTClaimValidationFailed: unexpected "aud" claim value"#, fix: Self.audienceFix(provider, aud: aud, report: report))
            }
        }
        // 5. Times, in the order and with the types of jose's validateClaimsSet (no clock tolerance): iat must be
        //    a number, then nbf (a number, not in the future), exp (a number, in the future), then maxTokenAge.
        //    Claims are compared as JavaScript numbers (Doubles): ±1e16 or 1e308 is a verdict, never an overflow.
        let nowSeconds = Double(now.seconds)
        let iat = payload["iat"]?.doubleValue
        if let claim = payload["iat"], iat == nil {
            fail("iat_type", "iat is \(Self.describeType(claim)), not a number", #"JWTClaimValidationFailed: "iat" claim must be a number"#,
                 fix: "this token was not issued by \(provider.rawValue.capitalized)'s sign-in")
        }
        if let claim = payload["nbf"] {
            if let nbf = claim.doubleValue {
                if nbf > nowSeconds {
                    fail("nbf", "nbf is \(Self.describe(seconds: nbf - nowSeconds)) in the future", #"JWTClaimValidationFailed: "nbf" claim timestamp check failed"#, fix: "check the server's clock")
                }
            } else {
                fail("nbf_type", "nbf is \(Self.describeType(claim)), not a number", #"JWTClaimValidationFailed: "nbf" claim must be a number"#)
            }
        }
        let exp = payload["exp"]?.doubleValue
        if let claim = payload["exp"] {
            if let exp {
                if exp <= nowSeconds {
                    fail("expired", "the token expired \(Self.describe(time: exp)), \(Self.describe(seconds: nowSeconds - exp)) ago",
                         #"JWTExpired: "exp" claim timestamp check failed"#, fix: "the client must sign in again to get a fresh token (they last a few minutes to an hour); check the device's and server's clocks")
                } else {
                    ok("exp", "the token expires \(Self.describe(time: exp)), in \(Self.describe(seconds: exp - nowSeconds))")
                }
            } else {
                fail("exp_type", "exp is \(Self.describeType(claim)), not a number", #"JWTClaimValidationFailed: "exp" claim must be a number"#,
                     fix: "this token was not issued by \(provider.rawValue.capitalized)'s sign-in")
            }
        } else {
            findings.append(AppleFinding(.note, "no_exp", "the token has no exp; Better Auth relies on the 1 h maximum age instead"))
        }
        if let iat {
            let age = nowSeconds - iat
            if age > Double(Self.maxTokenAge) {
                fail("too_old", "the token was issued \(Self.describe(seconds: age)) ago; Better Auth refuses ID tokens older than 1 h (maxTokenAge)",
                     #"JWTExpired: "iat" claim timestamp check failed (too far in the past)"#, fix: "send the token to Better Auth right after sign-in; do not cache ID tokens")
            } else if age < 0 {
                fail("iat_future", "the token's iat is \(Self.describe(seconds: -age)) in the future", #"JWTClaimValidationFailed: "iat" claim timestamp check failed (it should be in the past)"#,
                     fix: "the server's clock is behind: fix NTP on the server")
            } else {
                ok("iat", "issued \(Self.describe(seconds: age)) ago (Better Auth accepts up to 1 h)")
            }
        }
        // 6. Nonce: checked only when the client sends idToken.nonce.
        let claimNonce = payload["nonce"]
        if let nonce {
            let hashed = SHA256.hex(nonce)
            let reported = "nonce mismatch (the verifier returns false)"
            switch claimNonce?.stringValue {
            case nil:
                fail("nonce_missing", "the client sent a nonce but the token has no string nonce claim", reported,
                     fix: provider == .apple ? "set ASAuthorizationAppleIDRequest.nonce to the SHA-256 hex of the raw nonce" : "pass the nonce to the Google Sign-In SDK")
            case nonce?:
                ok("nonce", "the nonce claim is the raw nonce" + (provider == .apple ? " (the desktop/web form)" : ""))
            case hashed? where provider == .apple:
                ok("nonce", "the nonce claim is the lowercase hex SHA-256 of the raw nonce (the native iOS form, which Better Auth accepts for Apple)")
            case hashed?:
                fail("nonce_hashed", "the nonce claim is the SHA-256 of the nonce sent; Better Auth compares Google nonces exactly", reported,
                     fix: "pass the same value to the Google Sign-In SDK and as idToken.nonce (hash only for Apple)")
            case let value? where value == hashed.uppercased() && provider == .apple:
                fail("nonce_uppercase", "the nonce claim is the SHA-256 of the nonce in upper-case hex; Better Auth compares lowercase hex", reported,
                     fix: "hash to lowercase hex in the app before setting ASAuthorizationAppleIDRequest.nonce")
            case let value?:
                fail("nonce", "the nonce claim matches neither the nonce sent\(provider == .apple ? " nor its SHA-256" : "") (claim \(value.prefix(12))…)", reported,
                     fix: "send as idToken.nonce the raw nonce whose \(provider == .apple ? "SHA-256 was given to ASAuthorizationAppleIDRequest.nonce" : "value was given to the Google Sign-In SDK")")
            }
        } else if claimNonce != nil {
            findings.append(AppleFinding(.note, "nonce_not_sent", "the token has a nonce claim but no \(field: .nonce) was given: Better Auth checks the nonce only when idToken.nonce is sent (the sign-in plan requires sending it)"))
        }
        // 7. After verification: the profile (getUserInfo).
        let email = payload["email"]?.stringValue
        let verifiedClaim = payload["email_verified"]
        let verifiedAsSent: String? = verifiedClaim.map { value in
            if let bool = value.boolValue { return String(bool) }
            if let text = value.stringValue { return "\"\(text.prefix(20))\"" }
            return "(\(value))"
        }
        let emailVerified: Bool
        switch (provider, verifiedClaim) {
        case (_, .bool(let value)?): emailVerified = value
        case (.apple, .string(let value)?): emailVerified = value == "true"
        default: emailVerified = false
        }
        if let email {
            ok("email", "email is \(email)")
            if case .string? = verifiedClaim, provider == .apple {
                findings.append(AppleFinding(.note, "email_verified_string", "email_verified is the string \(verifiedAsSent!), which Better Auth reads as \(emailVerified) (Apple sends a string or a boolean)"))
            } else if case .string? = verifiedClaim {
                findings.append(AppleFinding(.warning, "email_verified_string", "email_verified is the string \(verifiedAsSent!); Google sends a boolean, and Better Auth does not convert strings for Google"))
            }
            if !emailVerified {
                findings.append(AppleFinding(.warning, "email_unverified", "the email is not verified (email_verified \(verifiedAsSent ?? "absent")): Better Auth records emailVerified false, and linking by email to an existing user may be refused"))
            }
        } else {
            fail("no_email", "the token has no email claim", #"USER_EMAIL_NOT_FOUND ("User email not found")"#,
                 fix: provider == .apple ? "Apple includes email only when the email scope was requested: request .email in ASAuthorizationAppleIDRequest.requestedScopes" : "request the email scope")
        }
        let domain = email.flatMap { $0.split(separator: "@").last.map { $0.lowercased() } }
        let privateFlag = payload["is_private_email"].map { $0.boolValue == true || $0.stringValue == "true" } ?? false
        let relay = (domain.map { Self.relayDomains.contains($0) } ?? false) || privateFlag
        if relay {
            findings.append(AppleFinding(.note, "private_relay", "the email is a private relay address (Hide My Email): valid and verified, but it will never equal the user's Google email, so auto-linking does not fire",
                                         fix: "the user links Google with Connect account (linkSocial); see \(command: .policy) for linkSocial.allowDifferentEmails"))
        }

        if let transferSub = payload["transfer_sub"]?.stringValue {
            findings.append(AppleFinding(.note, "transfer_sub",
                "transfer_sub is \(transferSub.prefix(80)): the app was transferred to another Apple team, and this person's sub is the new team's; for 60 days after the transfer Apple sends the transfer identifier that bridges it to the sending team's sub. Better Auth ignores the claim, so without the migration it makes a new user for this sub",
                fix: "migrate the Apple users before the 60 days end: `gatehouse apple transfer status` (ops/runbooks/apple-transfer.md)"))
        }
        let claims = IDTokenReport.Claims(algorithm: compact.algorithm, keyID: compact.keyID, issuer: iss, audience: aud, subject: payload["sub"]?.stringValue,
                                          email: email, emailVerifiedAsSent: verifiedAsSent, emailVerified: emailVerified, privateRelay: relay,
                                          hasNonce: claimNonce != nil, issuedAt: iat.flatMap(Self.wholeSeconds), expiresAt: exp.flatMap(Self.wholeSeconds))
        let decisive = findings.first { $0.severity == .error }
        var verdict = decisive.map(Self.verdict) ?? "Better Auth 1.7 would accept this \(provider.rawValue.capitalized) ID token"
        if decisive == nil && !signatureChecked { verdict += " (if its signature is good: pass \(field: .jwks) to check it)" }
        return IDTokenReport(provider: provider, claims: claims, acceptedAudiences: accepted, signatureChecked: signatureChecked,
                             findings: findings, decisive: decisive, verdict: verdict)
    }

    /// A claim's JSON type, in the words of a finding: `the string "never"`, `an object`.
    static func describeType(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return "the boolean \(flag)"
        case .number(let number): return "the number \(number)"
        case .string(let text): return "the string \"\(text.prefix(40))\""
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// A NumericDate as a time (`at 2026-12-01T10:00:00.000Z`), or as the bare number when no date has it.
    static func describe(time seconds: Double) -> String {
        Timestamp(epochSeconds: seconds).map { "at \($0.iso8601)" } ?? "at NumericDate \(seconds) (beyond year 9999)"
    }

    /// A span of seconds as a duration (`1h30m`), or as a number of years when it is beyond any duration.
    static func describe(seconds: Double) -> String {
        if let whole = wholeSeconds(seconds.rounded(.down)), whole <= Seconds.maximum.value { return Seconds(whole).description }
        return "\((seconds / 31_557_600).rounded()) years"
    }

    /// A claim as whole seconds, when it is a finite number Int64 holds.
    static func wholeSeconds(_ value: Double) -> Int64? {
        guard value.isFinite, abs(value) < 9.2e18 else { return nil }
        return Int64(value.rounded(.down))
    }

    static func verdict(_ finding: AppleFinding) -> String {
        "Better Auth 1.7 would reject it with \(clientError): \(finding.reported ?? finding.code) — \(finding.message)"
    }

    static func audiences(_ provider: IDTokenProvider, _ report: ProviderReport) -> [String] {
        provider == .apple ? report.apple.acceptedAudiences : report.google.acceptedAudiences
    }

    /// The configuration change that makes Better Auth accept `aud`.
    static func audienceFix(_ provider: IDTokenProvider, aud: [String], report: ProviderReport) -> String {
        let value = aud.first ?? ""
        if provider == .google {
            return "add it as that platform's client id: \(run: .providersSet, "google", .option(.clientID, "<ios|desktop|web>=\(value)"))"
        }
        let settings = report.apple.settings
        if let services = settings.servicesID, let bundle = settings.bundleID, value == services || value == bundle {
            let kind = value == bundle ? "a native iOS token (aud = the bundle id)" : "a desktop/web token (aud = the Services ID)"
            return "this is \(kind), and \(report.apple.audienceSource.rawValue) replaces the other ids rather than adding to them; accept both: \(ProviderReport.bothCommand(servicesID: services, bundleID: bundle))"
        }
        if settings.bundleID == nil, value != settings.servicesID {
            let audience: [CommandArgument] = settings.servicesID.map { [.option(.audience, $0), .option(.audience, value)] } ?? []
            return "if \(value) is the app's bundle id, this is a native iOS token: \(run: .providersSet, arguments: ["apple", .option(.bundleID, value)] + audience)"
        }
        let audience = ([settings.servicesID, settings.bundleID].compactMap { $0 } + [value]).map { CommandArgument.option(.audience, $0) }
        return "if \(value) is yours, add it: \(run: .providersSet, arguments: ["apple"] + audience)"
    }
}
