import Gatehouse

/// A policy value as the console sends it: `true`, `["google","apple"]`, or text (`"true"`, `"google,apple"`).
struct PolicyValueInput: Decodable, Sendable {
    enum Raw: Sendable { case bool(Bool), list([String]), text(String) }
    let raw: Raw

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) { raw = .bool(value) }
        else if let value = try? container.decode([String].self) { raw = .list(value) }
        else { raw = .text(try container.decode(String.self)) }
    }

    /// The value for `key`, checked against its type by the policy's own rules.
    func value(for key: PolicyKey) throws -> PolicyValue {
        switch raw {
        case .bool(let value):
            let parsed = PolicyValue.bool(value)
            try key.check(parsed)
            return parsed
        case .list(let items):
            let parsed = PolicyValue.providers(items)
            try key.check(parsed)
            return try key.parse(parsed.json)
        case .text(let text):
            return try key.parse(text)
        }
    }
}

/// A duration as the console sends it: whole seconds (`7200`) or text (`"2h"`, `"1h30m"`).
struct DurationInput: Decodable, Sendable {
    let seconds: Seconds

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int64.self) {
            guard value >= 0 else { throw GatehouseError.invalid("\"for\" must not be negative") }
            seconds = Seconds(value)
        } else {
            seconds = try Seconds.parse(try container.decode(String.self))
        }
    }
}

/// `POST /api/policy`: {key, value, reason, for?, ifVersion?, acceptTakeoverRisk?}.
struct PolicySetRequest: Decodable, Sendable {
    let key: String
    let value: PolicyValueInput
    let reason: String
    let `for`: DurationInput?
    let ifVersion: Int?
    let acceptTakeoverRisk: Bool?

    func change() throws -> PolicyChange {
        let key = try PolicyKey.named(key)
        return PolicyChange(key: key, value: try value.value(for: key), reason: reason, duration: self.for?.seconds,
                            ifVersion: ifVersion, acceptTakeoverRisk: acceptTakeoverRisk ?? false)
    }
}

/// `POST /api/policy/simulate`: {flow: "link"|"signin", via?: "id-token"|"redirect", user?, provider, email? (absent or null:
/// the provider reports none), emailVerified?, accountId?, issuer?, requestSignUp?, providerOptions?: [name], generic?,
/// genericIdTokens?, updateUserInfoOnLink?, with?}.
struct PolicySimulateRequest: Decodable, Sendable {
    /// What `flow` names: a linkSocial by a signed-in user, or a sign-in.
    enum Kind: String, CaseIterable { case link, signin }

    let flow: String
    let via: String?
    let user: String?
    let provider: String
    let email: String?
    let emailVerified: Bool?
    let accountId: String?
    let issuer: String?
    let requestSignUp: Bool?
    let providerOptions: [String]?
    let generic: Bool?
    let genericIdTokens: Bool?
    /// The app's `accountLinking.updateUserInfoOnLink`, which the policy does not hold.
    let updateUserInfoOnLink: Bool?
    let with: [String: PolicyValueInput]?

    /// The attempt, with the provider options checked against the names Better Auth uses.
    func attempt() throws -> LinkAttempt {
        var settings = ProviderSettings()
        for name in providerOptions ?? [] {
            do { settings.set(try NamedChoice.parse(name, as: ProviderSettings.Option.self, caseSensitive: true)) } catch {
                throw APIError.badRequest(error.message(field: "each of \"providerOptions\"", echo: false))
            }
        }
        if generic == true { settings.generic = true }
        settings.genericIDTokens = genericIdTokens
        return LinkAttempt(provider: provider, email: email.flatMap { $0.isEmpty ? nil : $0 }, emailVerified: emailVerified ?? false,
                           accountID: accountId.flatMap { $0.isEmpty ? nil : $0 }, issuer: issuer.flatMap { $0.isEmpty ? nil : $0 },
                           flow: try APIError.choice(via, field: "\"via\"", as: AuthFlow.self) ?? .idToken, requestSignUp: requestSignUp ?? false, settings: settings,
                           updateUserInfoOnLink: updateUserInfoOnLink ?? false)
    }

    func overrides() throws -> [PolicyKey: PolicyValue] {
        var result: [PolicyKey: PolicyValue] = [:]
        for (name, input) in with ?? [:] {
            let key = try PolicyKey.named(name)
            result[key] = try input.value(for: key)
        }
        return result
    }
}
