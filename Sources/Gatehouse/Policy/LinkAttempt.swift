import Foundation

/// How the client reaches Better Auth: it posts a provider's id token (`signIn.social` / `linkSocial` with `idToken`,
/// the native apps), or it is redirected to the provider and back to `/callback/:providerId` (the web).
public enum AuthFlow: String, Sendable, Codable, CaseIterable {
    case idToken = "id-token"
    case redirect
}

/// The app's options for the provider the attempt uses: what Better Auth reads from the provider object or its options,
/// none of which the store or the policy holds.
public struct ProviderSettings: Sendable, Codable, Equatable {
    /// Whether the provider is a generic OAuth (plugin) provider (one may shadow a built-in id); nil or false: generic
    /// only when Better Auth has no built-in provider of that id.
    public var generic: Bool?
    /// `disableSignUp`. Id-token sign-in reads it from the provider object, where only the generic OAuth plugin puts it.
    public var disableSignUp = false
    /// `disableImplicitSignUp`: a new user only with `requestSignUp`.
    public var disableImplicitSignUp = false
    /// `requireEmailVerification`: no session while the user's email is unverified.
    public var requireEmailVerification = false
    /// `disableIdTokenSignIn` (built-in providers only: the generic plugin's options object has no such key).
    public var disableIdTokenSignIn = false
    /// The app passes its own `verifyIdToken` (built-in providers only): ids tokens are accepted as it decides.
    public var customVerifyIdToken = false
    /// Generic providers only: whether discovery gave an issuer and a `jwks_uri` (an id-token config); nil when unknown.
    public var genericIDTokens: Bool?
    /// `overrideUserInfoOnSignIn` (read by the redirect callback only).
    public var overrideUserInfoOnSignIn = false

    /// No option set: a built-in provider as Better Auth's defaults configure it.
    public init() {}

    /// An option the app can set on the provider, by Better Auth's own (case-sensitive) name.
    public enum Option: String, Sendable, CaseIterable {
        case disableSignUp, disableImplicitSignUp, requireEmailVerification, disableIdTokenSignIn, verifyIdToken, overrideUserInfoOnSignIn
    }

    /// Sets `option`.
    public mutating func set(_ option: Option) {
        switch option {
        case .disableSignUp: disableSignUp = true
        case .disableImplicitSignUp: disableImplicitSignUp = true
        case .requireEmailVerification: requireEmailVerification = true
        case .disableIdTokenSignIn: disableIdTokenSignIn = true
        case .verifyIdToken: customVerifyIdToken = true
        case .overrideUserInfoOnSignIn: overrideUserInfoOnSignIn = true
        }
    }
}

/// What a provider hands Better Auth in a sign-in or link: the provider, the email it reports (none at all, as Apple for
/// a returning user whose token carries no email), whether it says the email is verified, the provider's account id
/// (`sub`), and the issuer when it cannot be derived from the provider (Microsoft's per tenant, a generic provider's).
public struct LinkAttempt: Sendable, Codable {
    /// The provider id (`google`, `apple`, a generic OAuth provider's id).
    public var provider: String
    /// nil: the provider reports no email.
    public var email: String?
    /// Whether the provider says the email is verified (`email_verified`).
    public var emailVerified: Bool
    /// The provider's subject. Without it the account is taken to be one the store has never seen.
    public var accountID: String?
    /// The issuer Better Auth would write, for providers whose issuer depends on configuration or on the token.
    public var issuer: String?
    /// By id token (the default) or by redirect.
    public var flow: AuthFlow
    /// `requestSignUp` in the `signIn.social` body (kept in the OAuth state for the redirect flow).
    public var requestSignUp: Bool
    /// The app's options for the provider.
    public var settings: ProviderSettings
    /// The app's `account.accountLinking.updateUserInfoOnLink` (not a key of Gatehouse's policy: the runtime sets it in
    /// code). On an implicit link it makes Better Auth re-read the user row (applyUpdateUserInfoOnLink,
    /// oauth2/link-account.ts:250), so an email the provider has just verified passes `requireEmailVerification`.
    public var updateUserInfoOnLink: Bool

    /// An attempt; by default by id token, with no issuer given and the provider's default options.
    public init(provider: String, email: String?, emailVerified: Bool, accountID: String? = nil, issuer: String? = nil,
                flow: AuthFlow = .idToken, requestSignUp: Bool = false, settings: ProviderSettings = ProviderSettings(),
                updateUserInfoOnLink: Bool = false) {
        self.provider = provider
        self.email = email
        self.emailVerified = emailVerified
        self.accountID = accountID
        self.issuer = issuer
        self.flow = flow
        self.requestSignUp = requestSignUp
        self.settings = settings
        self.updateUserInfoOnLink = updateUserInfoOnLink
    }

    /// Whether Better Auth treats the provider as a generic OAuth provider: said so, or no built-in provider has the id.
    var isGeneric: Bool { settings.generic == true || BetterAuthProviders.provider(provider) == nil }
}
