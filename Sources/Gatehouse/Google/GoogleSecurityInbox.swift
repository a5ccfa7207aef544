import Foundation
import JOSE
import Storage

/// Receives Google's security event tokens (Cross-Account Protection, RISC), whatever carried them (the
/// `google risc serve` receiver, or `google risc ingest`): verifies each (`GoogleRISCVerifier`), records it once by
/// `jti` and event type, and acts on it in the same write, with an audit entry naming the `jti`:
///
/// | event | action |
/// |---|---|
/// | `sessions-revoked` | end the user's sessions |
/// | `tokens-revoked` | end the sessions, clear the Google account's stored tokens (access, refresh, id) |
/// | `token-revoked` | clear that one refresh token, nothing else |
/// | `account-disabled`, reason `hijacking` | end the sessions, clear the tokens (Google re-secures the account; no flag) |
/// | `account-disabled`, reason `bulk-account` | flag the user for review |
/// | `account-disabled`, no reason | flag the account disabled (`policy export`'s `security` lists it) |
/// | `account-enabled` | lift the disabled flag |
/// | `account-credential-change-required` | flag the user for review |
/// | `verification` | record its `state` |
///
/// A subject no Google account has is recorded and changes nothing. An action that changed rows can be undone
/// (`undo`): the flags as they were, and the tokens it cleared (kept sealed under the master key until then); ended
/// sessions cannot be given back. A refused token changes nothing and is counted per reason and source.
public struct GoogleSecurityInbox {
    public let store: Store
    public let keys: GoogleRISCKeys
    /// The actor audit entries name: Google, through Gatehouse.
    public static let actor = Actor("google-risc")

    /// The store's master key, when the caller loaded it once for many events (the receiver's writer, per batch).
    let masterKey: MasterKey?

    public init(store: Store, keys: GoogleRISCKeys, masterKey: MasterKey? = nil) {
        self.store = store
        self.keys = keys
        self.masterKey = masterKey
    }

    /// What carried a token.
    public typealias Transport = SecurityEventTransport

    /// What became of one token.
    public struct Receipt: Sendable, Codable, Equatable {
        public enum Outcome: String, Sendable, Codable {
            /// Verified and acted on (or recorded: a verification).
            case accepted
            /// Verified; no Google account matched. Recorded; nothing changed.
            case unknownSubject = "unknown_subject"
            /// Verified, and already recorded (same jti and event type): nothing done again.
            case duplicate
            /// Not verified: counted; nothing changed.
            case refused
            /// Google's keys could not be had: nothing changed; the sender should try again later.
            case keysUnavailable = "keys_unavailable"
        }
        public let outcome: Outcome
        public let id: Int64?
        public let type: String?
        public let userID: String?
        /// What was done, or why it was refused (never the token).
        public let message: String
        public var refusal: GoogleRISCRefusal.Reason? = nil
        /// RFC 8935's `err` for a refusal.
        public var setError: String? = nil

        /// Whether the sender is answered 202.
        public var acknowledged: Bool { outcome == .accepted || outcome == .unknownSubject || outcome == .duplicate }
    }

    /// The SHA-256 of a token, which the event's row keeps instead of the token.
    public static func fingerprint(of token: String) -> String { SHA256.hex(token.trimmingCharacters(in: .whitespacesAndNewlines)) }

    /// Verifies `token` against Google's keys (fetching them again once when its `kid` is unknown).
    public func verify(_ token: String, now: Timestamp) throws -> GoogleSecurityEvent {
        _ = try GoogleRISCVerifier.parse(token)
        let verifier = GoogleRISCVerifier(audiences: try GoogleRISCVerifier.audiences(in: store))
        var configuration = try keys.configuration(now: now)
        if let kid = GoogleRISCVerifier.keyID(of: token), !configuration.keys.keys.contains(where: { $0.keyID == kid }) {
            configuration = try keys.configuration(now: now, unknownKeyID: true)
        }
        return try verifier.verify(token: token, issuer: configuration.issuer, keys: configuration.keys)
    }

    /// Verifies and records a token (the body Google POSTed). `source`: the sender's address, refusals are counted under it.
    public func receive(token rawToken: String, transport: Transport, source: String? = nil, now: Timestamp) throws -> Receipt {
        let token = rawToken.trimmingCharacters(in: .whitespacesAndNewlines)
        let event: GoogleSecurityEvent
        do { event = try verify(token, now: now) } catch let refusal as GoogleRISCRefusal {
            return try refuse(refusal, transport: transport, source: source, now: now)
        } catch let unavailable as GoogleRISCKeys.Unavailable {
            return Receipt(outcome: .keysUnavailable, id: nil, type: nil, userID: nil,
                           message: unavailable.description + "; nothing was changed (Google delivers it again)")
        }
        return try record(event, fingerprint: SHA256.hex(token), transport: transport, now: now)
    }

    /// Counts a refusal under its reason and source (`RefusalCounter`: one row per pair, however many are forged).
    public func refuse(_ refusal: GoogleRISCRefusal, transport: Transport, source: String?, now: Timestamp) throws -> Receipt {
        _ = try RefusalCounter.google.count(reason: refusal.reason.rawValue, description: refusal.description,
                                            source: RefusalCounter.Source(transport: transport, address: source), in: store.db, now: now)
        return Receipt(outcome: .refused, id: nil, type: nil, userID: nil, message: refusal.description, refusal: refusal.reason, setError: refusal.setError)
    }

    private func existing(_ event: GoogleSecurityEvent) throws -> Row? {
        try store.db.row("SELECT id, user_id, action FROM gatehouse_google_events WHERE jti = ? AND event_type = ?", [event.jti, event.kind.rawValue])
    }

    private func duplicate(_ row: Row, _ event: GoogleSecurityEvent) -> Receipt {
        Receipt(outcome: .duplicate, id: row["id"].int64, type: event.kind.rawValue, userID: row.optionalString("user_id"),
                message: "already recorded as event \(row["id"].int64 ?? 0) (same jti and event type); nothing done again")
    }

    /// The columns an event's account is read with.
    static func accountColumns(_ schema: AuthSchema) -> String {
        let account = schema.account
        return "\(account.col(.id)) AS id, \(account.col(.userId)) AS user_id, \(account.col(.accountId)) AS sub"
    }

    /// The Google account holding the refresh token whose first 16 characters are the one argument: an index range
    /// (`gatehouse_account_refreshToken_prefix_idx`), not a read of every account.
    static func accountByRefreshPrefixSQL(_ schema: AuthSchema) -> String {
        let account = schema.account
        return """
            SELECT \(accountColumns(schema)) FROM \(account.sql) WHERE \(AccountIndexes.refreshTokenPrefix(schema)) = ? AND \(account.col(.providerId)) = 'google'
            ORDER BY \(account.col(.id)) LIMIT 1
            """
    }

    /// The Google account an event is about: by `sub`, or (token-revoked) by the refresh token it names.
    private func account(for event: GoogleSecurityEvent) throws -> Row? {
        let account = store.schema.account
        let columns = Self.accountColumns(store.schema)
        if let sub = event.sub {
            return try store.db.row("""
                SELECT \(columns) FROM \(account.sql) WHERE \(account.col(.providerId)) = 'google' AND \(account.col(.accountId)) = ?
                ORDER BY \(account.col(.id)) LIMIT 1
                """, [sub])
        }
        guard let identifier = event.token else { return nil }
        switch identifier {
        case .prefix(let prefix):
            return try store.db.row(Self.accountByRefreshPrefixSQL(store.schema), [prefix])
        case .doubleSHA512(let hash):
            return try GoogleTokenHashes(store: store).account(hash: hash, columns: columns)
        }
    }

    /// What an undo gives back: the account state as it was, and the tokens cleared.
    struct UndoData: Codable {
        struct State: Codable { let disabled: String?; let disabledAt: String?; let review: String?; let reviewAt: String? }
        struct Tokens: Codable { let accountID: String; let accessToken: String?; let refreshToken: String?; let idToken: String? }
        let sub: String?
        /// Whether the event changed the account's flags; then `state` is what they were (nil: no row).
        let stateChanged: Bool
        let state: State?
        let tokens: [Tokens]
    }

    /// Records a verified event once (by `jti` and type) and acts on it, in one write.
    public func record(_ event: GoogleSecurityEvent, fingerprint: String, transport: Transport, now: Timestamp) throws -> Receipt {
        if let row = try existing(event) { return duplicate(row, event) }
        let found = try account(for: event)
        let masterKey = self.masterKey ?? (try? MasterKey.load(storePath: store.path))
        do {
            return try store.db.write {
                if let row = try existing(event) { return duplicate(row, event) }
                let id = try store.db.nextID(in: "gatehouse_google_events")
                var details: [String: AuditValue] = ["jti": .string(event.jti), "type": .string(event.kind.rawValue), "transport": .string(transport.rawValue)]
                let outcome: String, action: String
                var sessions = 0
                var undo: [UInt8]?
                if event.kind == .verification {
                    outcome = "recorded"
                    action = "verification received (state \(event.state.map { "\"\($0.prefix(60))\"" } ?? "none"))"
                    try store.db.execute("""
                        INSERT INTO gatehouse_google_risc_stream (id, updated_at, verify_state) VALUES (1, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET verify_state = excluded.verify_state
                        """, [now.iso8601, event.state])
                } else if let found, let userID = found.optionalString("user_id") {
                    let result = try act(event, account: found, userID: userID, now: now, key: masterKey, eventID: id)
                    (outcome, action, sessions, undo) = ("acted", result.action, result.sessions, result.undo)
                    details["user_id"] = .string(userID)
                    details["sessions_ended"] = .int(Int64(sessions))
                } else {
                    outcome = "unknown_subject"
                    action = "no Google account matches the subject; nothing changed"
                }
                try store.db.execute("""
                    INSERT INTO gatehouse_google_events (id, received_at, transport, jti, event_type, issued_at, sub, reason, state, user_id, account_id,
                        outcome, action, sessions_ended, undo_data, token_sha256)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [id, now.iso8601, transport.rawValue, event.jti, event.kind.rawValue, event.issuedAt?.iso8601, event.sub ?? found?.optionalString("sub"),
                          event.reason, event.state, found?.optionalString("user_id"), found?.optionalString("id"), outcome, action, sessions,
                          undo.map(SQLValue.blob) ?? .null, fingerprint])
                details["event_id"] = .int(id)
                details["outcome"] = .string(outcome)
                details["action"] = .string(action)
                try store.audit.append(store.db, actor: Self.actor, action: "google.risc.\(event.kind.rawValue)",
                                       subject: found?.optionalString("user_id") ?? event.sub ?? "stream", details: details, at: now)
                return Receipt(outcome: outcome == "unknown_subject" ? .unknownSubject : .accepted, id: id, type: event.kind.rawValue,
                               userID: found?.optionalString("user_id"), message: action)
            }
        } catch let error as SQLFailure where error.isUniqueViolation {
            if let row = try existing(event) { return duplicate(row, event) }
            throw error
        }
    }

    /// Applies one verified event to a known user's Google account; returns what was done, in words, the sessions
    /// ended and what an undo needs (sealed when it holds tokens).
    private func act(_ event: GoogleSecurityEvent, account found: Row, userID: String, now: Timestamp, key: MasterKey?,
                     eventID: Int64) throws -> (action: String, sessions: Int, undo: [UInt8]?) {
        let account = store.schema.account, session = store.schema.session
        let accountID = found.optionalString("id") ?? ""
        let sub = found.optionalString("sub")
        func endSessions() throws -> Int {
            let count = Int(try store.db.scalar("SELECT count(*) FROM \(session.sql) WHERE \(session.col(.userId)) = ?", [userID]).int64 ?? 0)
            try store.db.execute("DELETE FROM \(session.sql) WHERE \(session.col(.userId)) = ?", [userID])
            return count
        }
        func clearTokens(only refresh: Bool) throws -> [UndoData.Tokens] {
            let row = try store.db.row("""
                SELECT \(account.col(.accessToken)) AS access, \(account.col(.refreshToken)) AS refresh, \(account.col(.idToken)) AS id_token
                FROM \(account.sql) WHERE \(account.col(.id)) = ?
                """, [accountID])
            let kept = UndoData.Tokens(accountID: accountID, accessToken: refresh ? nil : row?.optionalString("access"),
                                       refreshToken: row?.optionalString("refresh"), idToken: refresh ? nil : row?.optionalString("id_token"))
            let columns = refresh ? "\(account.col(.refreshToken)) = NULL"
                : "\(account.col(.accessToken)) = NULL, \(account.col(.refreshToken)) = NULL, \(account.col(.idToken)) = NULL"
            try store.db.execute("UPDATE \(account.sql) SET \(columns) WHERE \(account.col(.id)) = ?", [accountID])
            return kept.accessToken == nil && kept.refreshToken == nil && kept.idToken == nil ? [] : [kept]
        }
        let before = try sub.flatMap { try store.db.row("SELECT disabled, disabled_at, review, review_at FROM gatehouse_google_account_state WHERE sub = ?", [$0]) }
        let state = before.map { UndoData.State(disabled: $0.optionalString("disabled"), disabledAt: $0.optionalString("disabled_at"),
                                                review: $0.optionalString("review"), reviewAt: $0.optionalString("review_at")) }
        func setState(_ assignments: String, _ values: [SQLBindable]) throws {
            guard let sub else { return }
            if before == nil {
                try store.db.execute("INSERT INTO gatehouse_google_account_state (sub, updated_at) VALUES (?, ?)", [sub, now.iso8601])
            }
            try store.db.execute("UPDATE gatehouse_google_account_state SET \(assignments), updated_at = ? WHERE sub = ?", values + [now.iso8601, sub])
        }
        var sessions = 0, tokens: [UndoData.Tokens] = [], words: String, changedState = false
        switch event.kind {
        case .sessionsRevoked:
            sessions = try endSessions()
            words = "\(sessions) session(s) ended"
        case .tokensRevoked:
            sessions = try endSessions()
            tokens = try clearTokens(only: false)
            words = "\(sessions) session(s) ended; the Google account's stored tokens cleared"
        case .tokenRevoked:
            tokens = try clearTokens(only: true)
            words = "the Google account's refresh token cleared"
        case .accountDisabled where event.reason == "hijacking":
            sessions = try endSessions()
            tokens = try clearTokens(only: false)
            words = "Google account disabled (hijacking): \(sessions) session(s) ended, its tokens cleared"
        case .accountDisabled where event.reason == "bulk-account":
            try setState("review = ?, review_at = ?", ["bulk-account", now.iso8601])
            changedState = true
            words = "Google account disabled as a bulk account: user flagged for review"
        case .accountDisabled:
            try setState("disabled = ?, disabled_at = ?", [event.reason ?? "unspecified", now.iso8601])
            changedState = true
            words = "Google account disabled: flagged \"Google account disabled\" (policy export lists it for the runtime to refuse Google sign-in)"
        case .accountEnabled:
            try setState("disabled = NULL, disabled_at = NULL", [])
            changedState = true
            words = "Google account enabled again: the disabled flag lifted"
        case .credentialChangeRequired:
            try setState("review = ?, review_at = ?", ["credential-change-required", now.iso8601])
            changedState = true
            words = "credential change required at Google: user flagged for review"
        case .verification:
            words = "verification"
        }
        guard changedState || !tokens.isEmpty else { return (words, sessions, nil) }
        var undo = UndoData(sub: sub, stateChanged: changedState, state: changedState ? state : nil, tokens: tokens)
        var note = ""
        if !tokens.isEmpty && key == nil {
            undo = UndoData(sub: sub, stateChanged: changedState, state: changedState ? state : nil, tokens: [])
            note = " (no master key: an undo cannot give the tokens back)"
        }
        let json = Array(try MergeJSON.string(undo).utf8)
        let box: [UInt8]
        if let key, !undo.tokens.isEmpty {
            box = [1] + (try AESGCM.seal(json, key: key.bytes, associatedData: Self.associatedData(eventID)))
        } else {
            box = [0] + json
        }
        return (words + note, sessions, box)
    }

    static func associatedData(_ eventID: Int64) -> [UInt8] { Array("gatehouse_google_event:\(eventID)".utf8) }

    // MARK: undo

    /// What `undo` did.
    public struct UndoResult: Sendable, Codable {
        public let eventId: Int64
        public let restored: String
        /// Sessions the event ended: never given back.
        public let sessionsNotRestored: Int
    }

    /// Gives back what event `id` changed: the account's flags as they were and the tokens it cleared. Refuses an
    /// event with nothing to give back, one undone before, and one whose account's flags changed since.
    public func undo(id: Int64, reason rawReason: String, actor: Actor, now: Timestamp) throws -> UndoResult {
        let reason = try UserDeletionApplier.validate(reason: rawReason, what: "the event's action is undone")
        guard let row = try store.db.row("SELECT * FROM gatehouse_google_events WHERE id = ?", [id]) else {
            throw GatehouseError.notFound("no Google security event \(id)", fix: "see `gatehouse security events --provider google`")
        }
        if let undone = row.optionalString("undone_at") {
            throw GatehouseError.conflict("Google event \(id)'s action was already undone (\(undone))", fix: "nothing to do")
        }
        guard case .blob(let box)? = Optional(row["undo_data"]), let marker = box.first else {
            let sessions = row["sessions_ended"].int64 ?? 0
            throw GatehouseError.invalid("Google event \(id) changed nothing an undo can give back" + (sessions > 0 ? ": the \(sessions) session(s) it ended cannot be brought back (the person signs in again)" : ""),
                                         fix: "nothing to undo")
        }
        let json: [UInt8]
        if marker == 1 {
            let key = try MasterKey.load(storePath: store.path)
            do { json = try AESGCM.open(Array(box.dropFirst()), key: key.bytes, associatedData: Self.associatedData(id)) } catch {
                throw GatehouseError("Google event \(id)'s undo data cannot be opened with the master key from \(key.source)", fix: "use the master key the store had when the event arrived", code: .unsealFailed)
            }
        } else {
            json = Array(box.dropFirst())
        }
        let data = try MergeJSON.decode(UndoData.self, String(decoding: json, as: UTF8.self), what: "undo data of Google event \(id)")
        let account = store.schema.account
        var restored: [String] = []
        try store.change(actor: actor, action: "google.risc.undo", subject: row.optionalString("user_id") ?? "?", details: [
            "event_id": .int(id), "jti": .string(row.optionalString("jti") ?? ""), "reason": .string(reason),
        ]) {
            if let sub = data.sub, data.stateChanged {
                // The flags as they were before this event are the right ones only if no later event changed them since.
                if let later = try store.db.row("""
                    SELECT id FROM gatehouse_google_events WHERE sub = ? AND id > ? AND undone_at IS NULL AND outcome = 'acted'
                      AND event_type IN ('account-disabled', 'account-enabled', 'account-credential-change-required')
                      AND NOT (event_type = 'account-disabled' AND coalesce(reason, '') = 'hijacking') ORDER BY id LIMIT 1
                    """, [sub, id]), let laterID = later["id"].int64 {
                    throw GatehouseError.conflict("Google account \(sub)'s flags were changed again by event \(laterID) after event \(id); nothing was changed",
                                                  fix: "undo the later events first (google:\(laterID); `gatehouse security events --provider google`)")
                }
                if let state = data.state {
                    try store.db.execute("UPDATE gatehouse_google_account_state SET disabled = ?, disabled_at = ?, review = ?, review_at = ?, updated_at = ? WHERE sub = ?",
                                         [state.disabled, state.disabledAt, state.review, state.reviewAt, now.iso8601, sub])
                } else {
                    try store.db.execute("DELETE FROM gatehouse_google_account_state WHERE sub = ?", [sub])
                }
                restored.append("the account's flags")
            }
            for tokens in data.tokens {
                var assignments: [String] = [], values: [SQLBindable] = []
                if let access = tokens.accessToken { assignments.append("\(account.col(.accessToken)) = ?"); values.append(access) }
                if let refresh = tokens.refreshToken { assignments.append("\(account.col(.refreshToken)) = ?"); values.append(refresh) }
                if let idToken = tokens.idToken { assignments.append("\(account.col(.idToken)) = ?"); values.append(idToken) }
                guard !assignments.isEmpty else { continue }
                try store.db.execute("UPDATE \(account.sql) SET \(assignments.joined(separator: ", ")) WHERE \(account.col(.id)) = ?", values + [tokens.accountID])
                restored.append("the Google account's tokens")
            }
            try store.db.execute("UPDATE gatehouse_google_events SET undone_at = ?, undone_by = ?, undo_reason = ?, undo_data = NULL WHERE id = ?",
                                 [now.iso8601, actor.name, reason, id])
        }
        return UndoResult(eventId: id, restored: restored.isEmpty ? "nothing" : restored.joined(separator: " and "),
                          sessionsNotRestored: Int(row["sessions_ended"].int64 ?? 0))
    }
}
