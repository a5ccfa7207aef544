/// Something about a user that an operator should notice.
public struct UserFlag: Sendable, Codable, Equatable, Hashable {
    /// A stable code: `private_relay_email`, `email_not_verified`, `no_accounts`, `unprovisioned`,
    /// `apple_without_email`.
    public let code: String
    /// One line for people.
    public let message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public static let privateRelayEmail = UserFlag(code: "private_relay_email",
        message: "private-relay email (Apple Hide My Email): it never equals the person's address at another provider, so auto-linking cannot match it")
    public static let emailNotVerified = UserFlag(code: "email_not_verified", message: "email not verified")
    public static let noAccounts = UserFlag(code: "no_accounts", message: "no account rows: this user cannot sign in")
    public static let unprovisioned = UserFlag(code: "unprovisioned",
        message: "UNPROVISIONED: no sync-server users row for this sub; the sync server refuses its tokens")
    public static let appleWithoutEmail = UserFlag(code: "apple_without_email",
        message: "Apple account but no email on the user: Apple discloses the email only on the first authorization")
}

/// Computes the flags of a user from the facts Gatehouse reads about it.
public enum UserFlags {
    /// The flags, in a fixed order.
    public static func flags(email: String, emailVerified: Bool, providers: [String], provisioned: Bool?) -> [UserFlag] {
        let address = EmailAddress(email)
        var flags: [UserFlag] = []
        if address.isPrivateRelay { flags.append(.privateRelayEmail) }
        if !emailVerified { flags.append(.emailNotVerified) }
        if providers.isEmpty { flags.append(.noAccounts) }
        if provisioned == false { flags.append(.unprovisioned) }
        if providers.contains("apple") && !address.isPresent { flags.append(.appleWithoutEmail) }
        return flags
    }
}
