import Foundation

/// One of Better Auth 1.7.1's built-in social providers, as its source declares it: whether it can verify an id token
/// a client sends (`signIn.social` / `linkSocial` with `idToken`), and the issuer it writes into `account.issuer`.
public struct BetterAuthProvider: Sendable, Equatable {
    /// How the provider's `accountIssuer` is set (packages/core/src/oauth2/oauth-provider.ts `OAuthProvider.accountIssuer`).
    public enum IssuerRule: Sendable, Equatable {
        /// A constant URL (`accountIssuer: "https://appleid.apple.com"`).
        case fixed(String)
        /// Built from the app's provider options (Cognito's region and user pool, Paybin's `issuer`); `fallback` is the
        /// value without the option, nil when there is none.
        case configured(option: String, fallback: String?)
        /// Read from each token (Microsoft: `accountIssuer: ({ profile }) => profile.iss`, one issuer per tenant).
        case perToken(claim: String)
        /// No `accountIssuer`: `resolveOAuthAccountKey` writes `local:oauth:<encodeURIComponent(providerId)>`.
        case synthetic
    }

    /// The provider id (`socialProviders` key and `account.providerId`).
    public let id: String
    /// Whether the provider declares an `idToken` verification config (`supportsIdTokenSignIn`). Without one, an id-token
    /// request answers 404 `ID_TOKEN_NOT_SUPPORTED` unless the app passes its own `verifyIdToken` option.
    public let verifiesIDTokens: Bool
    public let issuer: IssuerRule
    /// The file in Better Auth's repository that declares it.
    public var source: String { "packages/core/src/social-providers/\(id == "microsoft" ? "microsoft-entra-id" : id).ts" }
}

/// The one table of Better Auth 1.7.1's providers (packages/core/src/social-providers/index.ts `socialProviders`), read
/// from each provider's source: the simulator, `users show` and the demo seeder take issuers from here.
///
///     BetterAuthProviders.issuer(for: "apple")      // .known("https://appleid.apple.com")
///     BetterAuthProviders.issuer(for: "github")     // .known("local:oauth:github")
///     BetterAuthProviders.issuer(for: "microsoft")  // .dependsOn("the token's iss claim (one issuer per Entra ID tenant)")
public enum BetterAuthProviders {
    /// Every built-in provider, in the order of `socialProviders`.
    public static let builtIn: [BetterAuthProvider] = {
        let oauthOnly = ["atlassian", "discord", "figma", "github", "huggingface", "slack", "spotify", "twitch", "twitter", "dropbox", "kick",
                         "linear", "linkedin", "gitlab", "tiktok", "reddit", "roblox", "salesforce", "vk", "zoom", "notion", "kakao", "naver",
                         "paypal", "polar", "railway", "vercel", "wechat"]
        var table: [BetterAuthProvider] = [
            BetterAuthProvider(id: "apple", verifiesIDTokens: true, issuer: .fixed("https://appleid.apple.com")),
            BetterAuthProvider(id: "google", verifiesIDTokens: true, issuer: .fixed("https://accounts.google.com")),
            BetterAuthProvider(id: "facebook", verifiesIDTokens: true, issuer: .fixed("https://www.facebook.com")),
            BetterAuthProvider(id: "line", verifiesIDTokens: true, issuer: .fixed("https://access.line.me")),
            BetterAuthProvider(id: "cognito", verifiesIDTokens: true,
                               issuer: .configured(option: "https://cognito-idp.<region>.amazonaws.com/<userPoolId> from the provider's region and userPoolId", fallback: nil)),
            BetterAuthProvider(id: "microsoft", verifiesIDTokens: true, issuer: .perToken(claim: "iss")),
            BetterAuthProvider(id: "paybin", verifiesIDTokens: false, issuer: .configured(option: "the provider's issuer option", fallback: "https://idp.paybin.io")),
        ]
        table += oauthOnly.map { BetterAuthProvider(id: $0, verifiesIDTokens: false, issuer: .synthetic) }
        return table
    }()

    /// The issuer of email-and-password accounts: `createLocalAccountIssuer("credential")` (api/routes/sign-up.ts).
    public static let credentialIssuer = "local:credential"
    /// The provider id of email-and-password accounts.
    public static let credentialProviderID = "credential"

    /// The built-in provider with this id; nil for a generic OAuth (plugin) provider or an unknown id.
    public static func provider(_ id: String) -> BetterAuthProvider? { builtIn.first { $0.id == id } }

    /// `createOAuthAccountIssuer(providerId)` (packages/core/src/db/schema/account.ts): `local:oauth:` and the
    /// provider id as `encodeURIComponent` writes it.
    public static func oauthIssuer(_ providerID: String) -> String {
        "local:oauth:" + encodeURIComponent(providerID)
    }

    /// What Gatehouse can say about the issuer Better Auth writes for a provider.
    public enum IssuerAnswer: Sendable, Equatable {
        /// Better Auth writes this issuer for every account of the provider.
        case known(String)
        /// It depends on something outside the store; the text names it.
        case dependsOn(String)

        /// The issuer when it is known.
        public var value: String? { if case .known(let value) = self { return value } else { return nil } }
    }

    /// The issuer Better Auth 1.7.1 writes into `account.issuer` for an account of `providerID`. A provider id that is not
    /// built in is a generic OAuth provider: its `accountIssuer` option, else its discovery document's issuer, else
    /// `local:oauth:<id>` (plugins/generic-oauth/index.ts).
    public static func issuer(for providerID: String) -> IssuerAnswer {
        if providerID == credentialProviderID { return .known(credentialIssuer) }
        guard let provider = provider(providerID) else {
            return .dependsOn("the generic OAuth provider's accountIssuer option, else its discovery document's issuer, else \(oauthIssuer(providerID))")
        }
        switch provider.issuer {
        case .fixed(let url): return .known(url)
        case .synthetic: return .known(oauthIssuer(providerID))
        case .configured(let option, _): return .dependsOn(option)
        case .perToken(let claim): return .dependsOn("the token's \(claim) claim (one issuer per Entra ID tenant)")
        }
    }

    /// A remark on a stored account's issuer when it is not what Better Auth 1.7.1 writes for its provider; nil when it is
    /// (or when the provider's issuer depends on configuration that accepts it).
    public static func issuerRemark(providerID: String, recorded: String?) -> String? {
        let answer = issuer(for: providerID)
        guard let recorded else {
            return answer.value.map { "Better Auth 1.7.1 would write \($0)" }
        }
        if let expected = answer.value, !JavaScriptString.strictEquals(expected, recorded) {
            return "Better Auth 1.7.1 writes \(expected) for \(providerID): it will not find this account by (issuer, accountId)"
        }
        return nil
    }

    /// JavaScript's `encodeURIComponent`: every UTF-8 byte percent-encoded except A–Z a–z 0–9 - _ . ! ~ * ' ( ).
    static func encodeURIComponent(_ text: String) -> String {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()".utf8)
        var out = ""
        for byte in text.utf8 {
            if unreserved.contains(byte) { out.append(Character(Unicode.Scalar(byte))) } else { out += String(format: "%%%02X", byte) }
        }
        return out
    }
}
