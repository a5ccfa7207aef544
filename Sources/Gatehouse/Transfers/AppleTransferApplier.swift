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

    private func planned(_ planID: String, transferID: Int64, applied: Bool) throws -> [Planned] {
        try store.db.rows("""
            SELECT account_id, user_id, old_sub, new_sub, plan_old_email, plan_new_email FROM gatehouse_apple_transfer_accounts
            WHERE transfer_id = ? AND plan_id = ? AND plan_action = 'rewrite' AND applied_plan IS \(applied ? "NOT NULL" : "NULL") ORDER BY account_id
            """, [transferID, planID]).compactMap { row in
            guard let account = row.optionalString("account_id"), let user = row.optionalString("user_id"), let old = row.optionalString("old_sub"),
                  let new = row.optionalString("new_sub") else { return nil }
            return Planned(accountID: account, userID: user, oldSub: old, newSub: new, oldEmail: row.optionalString("plan_old_email"),
                           newEmail: row.optionalString("plan_new_email"))
        }
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
        let rows = try planned(planID, transferID: transferID, applied: false)
        let size = store.engine.rowsPerWrite
        if size != nil { try verify(rows, applied: false, planID: planID, appliedAt: nil, done: "nothing was changed") }
        let chunks = rows.chunked(by: size ?? max(rows.count, 1))
        let account = store.schema.account, user = store.schema.user
        var writes = 0
        for (index, chunk) in chunks.enumerated() {
            let last = index == chunks.count - 1
            let done = index == 0 && plan.status == "planned" ? "nothing was changed" : "the batches written before stay applied: run the same apply again after a new plan, or undo"
            let body = {
                try verify(Array(chunk), applied: false, planID: planID, appliedAt: nil, done: done)
                var statements: [SQLStatement] = []
                for row in chunk {
                    statements.append(SQLStatement("""
                        UPDATE \(account.sql) SET \(account.col(.accountId)) = ?\(account.has(.updatedAt) ? ", \(account.col(.updatedAt)) = ?" : "")
                        WHERE \(account.col(.id)) = ? AND \(account.col(.accountId)) = ?
                        """, [row.newSub] + (account.has(.updatedAt) ? [account.encoding(.updatedAt).encode(now)] : []) + [row.accountID, row.oldSub],
                        expecting: Self.one("account \(row.accountID) changed while the apply ran; \(done)")))
                    if let old = row.oldEmail, let new = row.newEmail {
                        statements.append(SQLStatement("""
                            UPDATE \(user.sql) SET \(user.col(.email)) = ?\(user.has(.updatedAt) ? ", \(user.col(.updatedAt)) = ?" : "")
                            WHERE \(user.col(.id)) = ? AND \(user.col(.email)) = ?
                            """, [new] + (user.has(.updatedAt) ? [user.encoding(.updatedAt).encode(now)] : []) + [row.userID, old],
                            expecting: Self.one("the email of user \(row.userID) changed while the apply ran; \(done)")))
                    }
                    statements.append(SQLStatement("UPDATE gatehouse_apple_transfer_accounts SET applied_plan = ?, updated_at = ? WHERE transfer_id = ? AND account_id = ?",
                                                   [planID, now.iso8601, transferID, row.accountID]))
                }
                _ = try store.db.checkedBatch(statements)
                try store.db.execute("""
                    UPDATE gatehouse_apple_transfer_plans SET status = ?, ticket = ?, applied_at = ?, applied_by = ? WHERE id = ?
                    """, [last ? "applied" : "applying", ticket, now.iso8601, actor.name, planID])
            }
            if last {
                try store.change(actor: actor, action: "apple.transfer.apply", subject: planID, details: [
                    "transfer_id": .int(transferID), "ticket": .string(ticket), "accounts": .int(Int64(rows.count)),
                    "emails": .int(Int64(rows.filter { $0.newEmail != nil }.count)), "writes": .int(Int64(chunks.count)),
                ], body)
            } else {
                try store.db.write(body)
            }
            writes += 1
        }
        return Result(planId: planID, status: "applied", accounts: rows.count, emails: rows.filter { $0.newEmail != nil }.count, writes: writes, ticket: ticket)
    }

    /// Undoes plan `planID` (applied, or cut off part-way), refusing when any rewritten row was touched since.
    public func undo(planID: String, reason rawReason: String, actor: Actor, now: Timestamp = .now()) throws -> Result {
        let reason = try UserDeletionApplier.validate(reason: rawReason, what: "the transfer plan is undone")
        let (plan, transferID) = try AppleTransferPlanner(store: store).plan(planID)
        guard plan.status == "applied" || plan.status == "applying", let appliedAt = plan.appliedAt.flatMap(Timestamp.init(iso8601:)) else {
            throw GatehouseError.conflict("transfer plan \(planID) is \(plan.status): only an applied plan is undone", fix: "see `gatehouse apple transfer status`")
        }
        let rows = try planned(planID, transferID: transferID, applied: true)
        let size = store.engine.rowsPerWrite
        if size != nil { try verify(rows, applied: true, planID: planID, appliedAt: appliedAt, done: "nothing was changed") }
        let chunks = rows.chunked(by: size ?? max(rows.count, 1))
        let account = store.schema.account, user = store.schema.user
        var writes = 0
        for (index, chunk) in chunks.enumerated() {
            let last = index == chunks.count - 1
            let done = index == 0 ? "nothing was changed" : "the batches undone before stay undone: run the undo again"
            let body = {
                try verify(Array(chunk), applied: true, planID: planID, appliedAt: appliedAt, done: done)
                var statements: [SQLStatement] = []
                for row in chunk {
                    statements.append(SQLStatement("""
                        UPDATE \(account.sql) SET \(account.col(.accountId)) = ?\(account.has(.updatedAt) ? ", \(account.col(.updatedAt)) = ?" : "")
                        WHERE \(account.col(.id)) = ? AND \(account.col(.accountId)) = ?
                        """, [row.oldSub] + (account.has(.updatedAt) ? [account.encoding(.updatedAt).encode(now)] : []) + [row.accountID, row.newSub],
                        expecting: Self.one("account \(row.accountID) changed while the undo ran; \(done)")))
                    if let old = row.oldEmail, let new = row.newEmail {
                        statements.append(SQLStatement("""
                            UPDATE \(user.sql) SET \(user.col(.email)) = ?\(user.has(.updatedAt) ? ", \(user.col(.updatedAt)) = ?" : "")
                            WHERE \(user.col(.id)) = ? AND \(user.col(.email)) = ?
                            """, [old] + (user.has(.updatedAt) ? [user.encoding(.updatedAt).encode(now)] : []) + [row.userID, new],
                            expecting: Self.one("the email of user \(row.userID) changed while the undo ran; \(done)")))
                    }
                    statements.append(SQLStatement("UPDATE gatehouse_apple_transfer_accounts SET applied_plan = NULL, updated_at = ? WHERE transfer_id = ? AND account_id = ?",
                                                   [now.iso8601, transferID, row.accountID]))
                }
                _ = try store.db.checkedBatch(statements)
                if last {
                    try store.db.execute("UPDATE gatehouse_apple_transfer_plans SET status = 'undone', undone_at = ?, undone_by = ?, undo_reason = ? WHERE id = ?",
                                         [now.iso8601, actor.name, reason, planID])
                }
            }
            if last {
                try store.change(actor: actor, action: "apple.transfer.undo", subject: planID, details: [
                    "transfer_id": .int(transferID), "reason": .string(reason), "accounts": .int(Int64(rows.count)),
                ], body)
            } else {
                try store.db.write(body)
            }
            writes += 1
        }
        return Result(planId: planID, status: "undone", accounts: rows.count, emails: rows.filter { $0.newEmail != nil }.count, writes: writes, ticket: plan.ticket)
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
