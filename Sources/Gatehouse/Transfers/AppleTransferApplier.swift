import Foundation
import Storage

/// Applies a transfer plan, and undoes it.
///
/// **Apply** rewrites each planned account's `accountId` to the new sub (and the user's email to the new relay
/// address where planned), setting `updatedAt`, after checking in the same write that every row is still as planned:
/// the account on the old sub and of the same user, no account on the new sub, the user's email still the old one, no
/// user on the new address. On an engine whose transaction takes any number of rows it is **one write**: all or
/// nothing. On one that writes in requests of a bounded size (D1, `StoreEngine.rowsPerWrite`) it is one guarded write
/// per batch, each marking its rows applied, so a cut-off apply is finished by running it again.
///
/// **Undo** writes the old values back while nothing has touched the rows since: each account still on the new sub
/// with the `updatedAt` the apply wrote (Better Auth sets it when the person signs in), each email still the new one.
/// It refuses, changing nothing, when any row was touched.
public struct AppleTransferApplier {
    public let store: Store

    public init(store: Store) { self.store = store }

    /// What an apply or undo did.
    public struct Result: Sendable, Codable {
        public let planId: String
        public let status: String
        public let accounts: Int
        public let emails: Int
        public let writes: Int
        public let ticket: String?
    }

    struct Planned {
        let accountID: String, userID: String, oldSub: String, newSub: String, oldEmail: String?, newEmail: String?
    }

    /// Rows read and written per page: within one transaction on an engine that takes any number, each page its own
    /// guarded write on one that does not (`StoreEngine.rowsPerWrite`). Pages keep the memory of a million-account
    /// apply small.
    static let pageRows = 2_000

    /// The next page of the plan's rewrites after `after` (account id order), not yet applied (`applied` false) or
    /// applied by it (`applied` true).
    private func page(_ planID: String, transferID: Int64, applied: Bool, after: String, limit: Int) throws -> [Planned] {
        let condition = applied ? "applied_plan = ?" : "plan_id = ? AND plan_action = 'rewrite' AND applied_plan IS NULL"
        return try store.db.rows("""
            SELECT account_id, user_id, old_sub, new_sub, plan_old_email, plan_new_email FROM gatehouse_apple_transfer_accounts
            WHERE transfer_id = ? AND \(condition) AND account_id > ? ORDER BY account_id LIMIT \(limit)
            """, [transferID, planID, after]).compactMap { row in
            guard let account = row.optionalString("account_id"), let user = row.optionalString("user_id"), let old = row.optionalString("old_sub"),
                  let new = row.optionalString("new_sub") else { return nil }
            return Planned(accountID: account, userID: user, oldSub: old, newSub: new, oldEmail: row.optionalString("plan_old_email"),
                           newEmail: row.optionalString("plan_new_email"))
        }
    }

    /// Runs `body` on every page of the plan's rows, then `finish`: all in one write where the engine's transaction
    /// takes any number of rows, else each page in a write of its own and `finish` in the last. Returns the rows and
    /// the writes. Where pages are writes of their own, every page is checked first, read-only, so that a plan gone
    /// stale changes nothing.
    private func paged(_ planID: String, transferID: Int64, applied: Bool, appliedAt: Timestamp?, firstDone: String, laterDone: String,
                       body: ([Planned], String) throws -> Void, finish: (_ rows: Int, _ emails: Int) throws -> Void) throws -> (rows: Int, emails: Int, writes: Int) {
        let perWrite = store.engine.rowsPerWrite
        let size = min(perWrite ?? Self.pageRows, Self.pageRows)
        var rows = 0, emails = 0, writes = 0
        func walk(_ each: ([Planned]) throws -> Void) throws {
            var after = ""
            while true {
                let page = try self.page(planID, transferID: transferID, applied: applied, after: after, limit: size)
                guard let last = page.last else { return }
                try each(page)
                after = last.accountID
                if page.count < size { return }
            }
        }
        guard perWrite != nil else {
            try store.db.write {
                try walk { page in
                    try body(page, firstDone)
                    rows += page.count
                    emails += page.filter { $0.newEmail != nil }.count
                }
                try finish(rows, emails)
            }
            return (rows, emails, 1)
        }
        try walk { page in try verify(page, applied: applied, planID: planID, appliedAt: appliedAt, done: firstDone) }
        var pending: [Planned]? = nil
        // Each page is written once the next is known, so the last page's write also carries `finish`.
        try walk { page in
            if let previous = pending {
                try store.db.write { try body(previous, writes == 0 ? firstDone : laterDone) }
                writes += 1
                rows += previous.count
                emails += previous.filter { $0.newEmail != nil }.count
            }
            pending = page
        }
        rows += pending?.count ?? 0
        emails += pending?.filter { $0.newEmail != nil }.count ?? 0
        try store.db.write {
            if let last = pending { try body(last, writes == 0 ? firstDone : laterDone) }
            try finish(rows, emails)
        }
        return (rows, emails, writes + 1)
    }

    /// Applies plan `planID` (or finishes a cut-off apply of it).
    public func apply(planID: String, ticket rawTicket: String, actor: Actor, now: Timestamp = .now()) throws -> Result {
        let ticket = try MergeApplier.validate(ticket: rawTicket)
        let (plan, transferID) = try AppleTransferPlanner(store: store).plan(planID)
        switch plan.status {
        case "planned", "applying": break
        case "applied": throw GatehouseError.conflict("transfer plan \(planID) is already applied (\(plan.appliedAt ?? "?"))", fix: "see `gatehouse apple transfer status`")
        case "superseded": throw GatehouseError.conflict("transfer plan \(planID) was superseded by a newer plan", fix: "apply the latest plan (`gatehouse apple transfer status` names it)")
        default: throw GatehouseError.conflict("transfer plan \(planID) was undone; an undone plan is spent", fix: "run `gatehouse apple transfer plan` again and apply the new plan id")
        }
        // A plan whose rows a later plan began to overwrite (and did not finish) is not the plan that was reviewed.
        let planned = Int(try store.db.scalar("SELECT count(*) FROM gatehouse_apple_transfer_accounts WHERE transfer_id = ? AND plan_id = ? AND plan_action = 'rewrite'",
                                              [transferID, planID]).int64 ?? 0)
        guard planned == plan.rewrites else {
            throw GatehouseError.conflict("transfer plan \(planID) names \(plan.rewrites) rewrite(s), but \(planned) of the transfer's rows are still its own (a later plan was started over it); nothing was changed",
                                          fix: "run `gatehouse apple transfer plan` again, review it, and apply the new plan id")
        }
        let writes = RowWrites(store: store, planID: planID, transferID: transferID, now: now)
        let counted = try paged(planID, transferID: transferID, applied: false, appliedAt: nil, firstDone: plan.status == "planned" ? "nothing was changed" : "the batches written before stay applied",
                            laterDone: "the batches written before stay applied: run the same apply again after a new plan, or undo") { page, done in
            try verify(page, applied: false, planID: planID, appliedAt: nil, done: done)
            _ = try store.db.checkedBatch(writes.statements(page, applying: true, done: done))
            try store.db.execute("UPDATE gatehouse_apple_transfer_plans SET status = 'applying', ticket = ?, applied_at = ?, applied_by = ? WHERE id = ?",
                                 [ticket, now.iso8601, actor.name, planID])
        } finish: { rows, emails in
            try store.db.execute("UPDATE gatehouse_apple_transfer_plans SET status = 'applied', ticket = ?, applied_at = ?, applied_by = ? WHERE id = ?",
                                 [ticket, now.iso8601, actor.name, planID])
            try store.audit.append(store.db, actor: actor, action: "apple.transfer.apply", subject: planID, details: [
                "transfer_id": .int(transferID), "ticket": .string(ticket), "accounts": .int(Int64(rows)), "emails": .int(Int64(emails)),
            ], at: now)
        }
        return Result(planId: planID, status: "applied", accounts: counted.rows, emails: counted.emails, writes: counted.writes, ticket: ticket)
    }

    /// Undoes plan `planID` (applied, or cut off part-way), refusing when any rewritten row was touched since.
    public func undo(planID: String, reason rawReason: String, actor: Actor, now: Timestamp = .now()) throws -> Result {
        let reason = try UserDeletionApplier.validate(reason: rawReason, what: "the transfer plan is undone")
        let (plan, transferID) = try AppleTransferPlanner(store: store).plan(planID)
        guard plan.status == "applied" || plan.status == "applying", let appliedAt = plan.appliedAt.flatMap(Timestamp.init(iso8601:)) else {
            throw GatehouseError.conflict("transfer plan \(planID) is \(plan.status): only an applied plan is undone", fix: "see `gatehouse apple transfer status`")
        }
        let writes = RowWrites(store: store, planID: planID, transferID: transferID, now: now)
        let counted = try paged(planID, transferID: transferID, applied: true, appliedAt: appliedAt, firstDone: "nothing was changed",
                            laterDone: "the batches undone before stay undone: run the undo again") { page, done in
            try verify(page, applied: true, planID: planID, appliedAt: appliedAt, done: done)
            _ = try store.db.checkedBatch(writes.statements(page, applying: false, done: done))
        } finish: { rows, _ in
            try store.db.execute("UPDATE gatehouse_apple_transfer_plans SET status = 'undone', undone_at = ?, undone_by = ?, undo_reason = ? WHERE id = ?",
                                 [now.iso8601, actor.name, reason, planID])
            try store.audit.append(store.db, actor: actor, action: "apple.transfer.undo", subject: planID, details: [
                "transfer_id": .int(transferID), "reason": .string(reason), "accounts": .int(Int64(rows)),
            ], at: now)
        }
        return Result(planId: planID, status: "undone", accounts: counted.rows, emails: counted.emails, writes: counted.writes, ticket: plan.ticket)
    }

    /// The guarded writes that move a page of planned rows one way or the other: each account's `accountId` (and
    /// `updatedAt`) from the value it must still hold to the other, the user's email likewise where the plan moves
    /// it, and the transfer row marked applied by the plan (`applying`) or not.
    struct RowWrites {
        let accountSQL: String, userSQL: String
        let accountTime: [SQLBindable], userTime: [SQLBindable]
        let planID: String, transferID: Int64, now: Timestamp

        init(store: Store, planID: String, transferID: Int64, now: Timestamp) {
            let account = store.schema.account, user = store.schema.user
            accountSQL = """
                UPDATE \(account.sql) SET \(account.col(.accountId)) = ?\(account.has(.updatedAt) ? ", \(account.col(.updatedAt)) = ?" : "")
                WHERE \(account.col(.id)) = ? AND \(account.col(.accountId)) = ?
                """
            userSQL = """
                UPDATE \(user.sql) SET \(user.col(.email)) = ?\(user.has(.updatedAt) ? ", \(user.col(.updatedAt)) = ?" : "")
                WHERE \(user.col(.id)) = ? AND \(user.col(.email)) = ?
                """
            accountTime = account.has(.updatedAt) ? [account.encoding(.updatedAt).encode(now)] : []
            userTime = user.has(.updatedAt) ? [user.encoding(.updatedAt).encode(now)] : []
            (self.planID, self.transferID, self.now) = (planID, transferID, now)
        }

        /// The statements for `page`: to the new identifiers when `applying`, back to the old ones otherwise; `done`
        /// says, in the conflict a changed row raises, what stands.
        func statements(_ page: [Planned], applying: Bool, done: String) -> [SQLStatement] {
            let run = applying ? "apply" : "undo"
            var statements: [SQLStatement] = []
            statements.reserveCapacity(page.count * 3)
            for row in page {
                let (fromSub, toSub) = applying ? (row.oldSub, row.newSub) : (row.newSub, row.oldSub)
                statements.append(SQLStatement(accountSQL, [toSub] + accountTime + [row.accountID, fromSub],
                                               expecting: AppleTransferApplier.one("account \(row.accountID) changed while the \(run) ran; \(done)")))
                if let old = row.oldEmail, let new = row.newEmail {
                    let (fromEmail, toEmail) = applying ? (old, new) : (new, old)
                    statements.append(SQLStatement(userSQL, [toEmail] + userTime + [row.userID, fromEmail],
                                                   expecting: AppleTransferApplier.one("the email of user \(row.userID) changed while the \(run) ran; \(done)")))
                }
                statements.append(SQLStatement("UPDATE gatehouse_apple_transfer_accounts SET applied_plan = ?, updated_at = ? WHERE transfer_id = ? AND account_id = ?",
                                               [applying ? SQLValue.text(planID) : SQLValue.null, now.iso8601, transferID, row.accountID]))
            }
            return statements
        }
    }

    static func one(_ message: String) -> ChangeExpectation {
        ChangeExpectation(count: 1) { _ in GatehouseError.conflict(message, fix: "run `gatehouse apple transfer plan` again, review it, and apply the new plan id") }
    }

    /// Throws, naming the first rows that differ, unless every row is as the plan left it (`applied` false: as
    /// planned; true: as the apply at `appliedAt` wrote it).
    private func verify(_ rows: [Planned], applied: Bool, planID: String, appliedAt: Timestamp?, done: String) throws {
        let check = AppleTransferCheck(store: store)
        var problems: [String] = []
        var count = 0
        for chunk in rows.chunked(by: AppleTransferPlanner.readChunk) {
            let current = try check.accounts(chunk.map(\.accountID))
            let holders = applied ? [:] : try check.subHolders(chunk.map(\.newSub))
            let withEmail = chunk.filter { $0.newEmail != nil }
            let emails = try check.users(withEmail.map(\.userID))
            let owners = applied ? [:] : try check.emailHolders(withEmail.compactMap(\.newEmail))
            for row in chunk {
                var problem: String?
                let account = current[row.accountID]
                if account == nil || account?.optionalString("user_id") != row.userID {
                    problem = "account \(row.accountID) is gone or moved to another user"
                } else if account?.optionalString("sub") != (applied ? row.newSub : row.oldSub) {
                    problem = "account \(row.accountID)'s accountId changed"
                } else if !applied, let holder = holders[row.newSub] {
                    problem = "user \(holder) now holds account \(row.accountID)'s new sub (a straggler since the plan)"
                } else if applied, let appliedAt, let written = account.flatMap({ DateEncoding.decode($0["updated_at"]) }),
                          abs(written.milliseconds - appliedAt.milliseconds) >= 1000 {
                    problem = "account \(row.accountID) was updated after the apply (the person signed in with the new sub)"
                } else if let new = row.newEmail {
                    if emails[row.userID] != (applied ? new : row.oldEmail) {
                        problem = "the email of user \(row.userID) changed"
                    } else if !applied, let owner = owners[new.lowercased()], owner != row.userID {
                        problem = "user \(owner) now has user \(row.userID)'s new relay address (a straggler since the plan)"
                    }
                }
                if let problem {
                    count += 1
                    if problems.count < 3 { problems.append(problem) }
                }
            }
        }
        guard count == 0 else {
            let what = applied ? "touched since the apply" : "changed since the plan"
            throw GatehouseError.conflict("\(count) row(s) of transfer plan \(planID) were \(what) (\(problems.joined(separator: "; "))\(count > problems.count ? "; …" : "")); \(done)",
                                          fix: applied ? "those accounts are in use on the new identifiers: leave the apply in place, and fix single users with `gatehouse merge plan`"
                                                       : "run `gatehouse apple transfer plan` again, review it, and apply the new plan id")
        }
    }
}
