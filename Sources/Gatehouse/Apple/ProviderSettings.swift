/// What the runtime passes to Better Auth 1.7's `apple()` provider: `clientId` (the Services ID),
/// `appBundleIdentifier` (the iOS bundle id) and `audience`, plus the Team ID the client secret is issued by.
public struct AppleProviderSettings: Sendable, Codable, Equatable {
    public var teamID: TeamID?
    /// The Services ID: `clientId`, the `aud` of desktop/web ID tokens and the `sub` of the client secret.
    public var servicesID: String?
    /// The app's bundle id: `appBundleIdentifier`, the `aud` of native iOS ID tokens.
    public var bundleID: String?
    /// Better Auth's `audience` option; when non-empty it replaces every other source of accepted audiences.
    public var audience: [String]

    public init(teamID: TeamID? = nil, servicesID: String? = nil, bundleID: String? = nil, audience: [String] = []) {
        self.teamID = teamID
        self.servicesID = servicesID
        self.bundleID = bundleID
        self.audience = audience
    }

    /// Which option Better Auth takes the accepted `aud` values from.
    public enum AudienceSource: String, Sendable, Codable {
        case audience
        case appBundleIdentifier
        case clientId
        case none
    }

    /// Better Auth 1.7's rule, either/or: `audience` if non-empty, else `appBundleIdentifier` if set, else
    /// `clientId`. Setting the bundle id alone therefore stops desktop tokens (aud = Services ID) being accepted.
    public var acceptedAudiences: (source: AudienceSource, values: [String]) {
        if !audience.isEmpty { return (.audience, audience) }
        if let bundleID { return (.appBundleIdentifier, [bundleID]) }
        if let servicesID { return (.clientId, [servicesID]) }
        return (.none, [])
    }
}

/// What the runtime passes to Better Auth 1.7's `google()` provider: one OAuth client id per platform, given
/// together as `clientId: string[]` (every one is an accepted `aud`).
public struct GoogleProviderSettings: Sendable, Codable, Equatable {
    /// The platforms Google issues client ids for.
    public enum Platform: String, Sendable, Codable, CaseIterable {
        case ios, desktop, web
    }

    /// Client id by platform.
    public var clientIDs: [Platform: String]

    public init(clientIDs: [Platform: String] = [:]) { self.clientIDs = clientIDs }

    /// Every configured client id, in platform order: Better Auth accepts a token audienced to any of them.
    public var acceptedAudiences: [String] {
        var seen = Set<String>()
        return Platform.allCases.compactMap { clientIDs[$0] }.filter { seen.insert($0).inserted }
    }

    enum CodingKeys: String, CodingKey { case clientIDs }
    public init(from decoder: Decoder) throws {
        let raw = try decoder.container(keyedBy: CodingKeys.self).decode([String: String].self, forKey: .clientIDs)
        clientIDs = raw.reduce(into: [:]) { result, pair in
            if let platform = Platform(rawValue: pair.key) { result[platform] = pair.value }
        }
    }
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Dictionary(uniqueKeysWithValues: clientIDs.map { ($0.key.rawValue, $0.value) }), forKey: .clientIDs)
    }
}
