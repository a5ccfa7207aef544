/// The domain's name for one input an operator gives (a ticket, a reason, the decision `keepEmail`), used in
/// messages instead of any front end's spelling of it. Domain text names a field with `\(field: .ticket)`
/// (see `DomainText`); the CLI shows it as its flag (`--ticket`), the console as its request field (`"ticket"`).
///
///     throw GatehouseError.invalid("\(field: .ticket) is empty", fix: "pass the support ticket")
///
/// The raw value is the console's request field and the source of the CLI's flag (`keepEmail` → `--keep-email`).
public enum InputField: String, Sendable, CaseIterable {
    case actor, audience, bundleID, carryRoles, clearAudience, clientID, config, deep, evidence, expires, force
    case format, from, into, jwks, keepEmail, keepPassword, keepSubscription, keyID, nonce, platform, prometheus
    case provider, reason, record, reveal, sameProvider, servicesID, store, teamID, ticket, ttl, users
    case ifVersion, acceptTakeoverRisk, with, email, noEmail, accountId, issuer, genericIdTokens, minScore, passwordFile, role
    case updateUserInfoOnLink
    case clientSecretFile, redirectURI, adminGroup, supportGroup, viewerGroup, groupsClaim, allowedDomain, passwordLogin
    /// Apply a user deletion without revoking Apple tokens first (`--no-revoke`, `"noRevoke"`).
    case noRevoke
    /// How long a policy override lasts (`--for 7d`).
    case `for`

    /// The field's name in kebab case, acronyms lowered as one word: `keepEmail` → `keep-email`, `teamID` → `team-id`.
    public var kebabName: String {
        var words: [String] = []
        var current = ""
        let characters = Array(rawValue)
        for (index, character) in characters.enumerated() {
            // A new word starts at an upper-case letter after a lower-case one (`keepEmail`, `teamID`).
            if character.isUppercase, index > 0, characters[index - 1].isLowercase {
                words.append(current)
                current = ""
            }
            current.append(character)
        }
        words.append(current)
        return words.map { $0.lowercased() }.joined(separator: "-")
    }
}
