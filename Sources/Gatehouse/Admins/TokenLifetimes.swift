import Foundation

/// How long the console's tokens live: a short-lived access token and a longer-lived, single-use
/// refresh token (each refresh issues a new one with a fresh lifetime).
public struct TokenLifetimes: Sendable, Equatable {
    /// The longest access-token lifetime accepted.
    public static let maxAccess = Seconds(900)

    public var access: Seconds
    public var refresh: Seconds

    public init(access: Seconds = Seconds(900), refresh: Seconds = Seconds(12 * 3600)) {
        self.access = access
        self.refresh = refresh
    }

    /// 15 minutes and 12 hours.
    public static let standard = TokenLifetimes()

    /// The standard lifetimes, with the access token's shortened by `GATEHOUSE_ACCESS_TOKEN_TTL`
    /// (whole seconds, 1–900) when it is set: tests use it to watch a token expire. It can only
    /// shorten the lifetime, never lengthen it.
    public static func configured(environment: [String: String] = ProcessInfo.processInfo.environment) -> TokenLifetimes {
        var lifetimes = TokenLifetimes.standard
        if let text = environment["GATEHOUSE_ACCESS_TOKEN_TTL"], let seconds = Int64(text), seconds >= 1 {
            lifetimes.access = Seconds(min(seconds, maxAccess.value))
        }
        return lifetimes
    }
}
