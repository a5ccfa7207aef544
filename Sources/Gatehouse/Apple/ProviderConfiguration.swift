import Foundation
import Storage

/// The provider configuration in the store (`gatehouse_provider_config`): read it, change it (audited), and say
/// which ID-token audiences Better Auth 1.7 will accept under it, with warnings when native iOS tokens
/// (aud = bundle id) or desktop tokens (aud = Services ID) would be rejected.
///
///     let config = ProviderConfiguration(store: store)
///     try config.setApple(AppleProviderChange(servicesID: "com.example.web", bundleID: "com.example.app"), actor: actor, now: .now())
///     let report = try config.report()
public struct ProviderConfiguration {
    /// The store.
    public let store: Store

    public init(store: Store) { self.store = store }

    /// The longest identifier accepted (Apple's and Google's are far shorter).
    public static let maxIdentifierLength = 255

    // MARK: Reading

    /// The Apple settings (all unset on a fresh store).
    public func apple() throws -> AppleProviderSettings {
        let values = try settings(provider: "apple")
        var settings = AppleProviderSettings()
        settings.teamID = try values["team_id"].map(TeamID.init)
        settings.servicesID = values["services_id"]
        settings.bundleID = values["bundle_id"]
        if let text = values["audience"] {
            settings.audience = (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
        }
        return settings
    }

    /// The Google settings.
    public func google() throws -> GoogleProviderSettings {
        let values = try settings(provider: "google")
        var settings = GoogleProviderSettings()
        for platform in GoogleProviderSettings.Platform.allCases {
            settings.clientIDs[platform] = values["client_id.\(platform.rawValue)"]
        }
        return settings
    }

    private func settings(provider: String) throws -> [String: String] {
        try store.db.rows("SELECT name, value FROM gatehouse_provider_config WHERE provider = ?", [provider])
            .reduce(into: [:]) { $0[try $1.string("name")] = try $1.string("value") }
    }

    /// Both providers' settings, what Better Auth accepts under them, and what is wrong.
    public func report() throws -> ProviderReport {
        ProviderReport(apple: try apple(), google: try google())
    }

    // MARK: Writing

    /// Changes the Apple settings named in `change` (the others keep their values). Returns the new report.
    @discardableResult
    public func setApple(_ change: AppleProviderChange, actor: Actor, now: Timestamp) throws -> ProviderReport {
        guard !change.isEmpty else {
            throw GatehouseError.invalid("nothing to set for apple", fix: "pass one or more of \(field: .teamID), \(field: .servicesID), \(field: .bundleID), \(field: .audience)")
        }
        var values: [(String, String?)] = []
        if let team = change.teamID { values.append(("team_id", try TeamID(team).rawValue)) }
        if let id = change.servicesID { values.append(("services_id", try Self.identifier(id, option: "\(field: .servicesID)", kind: "Services ID", empty: true))) }
        if let id = change.bundleID { values.append(("bundle_id", try Self.identifier(id, option: "\(field: .bundleID)", kind: "bundle id", empty: true))) }
        if let audience = change.audience {
            let checked = try audience.map { try Self.identifier($0, option: "\(field: .audience)", kind: "audience", empty: false)! }
            var seen = Set<String>()
            let unique = checked.filter { seen.insert($0).inserted }
            values.append(("audience", unique.isEmpty ? nil : String(decoding: try JSONEncoder().encode(unique), as: UTF8.self)))
        }
        try write(provider: "apple", values, actor: actor, now: now)
        return try report()
    }

    /// Sets Google client ids by platform (an empty id removes that platform's). Returns the new report.
    @discardableResult
    public func setGoogle(_ clientIDs: [GoogleProviderSettings.Platform: String], actor: Actor, now: Timestamp) throws -> ProviderReport {
        guard !clientIDs.isEmpty else {
            throw GatehouseError.invalid("nothing to set for google", fix: "pass \(field: .clientID) PLATFORM=ID (platforms: ios, desktop, web)")
        }
        let values = try GoogleProviderSettings.Platform.allCases.compactMap { platform -> (String, String?)? in
            guard let id = clientIDs[platform] else { return nil }
            return ("client_id.\(platform.rawValue)", try Self.identifier(id, option: "\(field: .clientID) \(platform.rawValue)=", kind: "Google client id", empty: true))
        }
        try write(provider: "google", values, actor: actor, now: now)
        return try report()
    }

    /// Parses `PLATFORM=ID` as operators write it for the Google client id field.
    public static func googleAssignment(_ text: String) throws -> (GoogleProviderSettings.Platform, String) {
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let platforms = GoogleProviderSettings.Platform.allCases.map(\.rawValue)
        guard parts.count == 2 else {
            throw GatehouseError.invalid("\(field: .clientID) \"\(text.prefix(60))\" is not PLATFORM=ID", fix: "e.g. \(field: .clientID) ios=1234-abc.apps.googleusercontent.com (platforms: \(platforms.joined(separator: ", ")))")
        }
        guard let platform = GoogleProviderSettings.Platform(rawValue: String(parts[0]).lowercased()) else {
            let hint = Suggestion.closest(to: String(parts[0]), among: platforms).map { " (did you mean \($0)?)" } ?? ""
            throw GatehouseError.invalid("\(field: .clientID): unknown platform \"\(parts[0].prefix(40))\"\(hint)", fix: "platforms: \(platforms.joined(separator: ", "))")
        }
        return (platform, String(parts[1]))
    }

    private func write(provider: String, _ values: [(String, String?)], actor: Actor, now: Timestamp) throws {
        var details: [String: AuditValue] = [:]
        for (name, value) in values { details[name] = value.map(AuditValue.string) ?? .null }
        try store.change(actor: actor, action: "providers.set", subject: provider, details: details) {
            for (name, value) in values {
                if let value {
                    try store.db.execute("""
                        INSERT INTO gatehouse_provider_config (provider, name, value, updated_at, updated_by) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (provider, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, updated_by = excluded.updated_by
                        """, [provider, name, value, now.iso8601, actor.name])
                } else {
                    try store.db.execute("DELETE FROM gatehouse_provider_config WHERE provider = ? AND name = ?", [provider, name])
                }
            }
        }
    }

    /// Checks an identifier (reverse-DNS ids, Google client ids); nil when it is empty and `empty` allows clearing.
    /// `option` names the input in the error, as domain text (`"\(field: .audience)"`).
    static func identifier(_ text: String, option: String, kind: String, empty: Bool) throws -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty {
            if empty { return nil }
            throw GatehouseError.invalid("\(option): an empty \(kind)", fix: "give a value, or pass \(field: .clearAudience) to clear the list")
        }
        guard trimmed.count <= maxIdentifierLength,
              trimmed.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ".-_".unicodeScalars.contains($0)) }) else {
            throw GatehouseError.invalid("\(option): \"\(trimmed.prefix(60))\" is not a valid \(kind) (letters, digits, '.', '-', '_'; at most \(maxIdentifierLength))",
                                         fix: "copy the identifier exactly as the Apple Developer portal or Google Cloud console shows it")
        }
        return trimmed
    }
}

/// A change to the Apple settings: nil leaves a setting as it is; an empty string (or empty audience list) clears it.
public struct AppleProviderChange: Sendable {
    public var teamID: String?
    public var servicesID: String?
    public var bundleID: String?
    public var audience: [String]?

    public init(teamID: String? = nil, servicesID: String? = nil, bundleID: String? = nil, audience: [String]? = nil) {
        self.teamID = teamID
        self.servicesID = servicesID
        self.bundleID = bundleID
        self.audience = audience
    }

    var isEmpty: Bool { teamID == nil && servicesID == nil && bundleID == nil && audience == nil }
}
