import Foundation
import JOSE
import Storage

/// A transfer plan as listed: its counts, and the straggler pairs it hands to `merge plan`.
public struct AppleTransferPlanSummary: Sendable, Codable, Equatable {
    public let planId: String
    /// `planned`, `applying` (a batched apply was cut off: apply it again to finish), `applied`, `undone`, `superseded`.
    public let status: String
    public let createdAt: String
    public let createdBy: String
    /// Accounts whose `accountId` becomes the new sub.
    public let rewrites: Int
    /// Of those, users whose relay address becomes the new relay address.
    public let emailRewrites: Int
    /// Accounts left as they are because Better Auth already made a new user for the new sub (or its relay address).
    public let stragglers: Int
    /// Accounts already on the new sub, or changed or gone since the exchange: left as they are.
    public let unchanged: Int
    /// Accounts of the transfer with no new sub (not exchanged, or refused): left as they are.
    public let notExchanged: Int
    /// The straggler pairs (at most `AppleTransferPlanner.listedStragglers`), each with the merge that joins them.
    public let stragglerPairs: [StragglerPair]
    public let ticket: String?
    public let appliedAt: String?
    public let undoneAt: String?

    public struct StragglerPair: Sendable, Codable, Equatable {
        /// The user the transfer's account belongs to: the one with the person's data.
        public let userId: String
        public let accountId: String
        /// The user Better Auth made when the person signed in with the new sub during the window.
        public let newUserId: String
        /// Why: `sub` (an account already has the new sub) or `email` (a user already has the new relay address).
        public let reason: String
        /// The merge that joins them: the new user into the old one, keeping the new user's Apple account, and its
        /// email when that is the new relay address that replaces the old user's (as a rewrite would have).
        public let mergeCommand: String
        /// `source` when the merge keeps the new user's email (`--keep-email source`); nil when U1 keeps its own.
        public let keepEmail: String?
    }
}

/// Plans the rewrite of a transfer: each exchanged Apple account's `accountId` becomes the new sub (the issuer stays
/// Apple's), and a Hide My Email user's email becomes the new relay address where it is still the old relay address.
/// Nothing else is touched: sessions, other providers' accounts and the sync server's rows are keyed by Better
/// Auth's user id, which does not change. A **straggler** — a person who signed in during the window, for whom
/// Better Auth already made a new user with the new sub or relay address — is not rewritten over (that would break a
/// unique index or split the person further): the plan names the pair and the `merge plan` that joins them.
///
/// The plan is stored on the transfer's rows (`plan_id`, `plan_action`, the emails) and as a summary; `--out`
/// writes it whole as JSON (personal data: the file is the operator's, mode 0600).
public struct AppleTransferPlanner {
    public let store: Store
    public static let listedStragglers = 1_000
    /// Accounts read per question (within every engine's limit on bound values).
    static let readChunk = 90

    public init(store: Store) { self.store = store }

    /// The latest plan of `transfer`, if any.
    public func latestPlan(_ transfer: AppleTransfer) throws -> AppleTransferPlanSummary? {
        try store.db.row("SELECT * FROM gatehouse_apple_transfer_plans WHERE transfer_id = ? ORDER BY created_at DESC, id DESC LIMIT 1", [transfer.id]).map(Self.summary)
    }

    /// The plan `planID`; `notFound` naming `apple transfer plan` when there is none.
    public func plan(_ planID: String) throws -> (AppleTransferPlanSummary, transferID: Int64) {
        guard planID.count <= 80, let row = try store.db.row("SELECT * FROM gatehouse_apple_transfer_plans WHERE id = ?", [planID]) else {
            throw GatehouseError.notFound("no transfer plan \"\(OperatorText.visible(String(planID.prefix(40))))\"",
                                          fix: "make one with `gatehouse apple transfer plan`; it prints the plan id")
        }
        return (try Self.summary(row), row["transfer_id"].int64 ?? 0)
    }

    static func summary(_ row: Row) throws -> AppleTransferPlanSummary {
        struct Stored: Codable {
            let rewrites: Int, emailRewrites: Int, stragglers: Int, unchanged: Int, notExchanged: Int
            let stragglerPairs: [AppleTransferPlanSummary.StragglerPair]
        }
        let stored = try MergeJSON.decode(Stored.self, try row.string("summary_json"), what: "transfer plan \(row.optionalString("id") ?? "?")")
        return AppleTransferPlanSummary(planId: try row.string("id"), status: try row.string("status"), createdAt: try row.string("created_at"),
                                        createdBy: try row.string("created_by"), rewrites: stored.rewrites, emailRewrites: stored.emailRewrites,
                                        stragglers: stored.stragglers, unchanged: stored.unchanged, notExchanged: stored.notExchanged,
                                        stragglerPairs: stored.stragglerPairs, ticket: row.optionalString("ticket"),
                                        appliedAt: row.optionalString("applied_at"), undoneAt: row.optionalString("undone_at"))
    }

    /// One planned account, as `--out` writes it.
    public struct Entry: Sendable, Codable {
        public let accountId: String
        public let userId: String
        public let action: String
        public let oldSub: String
        public let newSub: String
        public let oldEmail: String?
        public let newEmail: String?
        public let newUserId: String?
    }

    /// The exchanged accounts not yet rewritten, as the transfer's rows hold them.
    struct Exchanged {
        let accountID: String, userID: String, oldSub: String, newSub: String, newEmail: String?, isPrivate: Bool
    }

    /// Plans the rewrite of every exchanged account not yet rewritten; an earlier plan not applied is superseded.
    public func plan(actor: Actor, now: Timestamp = .now(), entries: ((Entry) -> Void)? = nil) throws -> AppleTransferPlanSummary {
        let transfer = try AppleTransferStore(store: store).required()
        if let latest = try latestPlan(transfer), latest.status == "applying" {
            throw GatehouseError.conflict("plan \(latest.planId) was cut off part-way through its apply",
                                          fix: "finish it with `gatehouse apple transfer apply \(latest.planId) --ticket \(latest.ticket ?? "REF") --yes`, or undo what it applied with `gatehouse apple transfer undo \(latest.planId) --reason R`")
        }
        let notExchanged = Int(try store.db.scalar("SELECT count(*) FROM gatehouse_apple_transfer_accounts WHERE transfer_id = ? AND new_sub IS NULL", [transfer.id]).int64 ?? 0)
        let planID = "tp_" + String(SHA256.hex("\(transfer.id)|\(now.milliseconds)|\(UUID().uuidString)").prefix(24))
        let check = AppleTransferCheck(store: store)
        let pageRows = min(store.engine.rowsPerWrite ?? AppleTransferApplier.pageRows, AppleTransferApplier.pageRows)
        var rewrites = 0, emailRewrites = 0, stragglers = 0, unchanged = 0
        var pairs: [AppleTransferPlanSummary.StragglerPair] = []
        let markSQL = """
            UPDATE gatehouse_apple_transfer_accounts SET plan_id = ?, plan_action = ?, plan_old_email = ?, plan_new_email = ?, straggler_user_id = ?
            WHERE transfer_id = ? AND account_id = ?
            """
        // Page by page, each page's decisions written before the next is read: a plan of a million accounts holds one
        // page in memory. The plan exists once its record is written, last; apply checks that its rows are still its own.
        var after = ""
        while true {
            let page = try store.db.rows("""
                SELECT account_id, user_id, old_sub, new_sub, new_email, is_private_email FROM gatehouse_apple_transfer_accounts
                WHERE transfer_id = ? AND new_sub IS NOT NULL AND applied_plan IS NULL AND account_id > ? ORDER BY account_id LIMIT \(pageRows)
                """, [transfer.id, after]).compactMap { row -> Exchanged? in
                guard let account = row.optionalString("account_id"), let user = row.optionalString("user_id"), let old = row.optionalString("old_sub"),
                      let new = row.optionalString("new_sub") else { return nil }
                return Exchanged(accountID: account, userID: user, oldSub: old, newSub: new, newEmail: row.optionalString("new_email"),
                                 isPrivate: row["is_private_email"].int64 == 1)
            }
            guard let last = page.last else { break }
            after = last.accountID
            var statements: [SQLStatement] = []
            statements.reserveCapacity(page.count)
            for chunk in page.chunked(by: Self.readChunk) {
                for (row, decision) in zip(chunk, try check.decide(Array(chunk))) {
                    let action: String, oldEmail: String?, newEmail: String?, newUser: String?
                    switch decision {
                    case .rewrite(let from, let to):
                        (action, oldEmail, newEmail, newUser) = ("rewrite", from, to, nil)
                        rewrites += 1
                        if to != nil { emailRewrites += 1 }
                    case .straggler(let user, let reason, let takesEmail):
                        (action, oldEmail, newEmail, newUser) = ("straggler", nil, nil, user)
                        stragglers += 1
                        if pairs.count < Self.listedStragglers {
                            pairs.append(.init(userId: row.userID, accountId: row.accountID, newUserId: user, reason: reason,
                                               mergeCommand: "gatehouse merge plan --from \(user) --into \(row.userID) --same-provider source" + (takesEmail ? " --keep-email source" : ""),
                                               keepEmail: takesEmail ? "source" : nil))
                        }
                    case .unchanged:
                        (action, oldEmail, newEmail, newUser) = ("unchanged", nil, nil, nil)
                        unchanged += 1
                    }
                    entries?(Entry(accountId: row.accountID, userId: row.userID, action: action, oldSub: row.oldSub, newSub: row.newSub,
                                   oldEmail: oldEmail, newEmail: newEmail, newUserId: newUser))
                    statements.append(SQLStatement(markSQL, [planID, action, oldEmail.map(SQLValue.text) ?? .null, newEmail.map(SQLValue.text) ?? .null,
                                                             newUser.map(SQLValue.text) ?? .null, transfer.id, row.accountID]))
                }
            }
            try store.db.write { _ = try store.db.batch(statements) }
            if page.count < pageRows { break }
        }
        struct Stored: Codable {
            let rewrites: Int, emailRewrites: Int, stragglers: Int, unchanged: Int, notExchanged: Int
            let stragglerPairs: [AppleTransferPlanSummary.StragglerPair]
        }
        let summary = try MergeJSON.string(Stored(rewrites: rewrites, emailRewrites: emailRewrites, stragglers: stragglers, unchanged: unchanged,
                                                  notExchanged: notExchanged, stragglerPairs: pairs))
        try store.change(actor: actor, action: "apple.transfer.plan", subject: planID, details: [
            "transfer_id": .int(transfer.id), "rewrites": .int(Int64(rewrites)), "email_rewrites": .int(Int64(emailRewrites)),
            "stragglers": .int(Int64(stragglers)), "unchanged": .int(Int64(unchanged)), "not_exchanged": .int(Int64(notExchanged)),
        ]) {
            try store.db.execute("UPDATE gatehouse_apple_transfer_plans SET status = 'superseded' WHERE transfer_id = ? AND status = 'planned'", [transfer.id])
            try store.db.execute("""
                INSERT INTO gatehouse_apple_transfer_plans (id, transfer_id, status, created_at, created_by, summary_json) VALUES (?, ?, 'planned', ?, ?, ?)
                """, [planID, transfer.id, now.iso8601, actor.name, summary])
        }
        return try plan(planID).0
    }
}

/// What the store says of planned rows now: the plan's decisions, and the checks apply and undo make.
struct AppleTransferCheck {
    let store: Store

    enum Decision: Equatable {
        /// Rewrite the account to the new sub; the user's email from the first to the second when both are set.
        case rewrite(oldEmail: String?, newEmail: String?)
        /// Another user already holds the new sub or relay address; `takesEmail` when that user's email is the new
        /// relay address and this user's the old one, so the merge keeps the new user's email.
        case straggler(userID: String, reason: String, takesEmail: Bool)
        /// Already on the new sub, or changed or gone since the exchange.
        case unchanged
    }

    static let relayDomain = "@privaterelay.appleid.com"

    /// The account rows `ids`: `accountId`, `userId`, `updatedAt`, by account id.
    func accounts(_ ids: [String]) throws -> [String: Row] {
        let account = store.schema.account
        guard !ids.isEmpty else { return [:] }
        let updated = account.has(.updatedAt) ? account.col(.updatedAt) : "NULL"
        let rows = try store.db.rows("""
            SELECT \(account.col(.id)) AS id, \(account.col(.accountId)) AS sub, \(account.col(.userId)) AS user_id, \(updated) AS updated_at
            FROM \(account.sql) WHERE \(account.col(.id)) IN (\(marks(ids.count)))
            """, ids)
        return Dictionary(rows.compactMap { row in row.optionalString("id").map { ($0, row) } }, uniquingKeysWith: { first, _ in first })
    }

    /// Who holds each of `subs` as an Apple account: sub → user id.
    func subHolders(_ subs: [String]) throws -> [String: String] {
        let account = store.schema.account
        guard !subs.isEmpty else { return [:] }
        let rows = try store.db.rows("""
            SELECT \(account.col(.accountId)) AS sub, \(account.col(.userId)) AS user_id FROM \(account.sql)
            WHERE \(account.col(.providerId)) = 'apple' AND \(account.col(.accountId)) IN (\(marks(subs.count)))
            """, subs)
        return Dictionary(rows.compactMap { row in row.optionalString("sub").flatMap { sub in row.optionalString("user_id").map { (sub, $0) } } },
                          uniquingKeysWith: { first, _ in first })
    }

    /// The users `ids`: email and `updatedAt`, by id.
    func users(_ ids: [String]) throws -> [String: String] {
        let user = store.schema.user
        guard !ids.isEmpty else { return [:] }
        let unique = Array(Set(ids))
        let rows = try store.db.rows("SELECT \(user.col(.id)) AS id, \(user.col(.email)) AS email FROM \(user.sql) WHERE \(user.col(.id)) IN (\(marks(unique.count)))", unique)
        return Dictionary(rows.compactMap { row in row.optionalString("id").flatMap { id in row.optionalString("email").map { (id, $0) } } },
                          uniquingKeysWith: { first, _ in first })
    }

    /// Who holds each of `emails` (exactly, or in lower case): email (lower case) → user id.
    func emailHolders(_ emails: [String]) throws -> [String: String] {
        let user = store.schema.user
        let wanted = Array(Set(emails.flatMap { [$0, $0.lowercased()] }))
        guard !wanted.isEmpty else { return [:] }
        let rows = try store.db.rows("SELECT \(user.col(.id)) AS id, \(user.col(.email)) AS email FROM \(user.sql) WHERE \(user.col(.email)) IN (\(marks(wanted.count)))", wanted)
        return Dictionary(rows.compactMap { row in row.optionalString("email").flatMap { email in row.optionalString("id").map { (email.lowercased(), $0) } } },
                          uniquingKeysWith: { first, _ in first })
    }

    func marks(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ", ") }

    /// The plan's decision for each row (at most `AppleTransferPlanner.readChunk` rows).
    func decide(_ rows: [AppleTransferPlanner.Exchanged]) throws -> [Decision] {
        let current = try accounts(rows.map(\.accountID))
        let holders = try subHolders(rows.map(\.newSub))
        let emails = try users(rows.map(\.userID))
        // The old and new relay addresses when the user's email moves: a Hide My Email user whose email is still a
        // relay address, other than the new one.
        func relayMove(_ row: AppleTransferPlanner.Exchanged) -> (old: String, new: String)? {
            guard row.isPrivate, let new = row.newEmail, let old = emails[row.userID], old.lowercased().hasSuffix(Self.relayDomain),
                  old.lowercased() != new.lowercased() else { return nil }
            return (old, new)
        }
        let emailOwners = try emailHolders(rows.compactMap { relayMove($0)?.new })
        return rows.map { row in
            guard let account = current[row.accountID], account.optionalString("user_id") == row.userID else { return .unchanged }
            if let holder = holders[row.newSub] {
                guard holder != row.userID else { return .unchanged }
                let takesEmail = relayMove(row).map { emailOwners[$0.new.lowercased()] == holder } ?? false
                return .straggler(userID: holder, reason: "sub", takesEmail: takesEmail)
            }
            guard account.optionalString("sub") == row.oldSub else { return .unchanged }
            guard let move = relayMove(row) else { return .rewrite(oldEmail: nil, newEmail: nil) }
            if let owner = emailOwners[move.new.lowercased()], owner != row.userID { return .straggler(userID: owner, reason: "email", takesEmail: true) }
            return .rewrite(oldEmail: move.old, newEmail: move.new)
        }
    }
}
