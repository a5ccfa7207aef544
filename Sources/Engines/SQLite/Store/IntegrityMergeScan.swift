import Gatehouse
import Storage

/// The link checks of `accounts check` as merges over sorted columns.
///
/// `user.id`, `account.userId`, `session.userId` and the sync `users.sub` all have an index, so each can be
/// read once in order. Walking the user ids and advancing the other cursors alongside finds, in one pass over
/// each index, every account whose user is missing, every user with no account, and (because `better_auth|`
/// is a common prefix, the subs that carry it sort like the ids they name) every sync sub naming a missing user
/// and every unprovisioned user; a second walk of the user ids against `session.userId` finds the sessions of
/// missing users. The per-row anti-joins this replaces each cost a B-tree probe per row.
///
/// Both walks throw `IndexOrderUnavailable` when a column is not in byte order or holds non-text keys; the
/// caller then runs the SQL anti-joins instead.
struct IntegrityMergeScan {
    let db: SQLDatabase
    let schema: AuthSchema
    let sampleLimit: Int

    /// `account_user_missing` and `user_without_accounts`; with the sync table, `sync_sub_malformed`,
    /// `sync_sub_user_missing` and `user_unprovisioned`, each unprovisioned user id also given to `unprovisionedUser`.
    func accountsAndSubs(withSync: Bool, unprovisionedUser: (String) throws -> Void = { _ in }) throws -> [String: IntegrityTally] {
        let account = schema.account
        let prefixLength = SyncSub.prefix.utf8.count
        var accountMissing = IntegrityTally(limit: sampleLimit), withoutAccounts = IntegrityTally(limit: sampleLimit)
        var malformed = IntegrityTally(limit: sampleLimit), subMissing = IntegrityTally(limit: sampleLimit)
        var unprovisioned = IntegrityTally(limit: sampleLimit)

        let users = try userIDs()
        let accounts = try IndexOrderCursor(db, "SELECT \(account.col(.userId)), rowid FROM \(account.sql) ORDER BY 1", unique: false)
        let subs = withSync ? try IndexOrderCursor(db, "SELECT sub, id FROM users ORDER BY 1", unique: true) : nil

        /// Moves `subs` to the next well-formed `better_auth|<id>` sub, counting the malformed ones it passes.
        func nextWellFormedSub() throws {
            guard let subs else { return }
            while !subs.isDone {
                if subs.isNull { try subs.advance(); continue } // a NULL sub is neither malformed nor provisioned
                if Self.isWellFormed(subs.keyBytes) { return }
                malformed.add([subs.extra, .text(subs.key!)])
                try subs.advance()
            }
        }

        try nextWellFormedSub()
        while !users.isDone {
            // A NULL primary key (SQLite allows it outside INTEGER PRIMARY KEY) matches nothing, as in SQL.
            guard !users.isNull else {
                withoutAccounts.add([.null])
                if withSync { unprovisioned.add([.null]) }
                try users.advance()
                continue
            }
            if try !Self.pass(accounts, to: users, missing: &accountMissing) { withoutAccounts.add([.text(users.key!)]) }
            if let subs {
                var matched = false
                while !subs.isDone {
                    let order = ByteOrder.compare(subs.keyBytes, from: prefixLength, users.keyBytes)
                    if order > 0 { break }
                    if order < 0 { subMissing.add([subs.extra, .text(subs.key!)]) } else { matched = true }
                    try subs.advance()
                    try nextWellFormedSub()
                    if matched { break }
                }
                if !matched {
                    let id = users.key!
                    unprovisioned.add([.text(id)])
                    try unprovisionedUser(id)
                }
            }
            try users.advance()
        }
        _ = try Self.pass(accounts, to: nil, missing: &accountMissing)
        while let subs, !subs.isDone {
            subMissing.add([subs.extra, .text(subs.key!)])
            try subs.advance()
            try nextWellFormedSub()
        }

        var tallies = ["account_user_missing": accountMissing, "user_without_accounts": withoutAccounts]
        if withSync {
            tallies["sync_sub_malformed"] = malformed
            tallies["sync_sub_user_missing"] = subMissing
            tallies["user_unprovisioned"] = unprovisioned
        }
        return tallies
    }

    /// One window of health's account-links walk: from the user id `start` (nil: the first), dangling accounts and
    /// unprovisioned users, until `shouldStop` says so (asked every `stride` users) or the last user. Returns the
    /// counts and the user id the next window starts at (nil when this one reached the end). Windows do not overlap:
    /// an account row is counted in the window its user id falls in, the NULL ones in the first.
    func accountLinksWindow(from start: String?, stride: Int = 1024, shouldStop: () -> Bool,
                            unprovisionedUser: (String) throws -> Void) throws -> (dangling: Int, unprovisioned: Int, users: Int, next: String?) {
        let user = schema.user, account = schema.account
        let from = start.map { [SQLValue.text($0)] } ?? []
        let users = try IndexOrderCursor(db, "SELECT \(user.col(.id)) FROM \(user.sql)\(start == nil ? "" : " WHERE \(user.col(.id)) >= ?") ORDER BY 1",
                                         from, unique: true)
        let accounts = try IndexOrderCursor(db, "SELECT \(account.col(.userId)), rowid FROM \(account.sql)"
                                            + (start == nil ? "" : " WHERE \(account.col(.userId)) >= ?") + " ORDER BY 1", from, unique: false)
        // Only subs that carry the prefix can name a user; `}` follows `|`, so this is every one of them from `start` on.
        let subs = try IndexOrderCursor(db, "SELECT sub FROM users WHERE sub >= ? AND sub < ? ORDER BY 1",
                                        [.text(SyncSub.prefix + (start ?? "")), .text(String(SyncSub.prefix.dropLast()) + "}")], unique: true)
        let prefixLength = SyncSub.prefix.utf8.count
        var dangling = IntegrityTally(limit: 0)
        var unprovisioned = 0, walked = 0
        while !users.isDone {
            if users.isNull {
                unprovisioned += 1
                try users.advance()
                continue
            }
            if walked > 0, walked % stride == 0, shouldStop() {
                // Accounts of ids before the next window's first user belong to this window.
                while !accounts.isDone, accounts.isNull || ByteOrder.compare(accounts.keyBytes, users.keyBytes) < 0 {
                    dangling.add([])
                    try accounts.advance()
                }
                return (dangling.count, unprovisioned, walked, users.key)
            }
            _ = try Self.pass(accounts, to: users, missing: &dangling)
            var matched = false
            while !subs.isDone {
                let order = ByteOrder.compare(subs.keyBytes, from: prefixLength, users.keyBytes)
                if order > 0 { break }
                try subs.advance()
                if order == 0 { matched = true; break }
            }
            if !matched {
                unprovisioned += 1
                try unprovisionedUser(users.key!)
            }
            walked += 1
            try users.advance()
        }
        _ = try Self.pass(accounts, to: nil, missing: &dangling)
        return (dangling.count, unprovisioned, walked, nil)
    }

    /// `session_user_missing`.
    func sessions() throws -> [String: IntegrityTally] {
        let session = schema.session
        var sessionMissing = IntegrityTally(limit: sampleLimit)
        let users = try userIDs()
        let sessions = try IndexOrderCursor(db, "SELECT \(session.col(.userId)), rowid FROM \(session.sql) ORDER BY 1", unique: false)
        while !users.isDone {
            if !users.isNull { _ = try Self.pass(sessions, to: users, missing: &sessionMissing) }
            try users.advance()
        }
        _ = try Self.pass(sessions, to: nil, missing: &sessionMissing)
        return ["session_user_missing": sessionMissing]
    }

    private func userIDs() throws -> IndexOrderCursor {
        try IndexOrderCursor(db, "SELECT \(schema.user.col(.id)) FROM \(schema.user.sql) ORDER BY 1", unique: true)
    }

    /// Advances `cursor` (rows of a table pointing at users) past the user `users` is at: rows before it (or
    /// NULL) are tallied as pointing at a missing user, rows at it are passed; returns whether there were any.
    /// A nil `users` means past the last user.
    private static func pass(_ cursor: IndexOrderCursor, to users: IndexOrderCursor?, missing: inout IntegrityTally) throws -> Bool {
        while !cursor.isDone {
            let order = cursor.isNull ? -1 : users.map { ByteOrder.compare(cursor.keyBytes, $0.keyBytes) } ?? -1
            if order > 0 { return false }
            if order < 0 {
                missing.add([cursor.extra, cursor.key.map(SQLValue.text) ?? .null])
                try cursor.advance()
                continue
            }
            repeat { try cursor.advance() } while !cursor.isDone && cursor.repeatsKey
            return true
        }
        return false
    }

    /// `better_auth|` followed by at least one character, as the SQL check reads it: `length()` stops at a NUL,
    /// so a NUL right after the prefix leaves the sub at the prefix's length, which is malformed.
    static func isWellFormed(_ bytes: [UInt8]) -> Bool {
        let prefix = SyncSub.prefixBytes
        guard bytes.count > prefix.count else { return false }
        for offset in 0..<prefix.count where bytes[offset] != prefix[offset] { return false }
        return bytes[prefix.count] != 0
    }
}

extension SyncSub {
    /// `prefix` as UTF-8.
    static let prefixBytes = Array(prefix.utf8)
}
