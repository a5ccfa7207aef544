import Gatehouse

/// The console's authentication settings: token lifetimes, the login throttle and the clock.
public struct AuthSettings: Sendable {
    public var lifetimes: TokenLifetimes
    public var throttle: LoginThrottle.Rules
    /// The current time; tests replace it to expire tokens and locks without waiting.
    public var clock: @Sendable () -> Timestamp
    /// How old a login's last second-factor check may be for a step-up route (`serve --step-up-window`).
    public var stepUpWindow: Seconds
    /// Checks WebAuthn assertions; nil: passkeys are not offered at login or step-up.
    public var webauthn: (any WebAuthnAssertionVerifier)?

    /// 5 minutes.
    public static let standardStepUpWindow = Seconds(300)

    public init(lifetimes: TokenLifetimes = .configured(), throttle: LoginThrottle.Rules = .standard,
                clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() }, stepUpWindow: Seconds = standardStepUpWindow,
                webauthn: (any WebAuthnAssertionVerifier)? = nil) {
        self.lifetimes = lifetimes
        self.throttle = throttle
        self.clock = clock
        self.stepUpWindow = stepUpWindow
        self.webauthn = webauthn
    }
}
