import Gatehouse

/// The console's authentication settings: token lifetimes, the login throttle and the clock.
public struct AuthSettings: Sendable {
    public var lifetimes: TokenLifetimes
    public var throttle: LoginThrottle.Rules
    /// The current time; tests replace it to expire tokens and locks without waiting.
    public var clock: @Sendable () -> Timestamp

    public init(lifetimes: TokenLifetimes = .configured(), throttle: LoginThrottle.Rules = .standard,
                clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() }) {
        self.lifetimes = lifetimes
        self.throttle = throttle
        self.clock = clock
    }
}
