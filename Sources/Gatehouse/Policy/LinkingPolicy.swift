import Foundation

/// One key of the account-linking policy: its name, type, default and meaning.
///
/// The `accountLinking.*` keys are Better Auth's `account.accountLinking` options. Better Auth has a
/// single instance-wide `allowDifferentEmails`, which 1.7.1 reads only where a signed-in user links an account
/// (api/routes/account.ts:388 for an id token, api/routes/callback.ts:299 for a link by redirect); the policy splits
/// it in two: `linkSocial.allowDifferentEmails`, which the runtime applies to those requests (`PolicyExport.LinkSocial
/// .appliesTo`), and `autoLink.allowDifferentEmails`, exported as the instance-wide value for every other request.
///
///     let key = try PolicyKey.named("linkSocial.allowDifferentEmails")
///     let value = try key.parse("true")   // .bool(true)
public enum PolicyKey: String, CaseIterable, Sendable, Codable, Comparable {
    case enabled = "accountLinking.enabled"
    case trustedProviders = "accountLinking.trustedProviders"
    case disableImplicitLinking = "accountLinking.disableImplicitLinking"
    case requireLocalEmailVerified = "accountLinking.requireLocalEmailVerified"
    case allowUnlinkingAll = "accountLinking.allowUnlinkingAll"
    case autoLinkAllowDifferentEmails = "autoLink.allowDifferentEmails"
    case linkSocialAllowDifferentEmails = "linkSocial.allowDifferentEmails"

    /// The type of a key's value.
    public enum Kind: String, Sendable, Codable {
        case boolean
        case providerList = "provider list"
    }

    public static func < (lhs: PolicyKey, rhs: PolicyKey) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The key's value type.
    public var kind: Kind { self == .trustedProviders ? .providerList : .boolean }

    /// The value a key holds until it is first set: the plan's D3 configuration.
    public var defaultValue: PolicyValue {
        switch self {
        case .enabled: return .bool(true)
        case .trustedProviders: return .providers(["google", "apple"])
        case .disableImplicitLinking: return .bool(false)
        case .requireLocalEmailVerified: return .bool(true)
        case .allowUnlinkingAll: return .bool(false)
        case .autoLinkAllowDifferentEmails: return .bool(false)
        case .linkSocialAllowDifferentEmails: return .bool(false)
        }
    }

    /// One line on what the key does.
    public var summary: String {
        switch self {
        case .enabled: return "account linking at all (explicit and implicit)"
        case .trustedProviders: return "providers whose email is trusted for linking even when unverified"
        case .disableImplicitLinking: return "stop sign-in from linking a new provider to a user with the same email"
        case .requireLocalEmailVerified: return "implicit linking needs the existing user's email verified (takeover guard)"
        case .allowUnlinkingAll: return "let a user unlink their last account"
        case .autoLinkAllowDifferentEmails: return "instance-wide allowDifferentEmails outside linkSocial; keep false (true would open email-based takeover wherever a link is made without the user's session)"
        case .linkSocialAllowDifferentEmails: return "allowDifferentEmails for linkSocial (id token and redirect callback) only: Hide My Email users"
        }
    }

    /// Whether setting `value` opens email-based account takeover and needs `acceptTakeoverRisk`.
    public func opensTakeover(_ value: PolicyValue) -> Bool {
        self == .autoLinkAllowDifferentEmails && value == .bool(true)
    }

    /// Every key and its type, for error messages.
    public static var listing: String {
        allCases.map { "\($0.rawValue) (\($0.kind.rawValue))" }.joined(separator: ", ")
    }

    /// The key with this exact name, or an error with a suggestion and the list of valid keys.
    public static func named(_ text: String) throws -> PolicyKey {
        if let key = PolicyKey(rawValue: text) { return key }
        let shown = String(text.prefix(60))
        var hint = ""
        if let exact = allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) {
            hint = "; did you mean \"\(exact.rawValue)\"? (keys are case-sensitive)"
        } else {
            let bySuffix = allCases.filter { $0.rawValue.split(separator: ".").last.map(String.init)?.lowercased() == text.lowercased() }
            if !bySuffix.isEmpty {
                hint = "; did you mean " + bySuffix.map { "\"\($0.rawValue)\"" }.joined(separator: " or ") + "?"
            } else {
                let scored = allCases.map { ($0, Suggestion.editDistance(text.lowercased(), $0.rawValue.lowercased())) }
                if let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(3, text.count / 4) {
                    hint = "; did you mean \"\(best.0.rawValue)\"?"
                }
            }
        }
        throw GatehouseError.invalid("unknown policy key \"\(shown)\"\(hint)", fix: "valid keys: \(listing)")
    }

    /// Parses operator input for this key: `true`/`false` for a boolean; a JSON array
    /// (`["google","apple"]`) or a comma list (`google,apple`) of provider ids for a provider list.
    public func parse(_ text: String) throws -> PolicyValue {
        let shown = String(text.prefix(60))
        switch kind {
        case .boolean:
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default:
                throw GatehouseError.invalid("\"\(shown)\" is not a valid value for \(rawValue): it takes true or false",
                                             fix: "\(run: .policySet, "\(rawValue) true|false", .option(.reason, "TEXT"))")
            }
        case .providerList:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            var items: [String]
            if trimmed.hasPrefix("[") {
                guard let decoded = try? JSONDecoder().decode([String].self, from: Data(trimmed.utf8)) else {
                    throw GatehouseError.invalid("\"\(shown)\" is not a JSON array of provider ids for \(rawValue)",
                                                 fix: #"write it as ["google","apple"] or as google,apple"#)
                }
                items = decoded
            } else {
                guard !trimmed.isEmpty else {
                    throw GatehouseError.invalid("an empty value for \(rawValue) is ambiguous", fix: "write [] for no trusted providers, or e.g. google,apple")
                }
                items = trimmed.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            }
            return try PolicyValue.providers(Self.checkProviders(items, key: self))
        }
    }

    /// Checks that `value` has this key's type.
    public func check(_ value: PolicyValue) throws {
        switch (kind, value) {
        case (.boolean, .bool): return
        case (.providerList, .providers(let items)): _ = try Self.checkProviders(items, key: self)
        default:
            throw GatehouseError.invalid("\(value.json) is not a \(kind.rawValue), the type of \(rawValue)")
        }
    }

    /// At most this many trusted providers.
    public static let maxProviders = 32

    static func checkProviders(_ items: [String], key: PolicyKey) throws -> [String] {
        guard items.count <= maxProviders else {
            throw GatehouseError.invalid("\(items.count) providers for \(key.rawValue) is more than the \(maxProviders) allowed")
        }
        var seen: [String] = []
        for item in items {
            guard isProviderID(item) else {
                throw GatehouseError.invalid("\"\(OperatorText.visible(String(item.prefix(60)), keepLineBreaks: false))\" is not a provider id (in \(key.rawValue))",
                                             fix: providerIDRule)
            }
            if !seen.contains(item) { seen.append(item) }
        }
        return seen
    }

    /// Whether `text` can be a provider id: `google`, `apple`, and a generic OAuth provider's id as the app spells it
    /// (`Okta`, `corp-SSO`). Better Auth 1.7.1 takes any non-empty string as a generic provider's `providerId` and in
    /// `trustedProviders` (context/helpers.ts:301 keeps every truthy entry) and matches it exactly (`includes`, ===):
    /// `Google` is another provider than `google`. Gatehouse refuses only what no id should hold and what would
    /// reach a terminal or a page as something else: control characters, invisible formatting, its own marker
    /// characters; and bounds the length.
    public static func isProviderID(_ text: String) -> Bool {
        guard !text.isEmpty, text.count <= maxProviderIDLength else { return false }
        return text.unicodeScalars.allSatisfy { scalar in
            scalar.properties.generalCategory != .control && !OperatorText.isInvisibleFormatting(scalar) && !DomainText.isMarker(scalar)
        }
    }

    /// The longest provider id taken (a real one is a word; the bound keeps a pasted document out of the policy).
    public static let maxProviderIDLength = 128

    /// What `isProviderID` accepts, for error messages.
    public static let providerIDRule = "a provider id is 1–\(maxProviderIDLength) characters without control or invisible formatting characters, matched exactly as Better Auth matches it (e.g. google, apple, or a generic provider's id as configured)"

    /// Parses a `KEY=VALUE` assignment (`--with linkSocial.allowDifferentEmails=true`).
    public static func assignment(_ text: String) throws -> (PolicyKey, PolicyValue) {
        guard let equals = text.firstIndex(of: "=") else {
            throw GatehouseError.invalid("\"\(text.prefix(60))\" is not KEY=VALUE", fix: "e.g. \(field: .with) linkSocial.allowDifferentEmails=true")
        }
        let key = try named(String(text[..<equals]))
        return (key, try key.parse(String(text[text.index(after: equals)...])))
    }
}

/// A policy value: a boolean or a list of provider ids. Encodes as plain JSON (`true`, `["google"]`).
public enum PolicyValue: Sendable, Equatable, Codable, CustomStringConvertible {
    case bool(Bool)
    case providers([String])

    /// The compact JSON form stored in the database.
    public var json: String {
        switch self {
        case .bool(let value): return value ? "true" : "false"
        case .providers(let items):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            return String(decoding: (try? encoder.encode(items)) ?? Data("[]".utf8), as: UTF8.self)
        }
    }

    public var description: String { json }

    /// Reads the stored JSON form.
    public init?(json text: String) {
        if text == "true" { self = .bool(true) } else if text == "false" { self = .bool(false) } else if let items = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) {
            self = .providers(items)
        } else {
            return nil
        }
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) { self = .bool(value) } else { self = .providers(try container.decode([String].self)) }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .bool(let value): try container.encode(value)
        case .providers(let items): try container.encode(items)
        }
    }

    var boolValue: Bool { if case .bool(let value) = self { return value } else { return false } }
    var providerList: [String] { if case .providers(let items) = self { return items } else { return [] } }
}

/// The effective values of every key: what Better Auth is configured with.
public struct LinkingPolicy: Sendable, Equatable {
    private var values: [PolicyKey: PolicyValue]

    /// The defaults (the plan's D3 recommendation with the switch off).
    public static let defaults = LinkingPolicy(values: [:])

    init(values: [PolicyKey: PolicyValue]) { self.values = values }

    /// Two policies are equal when every key has the same effective value (set or default).
    public static func == (lhs: LinkingPolicy, rhs: LinkingPolicy) -> Bool {
        PolicyKey.allCases.allSatisfy { lhs[$0] == rhs[$0] }
    }

    /// A key's value.
    public subscript(_ key: PolicyKey) -> PolicyValue { values[key] ?? key.defaultValue }

    /// This policy with one key changed. The value must have the key's type (see `PolicyKey.check`).
    public func setting(_ key: PolicyKey, _ value: PolicyValue) -> LinkingPolicy {
        var copy = self
        copy.values[key] = value
        return copy
    }

    public var enabled: Bool { self[.enabled].boolValue }
    public var trustedProviders: [String] { self[.trustedProviders].providerList }
    public var disableImplicitLinking: Bool { self[.disableImplicitLinking].boolValue }
    public var requireLocalEmailVerified: Bool { self[.requireLocalEmailVerified].boolValue }
    public var allowUnlinkingAll: Bool { self[.allowUnlinkingAll].boolValue }
    public var autoLinkAllowDifferentEmails: Bool { self[.autoLinkAllowDifferentEmails].boolValue }
    public var linkSocialAllowDifferentEmails: Bool { self[.linkSocialAllowDifferentEmails].boolValue }

    /// What a health check should flag about this policy.
    public var risks: [PolicyRisk] {
        var risks: [PolicyRisk] = []
        if autoLinkAllowDifferentEmails {
            risks.append(PolicyRisk(severity: .critical, key: PolicyKey.autoLinkAllowDifferentEmails.rawValue,
                                    message: "autoLink.allowDifferentEmails is true: any link the runtime does not scope to linkSocial accepts an account whose email differs from the user's (Better Auth 1.7.1: linkSocial's redirect callback where the runtime does not apply the linkSocial value; email-based account takeover wherever a link is made without the user's session)"))
        }
        if !requireLocalEmailVerified {
            risks.append(PolicyRisk(severity: .warning, key: PolicyKey.requireLocalEmailVerified.rawValue,
                                    message: "accountLinking.requireLocalEmailVerified is false: sign-in links a provider to a user whose own email was never verified (pre-registration takeover)"))
        }
        return risks
    }
}

/// A finding about a policy for health checks and `policy show`.
public struct PolicyRisk: Sendable, Codable, Equatable {
    /// How bad it is, in the health check's terms.
    public enum Severity: String, Sendable, Codable { case warning, critical }
    public let severity: Severity
    public let key: String
    public let message: String
}
