/// A platform the app ships sign-in on.
public enum GatePlatform: String, Sendable, Codable, CaseIterable, Comparable {
    /// The iOS app: native ID tokens (aud = the bundle id for Apple, the iOS client id for Google).
    case ios
    /// The desktop app: the system-browser code-exchange flow.
    case desktop
    /// The web app.
    case web

    public static func < (lhs: Self, rhs: Self) -> Bool { allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)! }

    /// The platform an operator named (case-insensitive), or `invalid` with a did-you-mean.
    ///
    ///     try GatePlatform.named("iOS") == .ios
    public static func named(_ text: String) throws -> GatePlatform {
        try GateNames.resolve(text, kind: "platform", among: allCases, name: \.rawValue)
    }
}

/// A sign-in provider the gate governs.
public enum GateProvider: String, Sendable, Codable, CaseIterable, Comparable {
    case apple, google

    public static func < (lhs: Self, rhs: Self) -> Bool { allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)! }

    /// The provider an operator named (case-insensitive), or `invalid` with a did-you-mean.
    public static func named(_ text: String) throws -> GateProvider {
        try GateNames.resolve(text, kind: "provider", among: allCases, name: \.rawValue)
    }

    /// The provider's requirements, in the order the board lists them.
    public var requirements: [GateRequirement] { GateRequirement.allCases.filter { $0.provider == self } }

    /// The requirements that apply on `platform`.
    public func requirements(on platform: GatePlatform) -> [GateRequirement] {
        requirements.filter { $0.platforms.contains(platform) }
    }

    /// How the provider is written in prose.
    public var displayName: String { self == .apple ? "Apple" : "Google" }
}

/// A prerequisite for offering a provider on a platform.
///
/// Operator-declared requirements are facts only a person can check (the membership is paid, the App ID has
/// the capability); they carry evidence and an optional expiry. Derived requirements are computed from the store
/// (the key ring, the provider configuration) and cannot be set by hand.
public enum GateRequirement: String, Sendable, Codable, CaseIterable {
    /// A paid Apple Developer Program membership, with its renewal date. One for the whole team.
    case membership
    /// An App ID with the Sign in with Apple capability (ios).
    case appID = "app_id"
    /// A Services ID for the code exchange (desktop, web).
    case servicesID = "services_id"
    /// Derived: an active, non-revoked key in the key ring.
    case p8Key = "p8_key"
    /// Derived: the provider configuration makes Better Auth accept the bundle id as `aud` (ios).
    case bundleAudience = "bundle_audience"
    /// The return URLs registered on the Services ID (desktop, web).
    case returnURLs = "return_urls"
    /// Derived: a Google OAuth client id configured for the platform.
    case oauthClient = "oauth_client"

    /// Who establishes a requirement.
    public enum Source: String, Sendable, Codable {
        /// Declared by an operator with `gates set`, with evidence.
        case `operator`
        /// Computed from the store.
        case derived
    }

    /// The provider it belongs to.
    public var provider: GateProvider { self == .oauthClient ? .google : .apple }

    /// The platforms it applies to.
    public var platforms: [GatePlatform] {
        switch self {
        case .membership, .p8Key, .oauthClient: return GatePlatform.allCases
        case .appID, .bundleAudience: return [.ios]
        case .servicesID, .returnURLs: return [.desktop, .web]
        }
    }

    /// Operator-declared or derived.
    public var source: Source {
        switch self {
        case .p8Key, .bundleAudience, .oauthClient: return .derived
        case .membership, .appID, .servicesID, .returnURLs: return .operator
        }
    }

    /// One declaration for every platform (the membership belongs to the team, not to a platform).
    public var isAccountWide: Bool { self == .membership }

    /// A `met` declaration must say when it stops being met.
    public var needsExpiry: Bool { self == .membership }

    /// What it is, in a few words.
    public var summary: String {
        switch self {
        case .membership: return "a paid Apple Developer Program membership, with its renewal date"
        case .appID: return "an App ID with the Sign in with Apple capability"
        case .servicesID: return "a Services ID for the desktop/web code exchange"
        case .p8Key: return "an active, non-revoked Sign in with Apple key in the key ring"
        case .bundleAudience: return "Better Auth accepts the bundle id as aud (native iOS ID tokens)"
        case .returnURLs: return "the return URLs registered on the Services ID"
        case .oauthClient: return "a Google OAuth client id for the platform"
        }
    }

    /// How to meet it, as a command where there is one. `platform` fills in per-platform commands.
    public func howToMeet(platform: GatePlatform? = nil) -> String {
        let on: [CommandArgument] = platform.map { [.option(.platform, $0.rawValue)] } ?? []
        switch self {
        case .membership:
            return "pay for the Apple Developer Program, then: \(run: .gatesSet, "apple membership met", .option(.evidence, "\"...\""), .option(.expires, "<renewal date, YYYY-MM-DD>"))"
        case .appID:
            return "register the App ID with the Sign in with Apple capability, then: \(run: .gatesSet, "apple app_id met", .option(.evidence, "\"...\"")))"
        case .servicesID:
            return "create the Services ID in the Apple Developer portal, then: \(run: .gatesSet, arguments: ["apple services_id met"] + on + [.option(.evidence, "\"...\"")]))"
        case .returnURLs:
            return "register the return URLs on the Services ID, then: \(run: .gatesSet, arguments: ["apple return_urls met"] + on + [.option(.evidence, "\"...\"")]))"
        case .p8Key:
            return "import a key with \(run: .appleKeyImport, "AuthKey_<KEYID>.p8", .option(.teamID, "<TEAMID>")), then activate it with \(run: .appleKeyActivate, "<KEYID>")"
        case .bundleAudience:
            return "accept the bundle id as aud: \(run: .providersSet, "apple", .option(.bundleID, "<bundle id>"), .option(.audience, "<Services ID>"), .option(.audience, "<bundle id>"))"
        case .oauthClient:
            return "configure the client id: \(run: .providersSet, "google", .option(.clientID, "\(platform?.rawValue ?? "<platform>")=<client id>"))"
        }
    }

    /// The requirement an operator named for `provider` (case-insensitive, `-` for `_`), or `invalid` with a
    /// did-you-mean; a requirement of the other provider is named as such.
    public static func named(_ text: String, provider: GateProvider) throws -> GateRequirement {
        let normalized = text.lowercased().replacingOccurrences(of: "-", with: "_")
        if let other = GateRequirement(rawValue: normalized), other.provider != provider {
            throw GatehouseError.invalid("\(other.rawValue) is a requirement of \(other.provider.rawValue), not of \(provider.rawValue)",
                                         fix: "\(provider.rawValue)'s requirements: \(provider.requirements.map(\.rawValue).joined(separator: ", "))")
        }
        return try GateNames.resolve(text, kind: "\(provider.rawValue) requirement", among: provider.requirements, name: \.rawValue)
    }
}

/// Name lookup shared by the gate's enums: `NamedChoice`, worded for a value named in prose.
enum GateNames {
    static func resolve<T>(_ text: String, kind: String, among cases: [T], name: (T) -> String) throws -> T {
        do {
            return try NamedChoice.parse(text, among: cases, name: name)
        } catch {
            let hint = error.suggestion.map { "; did you mean \($0)?" } ?? ""
            throw GatehouseError.invalid("unknown \(kind) \"\(GateInput.shown(text))\"\(hint)", fix: "\(kind)s: \(error.choices.joined(separator: ", "))")
        }
    }
}
