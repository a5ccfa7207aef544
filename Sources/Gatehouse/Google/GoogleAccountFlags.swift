import Storage

/// What Google's Cross-Account Protection events left on a user's Google accounts, as flags of `users show`, the
/// console's user page and the `security` section of `policy export`: the Google account disabled (the app's runtime
/// should refuse Google sign-in for the user until Google says `account-enabled`), or flagged for review.
public enum GoogleAccountFlags {
    /// The state rows of the user's Google accounts; one argument, the user id.
    static func stateSQL(_ schema: AuthSchema) -> String {
        let account = schema.account
        return """
            SELECT s.sub AS sub, s.disabled AS disabled, s.disabled_at AS disabled_at, s.review AS review, s.review_at AS review_at
            FROM gatehouse_google_account_state s
            WHERE s.sub IN (SELECT \(account.col(.accountId)) FROM \(account.sql) WHERE \(account.col(.userId)) = ? AND \(account.col(.providerId)) = 'google')
            ORDER BY s.sub
            """
    }

    static func flags(state: [Row]) -> [UserFlag] {
        var flags: [UserFlag] = []
        for row in state {
            let sub = row.optionalString("sub") ?? "?"
            if let disabled = row.optionalString("disabled") {
                let why = disabled == "unspecified" ? "no reason given" : "reason \(disabled)"
                flags.append(UserFlag(code: "google_account_disabled",
                    message: "Google account disabled (Google account \(sub), \(why), at \(row.optionalString("disabled_at") ?? "?")): Google's Cross-Account Protection says the account is disabled; refuse Google sign-in for this user (policy export's security section lists it) until Google sends account-enabled"))
            }
            if let review = row.optionalString("review") {
                flags.append(UserFlag(code: "google_review",
                    message: "flagged for review (Google account \(sub), \(review), at \(row.optionalString("review_at") ?? "?")): check recent activity on this user before trusting changes made through Google sign-in"))
            }
        }
        return flags
    }

    /// The Google subs whose accounts are disabled, for the runtime (`policy export`'s `security.googleDisabledSubs`).
    public static func disabledSubs(in store: Store) throws -> [String] {
        try store.db.rows("SELECT sub FROM gatehouse_google_account_state WHERE disabled IS NOT NULL ORDER BY sub").compactMap { $0.optionalString("sub") }
    }
}
