import Gatehouse
import WebAuthn

/// The console's authentication settings: token lifetimes, the login throttle and the clock.
public struct AuthSettings: Sendable {
    public var lifetimes: TokenLifetimes
    public var throttle: LoginThrottle.Rules
    /// The current time; tests replace it to expire tokens and locks without waiting.
    public var clock: @Sendable () -> Timestamp
    /// How old a login's last second-factor check may be for a step-up route (`serve --step-up-window`).
    public var stepUpWindow: Seconds
    /// Checks WebAuthn assertions; nil: the relying party's own (`PasskeyVerifier`), or no passkeys without one.
    public var webauthn: (any WebAuthnAssertionVerifier)?
    /// The console as a WebAuthn relying party (`serve --origin`, or `http://localhost:PORT` on loopback): its RP id
    /// in every options JSON, passkeys registered and checked with it. Nil: passkeys are not offered.
    public var relyingParty: RelyingParty?

    /// What checks passkey assertions: `webauthn` when given, else the relying party's verifier.
    public var assertionVerifier: (any WebAuthnAssertionVerifier)? {
        webauthn ?? relyingParty.map { PasskeyVerifier(relyingParty: $0) }
    }

    /// 5 minutes.
    public static let standardStepUpWindow = Seconds(300)

    public init(lifetimes: TokenLifetimes = .configured(), throttle: LoginThrottle.Rules = .standard,
                clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() }, stepUpWindow: Seconds = standardStepUpWindow,
                webauthn: (any WebAuthnAssertionVerifier)? = nil, relyingParty: RelyingParty? = nil) {
        self.lifetimes = lifetimes
        self.throttle = throttle
        self.clock = clock
        self.stepUpWindow = stepUpWindow
        self.webauthn = webauthn
        self.relyingParty = relyingParty
    }
}
