import Storage

/// What Apple's server-to-server notifications left on a user's Apple accounts, as flags of `users show` and the
/// console's user page: the relay's forwarding turned off, consent revoked, a deletion request open.
public enum AppleAccountFlags {
    /// The state rows of the user's Apple accounts; one argument, the user id.
    static func stateSQL(_ schema: AuthSchema) -> String {
        let account = schema.account
        return """
            SELECT s.sub AS sub, s.email_forwarding AS email_forwarding, s.forwarding_email AS forwarding_email,
                   s.forwarding_changed_at AS forwarding_changed_at, s.consent_revoked_at AS consent_revoked_at
            FROM gatehouse_apple_account_state s
            WHERE s.sub IN (SELECT \(account.col(.accountId)) FROM \(account.sql) WHERE \(account.col(.userId)) = ? AND \(account.col(.providerId)) = 'apple')
            ORDER BY s.sub
            """
    }

    /// The user's open deletion requests; one argument, the user id.
    static let deletionRequestsSQL = "SELECT id, opened_at, sub FROM gatehouse_apple_deletion_requests WHERE user_id = ? AND state = 'open' ORDER BY id"

    /// What Better Auth does when a person whose consent was revoked signs in with Apple again.
    public static let nextSignIn = "on the next Sign in with Apple the person is asked to consent again and Apple sends the same sub, so Better Auth signs them in to this user through the existing account row and stores new tokens; only if that account row is gone does it link or create a user by its own rules (email match, allowDifferentEmails)"

    static func flags(state: [Row], deletionRequests: [Row], email: String) -> [UserFlag] {
        var flags: [UserFlag] = []
        for row in state {
            let sub = row.optionalString("sub") ?? "?"
            if row.optionalString("email_forwarding") == "off" {
                let address = row.optionalString("forwarding_email") ?? (email.isEmpty ? "the relay address" : email)
                flags.append(UserFlag(code: "apple_email_forwarding_off",
                    message: "email forwarding off (Apple account \(sub), since \(row.optionalString("forwarding_changed_at") ?? "?")): the person turned off the private relay, so mail to \(address) does not reach them; do not expect a reply by email"))
            }
            if let revoked = row.optionalString("consent_revoked_at") {
                flags.append(UserFlag(code: "apple_consent_revoked",
                    message: "Apple consent revoked (Apple account \(sub), at \(revoked)): its Apple tokens no longer work and the user's sessions were ended; \(nextSignIn)"))
            }
        }
        for row in deletionRequests {
            flags.append(UserFlag(code: "apple_deletion_requested",
                message: "deletion requested through Apple (request \(row["id"].int64 ?? 0), Apple account \(row.optionalString("sub") ?? "?"), opened \(row.optionalString("opened_at") ?? "?")): the person deleted their Apple account; delete this user on request — nothing was deleted automatically"))
        }
        return flags
    }
}
