import Foundation
import JOSE
import Storage

/// Receives Apple's server-to-server notifications, whatever carried them (the `apple notifications serve`
/// listener, or `apple notifications ingest` for a body another transport stored): verifies each, records it once
/// by `jti` + `sub` + `type`, and acts on it in the same transaction, with an audit entry.
///
/// - `email-disabled` / `email-enabled`: the relay's forwarding state of that Apple account (`users show` flags
///   "email forwarding off": mail sent to the relay address does not reach the person).
/// - `consent-revoked`: the account is marked revoked and the user's sessions are ended. Better Auth's `session`
///   table has no provider column, so which session came from the Apple sign-in cannot be known: every session of
///   the user is ended — all of them when Apple is the user's only sign-in, and all of them too when the user has
///   other sign-in methods (an Apple-made session cannot be told from the others; keeping all would keep it, and
///   the cost of ending all is one sign-in with the other method). The audit entry says which case it was.
/// - `account-delete` (`account-deleted`): a deletion request is opened for support; nothing is deleted.
/// - an unknown `sub`: recorded, nothing changed.
///
/// An invalid notification changes nothing and is counted, not recorded one row each: a counter per reason and
/// source (`gatehouse_apple_refusals`), with the first and last time and the last refusal's words (never the
/// token). Anyone can POST a forged notification; a row each would let a flood grow the store without bound.
public struct AppleNotificationInbox {
    /// The store.
    public let store: Store
    /// Where Apple's keys come from.
    public let keys: AppleKeySource

    /// The actor audit entries name: Apple, through Gatehouse.
    public static let actor = Actor("apple-notifications")

    public init(store: Store, keys: AppleKeySource) {
        self.store = store
        self.keys = keys
    }

    /// What carried a notification.
    public typealias Transport = SecurityEventTransport

    /// What became of one notification.
    public struct Receipt: Sendable, Codable, Equatable {
        /// What it came to.
        public enum Outcome: String, Sendable, Codable {
            /// Verified and acted on.
            case accepted
            /// Verified; no Apple account has the sub. Nothing changed.
            case unknownSub = "unknown_sub"
            /// Verified, and already recorded (same jti, sub and type): nothing done again.
            case duplicate
            /// Not verified: recorded with the reason; nothing changed.
            case refused
            /// Apple's keys could not be had: recorded as refused; Apple retries, so answer it with a retry status.
            case keysUnavailable = "keys_unavailable"
            /// Not Apple's body shape at all; not recorded.
            case malformed
        }
        public let outcome: Outcome
        /// The notification's row (nil for a malformed body).
        public let id: Int64?
        public let type: String?
        public let sub: String?
        public let userID: String?
        /// What was done, or why it was refused.
        public let message: String
        /// For a refused notification: why, as a code (`AppleNotificationRefusal.Reason`), and how many refusals its
        /// counter holds with this one.
        public var refusal: AppleNotificationRefusal.Reason? = nil
        public var refusals: Int64? = nil

        /// Whether the sender should be answered 200 (Apple stops retrying).
        public var acknowledged: Bool { outcome == .accepted || outcome == .unknownSub || outcome == .duplicate }
    }

    /// Verifies and records Apple's body `{"payload": "<JWT>"}`. `source` is the sender's address (the listener's
    /// peer), which a refusal is counted under.
    public func receive(body: [UInt8], transport: Transport, source: String? = nil, now: Timestamp) throws -> Receipt {
        let token: String
        do { token = try AppleNotificationVerifier.payload(of: body) } catch {
            return Receipt(outcome: .malformed, id: nil, type: nil, sub: nil, userID: nil, message: error.description)
        }
        let fingerprint = SHA256.hex(token)
        let counted = RefusalSource(transport: transport, address: source)
        // A payload that is not even a JWS is refused before Apple's keys are asked for.
        do { _ = try JWT.Compact(parsing: token) } catch {
            return try refuse(AppleNotificationRefusal("the payload is not a token signed by Apple's keys: \(error)", reason: .notAToken), outcome: .refused, source: counted, now: now)
        }
        let notification: AppleNotification
        do {
            let verifier = AppleNotificationVerifier(audiences: try AppleNotificationVerifier.audiences(in: store))
            var keySet = try keys.keys(store: store, now: now)
            // A kid the cached set lacks: Apple may have rotated its keys; fetch once more (at most once a minute:
            // otherwise the keys last fetched, and the kid is refused without a request to Apple).
            if let kid = AppleNotificationVerifier.keyID(of: token), !keySet.keys.contains(where: { $0.keyID == kid }) {
                keySet = try keys.keys(store: store, now: now, fresh: true)
            }
            notification = try verifier.verify(token: token, keys: keySet, now: now)
        } catch let refusal as AppleNotificationRefusal {
            return try refuse(refusal, outcome: .refused, source: counted, now: now)
        } catch let unavailable as AppleKeySource.Unavailable {
            let refusal = AppleNotificationRefusal(unavailable.description + "; nothing was changed (Apple sends it again until it is answered 200)",
                                                   reason: .keysUnavailable)
            return try refuse(refusal, outcome: .keysUnavailable, source: counted, now: now)
        }
        return try record(notification, fingerprint: fingerprint, transport: transport, now: now)
    }

    /// The most refusal counters kept apart by source; past it, a new source is counted under "TRANSPORT (other sources)".
    public static let maxRefusalCounters = RefusalCounter.maxCounters

    /// Where refusals are counted from (`RefusalCounter.Source`).
    typealias RefusalSource = RefusalCounter.Source

    /// Counts a refusal under its reason and source (`RefusalCounter`).
    private func refuse(_ refusal: AppleNotificationRefusal, outcome: Receipt.Outcome, source: RefusalSource, now: Timestamp) throws -> Receipt {
        let count = try RefusalCounter.apple.count(reason: refusal.reason.rawValue, description: refusal.description, source: source, in: store.db, now: now)
        return Receipt(outcome: outcome, id: nil, type: nil, sub: nil, userID: nil, message: refusal.description, refusal: refusal.reason, refusals: count)
    }

    private func existing(_ notification: AppleNotification) throws -> Row? {
        try store.db.row("""
            SELECT id, user_id, action FROM gatehouse_apple_notifications
            WHERE jti = ? AND sub = ? AND type = ? AND outcome <> 'refused'
            """, [notification.jti, notification.sub, notification.type.rawValue])
    }

    private func duplicate(_ row: Row, _ notification: AppleNotification) -> Receipt {
        Receipt(outcome: .duplicate, id: row["id"].int64, type: notification.type.rawValue, sub: notification.sub,
                userID: row.optionalString("user_id"),
                message: "already recorded as notification \(row["id"].int64 ?? 0) (same jti, sub and type); nothing done again")
    }

    private func record(_ notification: AppleNotification, fingerprint: String, transport: Transport, now: Timestamp) throws -> Receipt {
        if let row = try existing(notification) { return duplicate(row, notification) }
        let account = store.schema.account
        let found = try store.db.row("""
            SELECT \(account.col(.id)) AS id, \(account.col(.userId)) AS user_id FROM \(account.sql)
            WHERE \(account.col(.providerId)) = 'apple' AND \(account.col(.accountId)) = ? ORDER BY \(account.col(.id)) LIMIT 1
            """, [notification.sub])
        let userID = found?.optionalString("user_id")
        let accountID = found?.optionalString("id")
        let type = notification.type.rawValue
        let eventTime = (notification.eventTime ?? now).iso8601
        var details: [String: AuditValue] = [
            "type": .string(type), "sub": .string(notification.sub), "jti": .string(notification.jti),
            "aud": .string(notification.audience), "transport": .string(transport.rawValue), "event_time": .string(eventTime),
        ]
        do {
            return try store.db.write {
                // Checked again inside the write: another listener thread or process may have recorded it meanwhile.
                if let row = try existing(notification) { return duplicate(row, notification) }
                // Named before anything is written: the account state and the deletion request point at it.
                let id = try store.db.nextID(in: "gatehouse_apple_notifications")
                var action: String
                var outcome = Receipt.Outcome.accepted
                if let userID {
                    action = try act(notification, userID: userID, eventTime: eventTime, now: now, details: &details)
                } else {
                    outcome = .unknownSub
                    action = "no Apple account has this sub; nothing changed"
                }
                try store.db.execute("""
                    INSERT INTO gatehouse_apple_notifications (id, received_at, transport, outcome, jti, sub, type, event_time, email,
                        is_private_email, aud, user_id, account_id, action, token_sha256)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [id, now.iso8601, transport.rawValue, outcome == .accepted ? "accepted" : "unknown_sub", notification.jti, notification.sub,
                          type, eventTime, notification.email, notification.isPrivateEmail.map { $0 ? 1 : 0 }, notification.audience,
                          userID, accountID, action, fingerprint])
                if outcome == .accepted {
                    try store.db.execute("UPDATE gatehouse_apple_account_state SET last_notification_id = ? WHERE sub = ? AND last_notification_id = 0",
                                         [id, notification.sub])
                    try store.db.execute("UPDATE gatehouse_apple_deletion_requests SET notification_id = ? WHERE sub = ? AND notification_id = 0",
                                         [id, notification.sub])
                }
                details["notification_id"] = .int(id)
                details["outcome"] = .string(outcome.rawValue)
                details["action"] = .string(action)
                try store.audit.append(store.db, actor: Self.actor, action: "apple.notification.\(type)", subject: userID ?? notification.sub,
                                       details: details, at: now)
                return Receipt(outcome: outcome, id: id, type: type, sub: notification.sub, userID: userID, message: action)
            }
        } catch let error as SQLFailure where error.isUniqueViolation {
            if let row = try existing(notification) { return duplicate(row, notification) }
            throw error
        }
    }

    /// Applies one verified event for a known user; returns what was done, in words.
    private func act(_ notification: AppleNotification, userID: String, eventTime: String, now: Timestamp,
                     details: inout [String: AuditValue]) throws -> String {
        let sub = notification.sub
        switch notification.type {
        case .emailDisabled, .emailEnabled:
            let forwarding = notification.type == .emailDisabled ? "off" : "on"
            // Apple retries, so an older event may arrive after a newer one: it does not overwrite it.
            if let row = try store.db.row("SELECT forwarding_changed_at FROM gatehouse_apple_account_state WHERE sub = ?", [sub]),
               let changed = row.optionalString("forwarding_changed_at"), changed > eventTime {
                return "email forwarding \(forwarding) at \(eventTime) is older than the state recorded at \(changed); kept that"
            }
            try upsertState(sub: sub, now: now, set: "email_forwarding = ?, forwarding_email = ?, forwarding_changed_at = ?",
                            values: [forwarding, notification.email, eventTime])
            details["email_forwarding"] = .string(forwarding)
            return forwarding == "off"
                ? "email forwarding off: mail to \(notification.email ?? "the relay address") no longer reaches the person"
                : "email forwarding on again"
        case .consentRevoked:
            let account = store.schema.account, session = store.schema.session
            let providers = try store.db.rows("SELECT DISTINCT \(account.col(.providerId)) AS p FROM \(account.sql) WHERE \(account.col(.userId)) = ?", [userID])
                .compactMap { $0.optionalString("p") }
            let onlySignIn = providers == ["apple"]
            // Counted before they go (inside this write, so the count is the deletion's).
            let ended = Int(try store.db.scalar("SELECT count(*) FROM \(session.sql) WHERE \(session.col(.userId)) = ?", [userID]).int64 ?? 0)
            try store.db.execute("DELETE FROM \(session.sql) WHERE \(session.col(.userId)) = ?", [userID])
            try upsertState(sub: sub, now: now, set: "consent_revoked_at = ?", values: [eventTime])
            details["sessions_ended"] = .int(Int64(ended))
            details["session_attribution"] = .string(onlySignIn ? "apple_only_sign_in" : "unattributable_all_ended")
            return onlySignIn
                ? "consent revoked: account marked revoked; \(ended) session(s) ended (Apple is this user's only sign-in)"
                : "consent revoked: account marked revoked; \(ended) session(s) ended — all of the user's, because Better Auth's sessions do not say which sign-in made them (the user also signs in with \(providers.filter { $0 != "apple" }.joined(separator: ", ")))"
        case .accountDelete:
            var opened: Int64?
            if try store.db.row("SELECT id FROM gatehouse_apple_deletion_requests WHERE sub = ? AND user_id = ?", [sub, userID]) == nil {
                let id = try store.db.nextID(in: "gatehouse_apple_deletion_requests")
                try store.db.execute("""
                    INSERT INTO gatehouse_apple_deletion_requests (id, opened_at, sub, user_id, notification_id, state) VALUES (?, ?, ?, ?, 0, 'open')
                    """, [id, now.iso8601, sub, userID])
                opened = id
            }
            details["deletion_request_id"] = opened.map { .int($0) } ?? .null
            return opened.map { "deletion request \($0) opened for support (nothing deleted)" }
                ?? "a deletion request for this account was already open; nothing deleted"
        }
    }

    private func upsertState(sub: String, now: Timestamp, set assignments: String, values: [SQLBindable]) throws {
        if try store.db.row("SELECT sub FROM gatehouse_apple_account_state WHERE sub = ?", [sub]) == nil {
            try store.db.execute("INSERT INTO gatehouse_apple_account_state (sub, updated_at, last_notification_id) VALUES (?, ?, 0)", [sub, now.iso8601])
        } else {
            try store.db.execute("UPDATE gatehouse_apple_account_state SET last_notification_id = 0 WHERE sub = ?", [sub])
        }
        try store.db.execute("UPDATE gatehouse_apple_account_state SET \(assignments), updated_at = ? WHERE sub = ?", values + [now.iso8601, sub])
    }

    // MARK: Reading

    /// One recorded notification, or one counter of refused ones, as `apple notifications list` and the console show
    /// them. No token.
    public struct Entry: Sendable, Codable, Equatable {
        public let id: Int64
        public let receivedAt: String
        public let transport: String
        public let outcome: String
        public let reason: String?
        public let type: String?
        public let sub: String?
        public let eventTime: String?
        public let email: String?
        public let isPrivateEmail: Bool?
        public let userID: String?
        public let action: String?
        /// For a counter of refusals (`outcome` "refused"): how many, the reason's code, where from, and the first
        /// time (`receivedAt` is the last; `reason` the last refusal's words). Nil for a notification.
        public var count: Int64? = nil
        public var refusal: String? = nil
        public var source: String? = nil
        public var firstSeen: String? = nil
    }

    /// The latest notifications and refusal counters (by their last refusal), newest first.
    public static func list(store: Store, limit: Int = 200) throws -> [Entry] {
        let limit = max(1, min(limit, 5000))
        let counters = try store.db.rows("SELECT * FROM gatehouse_apple_refusals ORDER BY last_seen DESC, id DESC LIMIT ?", [limit]).map { row in
            Entry(id: row["id"].int64 ?? 0, receivedAt: row.optionalString("last_seen") ?? "", transport: row.optionalString("transport") ?? "",
                  outcome: "refused", reason: row.optionalString("last_detail"), type: nil, sub: nil, eventTime: nil, email: nil, isPrivateEmail: nil,
                  userID: nil, action: nil, count: row["count"].int64, refusal: row.optionalString("reason"), source: row.optionalString("source"),
                  firstSeen: row.optionalString("first_seen"))
        }
        let recorded = try store.db.rows("SELECT * FROM gatehouse_apple_notifications ORDER BY id DESC LIMIT ?", [limit]).map { row in
            Entry(id: row["id"].int64 ?? 0, receivedAt: row.optionalString("received_at") ?? "", transport: row.optionalString("transport") ?? "",
                  outcome: row.optionalString("outcome") ?? "", reason: row.optionalString("reason"), type: row.optionalString("type"),
                  sub: row.optionalString("sub"), eventTime: row.optionalString("event_time"), email: row.optionalString("email"),
                  isPrivateEmail: row["is_private_email"].int64.map { $0 == 1 }, userID: row.optionalString("user_id"),
                  action: row.optionalString("action"))
        }
        guard !counters.isEmpty else { return recorded }
        // Both lists are newest first; merged by time (ISO-8601 text orders as time), a counter before a notification
        // of the same instant.
        var merged: [Entry] = []
        var c = counters[...], r = recorded[...]
        while merged.count < limit, !(c.isEmpty && r.isEmpty) {
            if let counter = c.first, r.first.map({ counter.receivedAt >= $0.receivedAt }) ?? true {
                merged.append(counter)
                c = c.dropFirst()
            } else {
                merged.append(r.first!)
                r = r.dropFirst()
            }
        }
        return merged
    }
}
