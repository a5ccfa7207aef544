/// The provider configuration as `providers show` reports it: the settings, the ID-token audiences Better
/// Auth 1.7 will accept under them, and every finding, each with the configuration that fixes it.
public struct ProviderReport: Sendable, Codable {
    /// The Apple half.
    public struct Apple: Sendable, Codable {
        public let settings: AppleProviderSettings
        /// Which option Better Auth takes the accepted audiences from (`audience`, `appBundleIdentifier`,
        /// `clientId`, or `none`).
        public let audienceSource: AppleProviderSettings.AudienceSource
        /// The `aud` values Better Auth accepts for Apple ID tokens.
        public let acceptedAudiences: [String]
        /// Whether a native iOS token (aud = bundle id) is accepted; nil when no bundle id is configured.
        public let nativeTokensAccepted: Bool?
        /// Whether a desktop/web token (aud = Services ID) is accepted; nil when no Services ID is configured.
        public let desktopTokensAccepted: Bool?
        public let findings: [AppleFinding]
        /// The `apple({...})` options that accept both kinds of token, when both ids are known.
        public let recommendedConfig: String?
    }

    /// The Google half.
    public struct Google: Sendable, Codable {
        public let settings: GoogleProviderSettings
        /// Every configured client id (Better Auth's `clientId: string[]`).
        public let acceptedAudiences: [String]
        public let findings: [AppleFinding]
    }

    public let apple: Apple
    public let google: Google

    /// Builds the report from the settings.
    public init(apple settings: AppleProviderSettings, google: GoogleProviderSettings) {
        self.apple = Self.appleHalf(settings)
        self.google = Self.googleHalf(google)
    }

    static let audRejected = #"JWTClaimValidationFailed: unexpected "aud" claim value"#

    /// The `apple({...})` options that accept native and desktop tokens alike.
    static func bothConfig(servicesID: String, bundleID: String) -> String {
        #"apple({ clientId: "\#(servicesID)", appBundleIdentifier: "\#(bundleID)", audience: ["\#(servicesID)", "\#(bundleID)"], clientSecret })"#
    }

    /// The command that stores that configuration.
    static func bothCommand(servicesID: String, bundleID: String) -> String {
        "\(run: .providersSet, "apple", .option(.audience, servicesID), .option(.audience, bundleID))"
    }

    static func appleHalf(_ settings: AppleProviderSettings) -> Apple {
        let (source, accepted) = settings.acceptedAudiences
        var findings: [AppleFinding] = []
        let native = settings.bundleID.map { accepted.contains($0) }
        let desktop = settings.servicesID.map { accepted.contains($0) }
        var recommended: String?
        if let services = settings.servicesID, let bundle = settings.bundleID {
            recommended = bothConfig(servicesID: services, bundleID: bundle)
            let fix = "accept both: \(bothCommand(servicesID: services, bundleID: bundle)) — the runtime then passes \(recommended!)"
            if native == false {
                findings.append(AppleFinding(.error, "native_tokens_rejected",
                    "native iOS ID tokens (aud = the bundle id \(bundle)) would be rejected: Better Auth accepts only \(accepted.joined(separator: ", ")) (from \(source.rawValue))",
                    reported: audRejected, fix: fix))
            }
            if desktop == false {
                findings.append(AppleFinding(.error, "desktop_tokens_rejected",
                    "desktop/web ID tokens (aud = the Services ID \(services)) would be rejected: Better Auth accepts only \(accepted.joined(separator: ", ")) (from \(source.rawValue)\(source == .appBundleIdentifier ? ", which replaces clientId rather than adding to it" : ""))",
                    reported: audRejected, fix: fix))
            }
            if services == bundle {
                findings.append(AppleFinding(.warning, "services_id_equals_bundle_id",
                    "the Services ID and the bundle id are both \(services); Apple requires a Services ID distinct from the App ID",
                    fix: "create a Services ID (e.g. \(services).web) in the Apple Developer portal and set it with \(field: .servicesID)"))
            }
        } else if let services = settings.servicesID {
            findings.append(AppleFinding(.warning, "no_bundle_id",
                "no bundle id: native iOS ID tokens carry aud = the app's bundle id, which Better Auth would reject (it accepts \(accepted.joined(separator: ", ")))",
                reported: audRejected,
                fix: "\(run: .providersSet, "apple", .option(.bundleID, "<bundle id>"), .option(.audience, services), .option(.audience, "<bundle id>"))"))
        } else if let bundle = settings.bundleID {
            findings.append(AppleFinding(.warning, "no_services_id",
                "no Services ID: the desktop/web flow (and the client secret's sub) needs one; desktop ID tokens carry aud = the Services ID, and only \(accepted.joined(separator: ", ")) is accepted",
                fix: "\(run: .providersSet, "apple", .option(.servicesID, "<Services ID>"), .option(.audience, "<Services ID>"), .option(.audience, bundle))"))
        } else if settings.audience.isEmpty {
            findings.append(AppleFinding(.warning, "apple_not_configured", "Apple is not configured: Better Auth would accept no Apple ID token",
                                         fix: "\(run: .providersSet, "apple", .option(.teamID, "<TEAMID>"), .option(.servicesID, "<Services ID>"), .option(.bundleID, "<bundle id>"), .option(.audience, "<Services ID>"), .option(.audience, "<bundle id>"))"))
        }
        for value in settings.audience where value != settings.servicesID && value != settings.bundleID {
            findings.append(AppleFinding(.note, "extra_audience", "the audience list holds \(value), which is neither the Services ID nor the bundle id"))
        }
        if settings.teamID == nil {
            findings.append(AppleFinding(.warning, "no_team_id", "no Team ID: client secrets are issued (iss) by the Team ID",
                                         fix: "\(run: .providersSet, "apple", .option(.teamID, "<TEAMID>"))"))
        }
        if findings.isEmpty || !findings.contains(where: { $0.severity >= .warning }) {
            findings.insert(AppleFinding(.ok, "audiences", "Better Auth accepts Apple ID tokens audienced to \(accepted.joined(separator: ", ")) (from \(source.rawValue))"), at: 0)
        }
        return Apple(settings: settings, audienceSource: source, acceptedAudiences: accepted, nativeTokensAccepted: native,
                     desktopTokensAccepted: desktop, findings: findings, recommendedConfig: recommended)
    }

    static func googleHalf(_ settings: GoogleProviderSettings) -> Google {
        var findings: [AppleFinding] = []
        let accepted = settings.acceptedAudiences
        if accepted.isEmpty {
            findings.append(AppleFinding(.warning, "google_not_configured", "Google is not configured: Better Auth would accept no Google ID token",
                                         fix: "\(run: .providersSet, "google", .option(.clientID, "ios=<id>"), .option(.clientID, "desktop=<id>"))"))
        } else {
            for platform in [GoogleProviderSettings.Platform.ios, .desktop] where settings.clientIDs[platform] == nil {
                findings.append(AppleFinding(.warning, "no_\(platform.rawValue)_client_id",
                    "no \(platform.rawValue) client id: ID tokens from the \(platform.rawValue) app carry that client id as aud and would be rejected",
                    reported: audRejected, fix: "\(run: .providersSet, "google", .option(.clientID, "\(platform.rawValue)=<client id>"))"))
            }
            for (platform, id) in settings.clientIDs.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where !id.hasSuffix(".apps.googleusercontent.com") {
                findings.append(AppleFinding(.note, "unusual_client_id", "the \(platform.rawValue) client id \(id) does not end in .apps.googleusercontent.com"))
            }
            if !findings.contains(where: { $0.severity >= .warning }) {
                findings.insert(AppleFinding(.ok, "audiences", "Better Auth accepts Google ID tokens audienced to \(accepted.joined(separator: ", ")) (clientId: string[])"), at: 0)
            }
        }
        return Google(settings: settings, acceptedAudiences: accepted, findings: findings)
    }
}
