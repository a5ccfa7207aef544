import Storage

/// One inbox for every provider's security events: Apple's server-to-server notifications and Google's
/// Cross-Account Protection events, newest first, each with what Gatehouse did and whether it can be undone.
/// Refused tokens are not events: they are counted per provider, reason and source (`RefusalCounter`), and listed
/// apart (`refusals`).
public enum SecurityEventInbox {
    public enum Provider: String, Sendable, Codable, CaseIterable {
        case apple, google
    }

    public struct Entry: Sendable, Codable, Equatable {
        public let provider: String
        public let id: Int64
        public let receivedAt: String
        public let event: String
        public let outcome: String
        public let userId: String?
        /// The provider's account id the event named (Apple or Google `sub`).
        public let subject: String?
        /// What Gatehouse did, in words.
        public let action: String
        /// Whether `security undo` can give back what it changed.
        public let undoable: Bool
        /// Sessions it ended: never given back.
        public let sessionsEnded: Int
        public let undoneAt: String?
        /// The user's email as it is now (nil when the event named no user, or the user is gone).
        public var userEmail: String? = nil
    }

    /// The latest events (at most `limit`), newest first, of one provider or both, of one event type (`event`, as
    /// the provider names it: `consent-revoked`, `sessions-revoked`) or all, received at or after `since`.
    public static func list(store: Store, provider: Provider? = nil, event: String? = nil, since: Timestamp? = nil, limit: Int = 200) throws -> [Entry] {
        let limit = max(1, min(limit, 5000))
        let after = since?.iso8601 ?? ""
        let type = event ?? ""
        var entries: [Entry] = []
        if provider != .google {
            entries += try store.db.rows("""
                SELECT id, received_at, type, outcome, user_id, sub, action FROM gatehouse_apple_notifications
                WHERE outcome <> 'refused' AND received_at >= ? AND (? = '' OR type = ?) ORDER BY received_at DESC, id DESC LIMIT ?
                """, [after, type, type, limit]).map { row in
                Entry(provider: "apple", id: row["id"].int64 ?? 0, receivedAt: row.optionalString("received_at") ?? "", event: row.optionalString("type") ?? "",
                      outcome: row.optionalString("outcome") ?? "", userId: row.optionalString("user_id"), subject: row.optionalString("sub"),
                      action: row.optionalString("action") ?? "", undoable: false, sessionsEnded: 0, undoneAt: nil)
            }
        }
        if provider != .apple {
            entries += try store.db.rows("""
                SELECT id, received_at, event_type, outcome, user_id, sub, action, sessions_ended, undo_data IS NOT NULL AS undoable, undone_at
                FROM gatehouse_google_events WHERE received_at >= ? AND (? = '' OR event_type = ?) ORDER BY received_at DESC, id DESC LIMIT ?
                """, [after, type, type, limit]).map { row in
                Entry(provider: "google", id: row["id"].int64 ?? 0, receivedAt: row.optionalString("received_at") ?? "", event: row.optionalString("event_type") ?? "",
                      outcome: row.optionalString("outcome") ?? "", userId: row.optionalString("user_id"), subject: row.optionalString("sub"),
                      action: row.optionalString("action") ?? "", undoable: row.bool("undoable"), sessionsEnded: Int(row["sessions_ended"].int64 ?? 0),
                      undoneAt: row.optionalString("undone_at"))
            }
        }
        var newest = Array(entries.sorted { ($0.receivedAt, $0.id) > ($1.receivedAt, $1.id) }.prefix(limit))
        let emails = try emails(of: Set(newest.compactMap(\.userId)), store: store)
        for index in newest.indices { newest[index].userEmail = newest[index].userId.flatMap { emails[$0] } }
        return newest
    }

    /// The emails of these users as they are now, read 90 ids a query (D1 binds at most 100 values).
    static func emails(of ids: Set<String>, store: Store) throws -> [String: String] {
        let user = store.schema.user
        var emails: [String: String] = [:]
        for chunk in ids.sorted().chunked(by: 90) {
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            for row in try store.db.rows("SELECT \(user.col(.id)) AS id, \(user.col(.email)) AS email FROM \(user.sql) WHERE \(user.col(.id)) IN (\(marks))",
                                         chunk.map { SQLValue.text($0) }) {
                if let id = row.optionalString("id"), let email = row.optionalString("email") { emails[id] = email }
            }
        }
        return emails
    }

    /// A counter of refused tokens: how many of one provider's tokens were refused for one reason from one source,
    /// since when, and the last one's words (never the token).
    public struct Refusal: Sendable, Codable, Equatable {
        public let provider: String
        public let reason: String
        public let source: String
        public let count: Int64
        public let firstSeen: String
        public let lastSeen: String
        public let detail: String
    }

    /// The refusal counters (at most `limit`), of one provider or both, the latest refusal first.
    public static func refusals(store: Store, provider: Provider? = nil, limit: Int = 200) throws -> [Refusal] {
        let limit = max(1, min(limit, 5000))
        var counters: [Refusal] = []
        for (name, counter) in [(Provider.apple, RefusalCounter.apple), (.google, .google)] where provider == nil || provider == name {
            counters += try store.db.rows("""
                SELECT reason, source, count, first_seen, last_seen, last_detail FROM \(counter.table) ORDER BY last_seen DESC, id DESC LIMIT ?
                """, [limit]).map { row in
                Refusal(provider: name.rawValue, reason: row.optionalString("reason") ?? "", source: row.optionalString("source") ?? "",
                        count: row["count"].int64 ?? 0, firstSeen: row.optionalString("first_seen") ?? "", lastSeen: row.optionalString("last_seen") ?? "",
                        detail: row.optionalString("last_detail") ?? "")
            }
        }
        return Array(counters.sorted { $0.lastSeen > $1.lastSeen }.prefix(limit))
    }
}
