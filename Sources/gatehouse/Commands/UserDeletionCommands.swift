import Foundation
import Gatehouse

/// `gatehouse users delete`: deleting a user on request (plan, apply, undo, purge, list, show), beside merges.
enum UserDeletionCommands {
    /// The largest plan file `apply` reads.
    static let maxPlanFileBytes = 4 * 1024 * 1024

    static func make() -> CommandSpec {
        CommandSpec(
            name: "delete",
            summary: "delete a user on request: plan, apply (revoking Apple tokens first), undo within the retention, purge",
            discussion: """
                Everything of the user goes: the user row, accounts, sessions, verification rows for their email or id,
                plugin tables and the sync server's users row (sub better_auth|<id>) with every row referencing it, all found
                through foreign keys as merges find them, and the allow-list roles of the sub. Plan first and review; apply
                revokes the user's Apple tokens, then deletes in one transaction, refusing if anything the plan read changed.
                The deleted rows are kept sealed under the master key for the retention period (default 30 days) so undo can
                restore them; token columns are never kept and come back NULL. `users delete purge` destroys expired copies;
                `gatehouse health --record` (the health timer's run) does the same, so the timer needs nothing more.
                """,
            subcommands: [
                CommandSpec(name: "plan", summary: "show every row a deletion would remove, and store the plan under an id",
                            arguments: [Arguments.user.spec],
                            options: [
                                Options.ticket.spec,
                                Options.out.spec,
                                .json,
                            ],
                            examples: ["gatehouse users delete plan ana@example.com --ticket SUP-1234",
                                       "gatehouse users delete plan 'better_auth|U1ID' --ticket SUP-1234 --out plan.json"],
                            run: plan),
                CommandSpec(name: "apply", summary: "revoke the user's Apple tokens, then delete every planned row in one transaction",
                            discussion: """
                                Refuses a stale plan (any row it read changed, a new session or account appeared), revoking and
                                deleting nothing. Without --no-revoke, the user's Apple tokens are revoked first and a failed
                                revocation stops the deletion. Without --yes it asks on a terminal, and refuses when stdin is not one.
                                """,
                            arguments: [Arguments.plan.spec],
                            options: [
                                Options.yes.spec,
                                Options.noRevoke.spec,
                                Options.noRevokeReason.spec,
                                Options.retain.spec,
                                .json,
                            ],
                            examples: ["gatehouse users delete apply dp_0123456789abcdef01234567 --yes",
                                       "gatehouse users delete apply plan.json --yes --no-revoke --reason 'revoked in the app, SUP-1234' --retain 7d"],
                            run: apply),
                CommandSpec(name: "undo", summary: "restore every row of a deletion within its retention (tokens come back NULL)",
                            arguments: [Arguments.undoneID.spec],
                            options: [Options.undoReason.spec, .json],
                            examples: ["gatehouse users delete undo 3 --reason 'deleted by mistake, SUP-1240'"],
                            run: undo),
                CommandSpec(name: "purge", summary: "destroy the sealed rows of deletions whose retention has ended",
                            discussion: "`gatehouse health --record` (the health timer) runs it too; safe to run at any time and more than once.",
                            options: [.json], run: purge),
                CommandSpec(name: "list", summary: "deletions, newest first",
                            options: [Options.limit.spec, .json], run: list),
                CommandSpec(name: "show", summary: "one deletion: who, when, ticket, revocation, rows per table (never values)",
                            arguments: [Arguments.shownID.spec], options: [.json], run: show),
            ],
            defaultSubcommand: "list"
        )
    }

    static func plan(_ invocation: Invocation) throws -> Int32 {
        let user = try invocation[Arguments.user]
        let ticket = try invocation[Options.ticket]
        let plan = try UserDeletionPlanner(store: invocation.openStore()).plan(user: user, ticket: ticket, actor: invocation.actor)
        if let path = try invocation[Options.out] {
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                try encoder.encode(plan).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw GatehouseError("cannot write the plan to \(path) (\(error.localizedDescription))", fix: "check the folder exists and is writable")
            }
        }
        if invocation.json { try invocation.output.json(plan); return 0 }
        render(plan, invocation.output)
        if let path = try invocation[Options.out] { invocation.output.line("plan written to \(path)") }
        return 0
    }

    static func render(_ plan: UserDeletionPlan, _ out: Output) {
        out.line("deletion plan \(plan.planID)")
        out.line("  user: \(plan.userID)  (sub \(plan.sub))")
        out.line("  ticket: \(plan.ticket)")
        out.line("rows deleted: \(plan.rows.count)")
        for (table, count) in plan.tables.sorted(by: { $0.key < $1.key }) { out.line("  \(table): \(count)") }
        var groups: [String] = []
        for row in plan.rows where !groups.contains(row.group) { groups.append(row.group) }
        for group in groups {
            let rows = plan.rows.filter { $0.group == group }
            out.line("  \(group) (\(rows.count)):")
            for row in rows.prefix(8) { out.line("    delete \(row.table) \(row.key)") }
            if rows.count > 8 { out.line("    … and \(rows.count - 8) more") }
        }
        if plan.appleAccounts.isEmpty {
            out.line("Apple tokens: no Apple account")
        } else {
            for account in plan.appleAccounts {
                let held = [account.hasRefreshToken ? "refresh token" : nil, account.hasAccessToken ? "access token" : nil].compactMap { $0 }
                out.line("Apple account \(account.accountID): " + (held.isEmpty ? "no token held (nothing to revoke; see TN3194)" : "holds a \(held.joined(separator: " and ")): revoked first"))
            }
        }
        out.line("follows foreign keys: " + (plan.references.isEmpty ? "(none)" : plan.references.joined(separator: ", ")))
        out.line("apply with: gatehouse users delete apply \(plan.planID) --yes")
    }

    /// The plan `PLAN` names: an id, or a plan file written by `plan --out`. A file is read whole: every field of it
    /// (the user, the rows, the fingerprint, …) must be the stored plan's, so a file edited by hand names no plan and
    /// is never taken for another plan whose id and fingerprint it copies.
    static func planReference(_ text: String) throws -> (id: String, file: UserDeletionPlan?) {
        if text.hasPrefix("dp_") && !text.contains("/") { return (text, nil) }
        guard FileManager.default.fileExists(atPath: text) else {
            let shown = text.count > 60 ? String(text.prefix(60)) + "…" : text
            throw GatehouseError.notFound("\"\(shown)\" is neither a deletion plan id (dp_…) nor a plan file", fix: "pass the id `users delete plan` printed, or the file its --out wrote")
        }
        try InputFile.requireRegular(text, what: "the plan file")
        guard let handle = FileHandle(forReadingAtPath: text) else { throw GatehouseError("cannot read the plan file \(text)", fix: "check its permissions") }
        defer { try? handle.close() }
        let data = handle.readData(ofLength: maxPlanFileBytes + 1)
        guard data.count <= maxPlanFileBytes else {
            throw GatehouseError.invalid("the plan file \(text) is larger than \(maxPlanFileBytes) bytes; it is not a plan `users delete plan --out` wrote")
        }
        guard let plan = try? JSONDecoder().decode(UserDeletionPlan.self, from: data), plan.planID.hasPrefix("dp_"), plan.planID.count <= 40 else {
            throw GatehouseError.invalid("the plan file \(text) is not a deletion plan (the JSON `users delete plan --out` writes)",
                                         fix: "pass the file `users delete plan --out` wrote, or the plan id")
        }
        return (plan.planID, plan)
    }

    static func apply(_ invocation: Invocation) throws -> Int32 {
        let argument = try invocation[Arguments.plan]
        let noRevoke = try invocation[Options.noRevoke]
        let reason = try invocation[Options.noRevokeReason]
        if noRevoke && reason == nil { throw invocation.usage("--no-revoke needs --reason TEXT: say why the Apple tokens are not revoked") }
        if !noRevoke && reason != nil { throw invocation.usage("--reason goes with --no-revoke (apply always revokes otherwise)") }
        let retain = try invocation[Options.retain] ?? UserDeletionApplier.defaultRetention
        let (planID, file) = try planReference(argument)
        let store = try invocation.openStore()
        let applier = UserDeletionApplier(store: store)
        let plan = try applier.plan(planID)
        if let file, !file.namesSameDeletion(as: plan) {
            throw GatehouseError.invalid("the plan file \(argument) does not match stored plan \(planID) (its user, rows or fingerprint differ); nothing was changed",
                                         fix: "plan again and apply the new plan id")
        }
        if try !invocation[Options.yes] {
            guard isatty(0) == 1 else {
                throw GatehouseError.invalid("refusing to apply deletion plan \(planID) without confirmation: stdin is not a terminal", fix: "review the plan, then pass --yes")
            }
            render(plan, invocation.output)
            invocation.output.write("Delete user \(plan.userID) and \(plan.rows.count) row(s)? [y/N] ")
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            guard answer == "y" || answer == "yes" else { invocation.output.line("not applied"); return 1 }
        }
        let revocation: DeletionRevocationChoice = noRevoke ? .skip(reason: reason ?? "") : .revoke(.standard(store: store, actor: try invocation.actor))
        let result = try applier.apply(planID: planID, revocation: revocation, retain: retain, actor: invocation.actor)
        if invocation.json { try invocation.output.json(result); return 0 }
        let out = invocation.output
        out.line("deletion \(result.deletionID) applied: user \(result.userID) deleted (ticket \(result.ticket))")
        out.line("  deleted: " + result.deleted.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
        if let why = result.noRevokeReason { out.line("  Apple tokens NOT revoked (--no-revoke): \(why)") }
        for outcome in result.revocation { out.line("  Apple account \(outcome.accountID): \(outcome.status) — \(outcome.detail)") }
        out.line("  restorable until \(result.retainUntil.iso8601) with: gatehouse users delete undo \(result.deletionID) --reason TEXT")
        out.line("  tokens are not restorable: \(result.notRestorable.joined(separator: ", ")) come back NULL on undo")
        return 0
    }

    static func undo(_ invocation: Invocation) throws -> Int32 {
        let id = try invocation[Arguments.undoneID]
        let result = try UserDeletionUndo(store: invocation.openStore()).undo(deletionID: id, reason: try invocation[Options.undoReason], actor: invocation.actor)
        if invocation.json { try invocation.output.json(result); return 0 }
        invocation.output.line("deletion \(result.deletionID) undone: \(result.rowsRestored) row(s) restored; user \(result.userID) is back")
        if !result.restoredAsNull.isEmpty {
            invocation.output.line("  tokens were revoked and are not restored: \(result.restoredAsNull.joined(separator: ", ")) are NULL; the user signs in again to get new ones")
        }
        return 0
    }

    static func purge(_ invocation: Invocation) throws -> Int32 {
        let result = try UserDeletionRecords(store: invocation.openStore()).purge(actor: invocation.actor)
        if invocation.json { try invocation.output.json(result); return 0 }
        invocation.output.line(result.purged.isEmpty ? "nothing to purge" : "purged the sealed rows of deletion(s) \(result.purged.map(String.init).joined(separator: ", ")): they can no longer be undone")
        return 0
    }

    static func list(_ invocation: Invocation) throws -> Int32 {
        let records = try UserDeletionRecords(store: invocation.openStore()).list(limit: try invocation[Options.limit])
        if invocation.json { try invocation.output.json(records); return 0 }
        if records.isEmpty { invocation.output.line("no user deletions yet"); return 0 }
        invocation.output.table(["ID", "STATUS", "APPLIED", "USER", "TICKET", "RESTORABLE UNTIL", "ACTOR"], records.map {
            [String($0.id), $0.status, $0.appliedAt, $0.userID, $0.ticket, $0.status == "applied" ? $0.retainUntil : "-", $0.actor]
        })
        return 0
    }

    static func show(_ invocation: Invocation) throws -> Int32 {
        let id = try invocation[Arguments.shownID]
        let record = try UserDeletionRecords(store: invocation.openStore()).show(id)
        if invocation.json { try invocation.output.json(record); return 0 }
        let out = invocation.output
        out.line("deletion \(record.id) (\(record.status)), plan \(record.planID)")
        out.line("  user: \(record.userID)")
        out.line("  ticket \(record.ticket), applied \(record.appliedAt) by \(record.actor)")
        out.line("  deleted: " + record.deleted.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
        if let why = record.noRevokeReason { out.line("  Apple tokens not revoked: \(why)") }
        for outcome in record.revocation { out.line("  Apple account \(outcome.accountID): \(outcome.status) — \(outcome.detail)") }
        if record.status == "applied" { out.line("  restorable until \(record.retainUntil)") }
        if let at = record.undoneAt { out.line("  undone \(at) by \(record.undoneBy ?? "?"): \(record.undoReason ?? "")") }
        if let at = record.purgedAt { out.line("  purged \(at): the sealed rows are destroyed") }
        return 0
    }
}

extension UserDeletionCommands {
    /// The positional arguments these commands read, each declared once.
    enum Arguments {
        static let user: Argument<String> = .text("USER", "a user id, an exact email, or a sub better_auth|<id>")
        static let plan: Argument<String> = .text("PLAN", "the plan id `users delete plan` printed (dp_…), or the file its --out wrote", completion: .files)
        // Text, not `.number`: a deletion id that is not a number is refused by the lookup (exit 1, "no user
        // deletion"), as UserDeletionCommandTests holds.
        static let undoneID: Argument<String> = .text("ID", "the deletion's number (see `users delete list`)")
        static let shownID: Argument<String> = .text("ID", "the deletion's number")
    }

    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let noRevokeReason: Option<String?> = .text("reason", "TEXT", "why tokens are not revoked (with --no-revoke; kept in the record and the audit log)")
        static let undoReason: Option<String> = .requiredText("reason", "TEXT", "why (kept in the record and the audit log)", required: true)
        static let limit: Option<Int> = .integer("limit", "N", "at most N deletions (default 100, at most 10000)", default: 100, range: 1...10_000)
        static let noRevoke: Option<Bool> = .flag("no-revoke", "do not revoke Apple tokens first (needs --reason)")
        static let out: Option<String?> = .text("out", "FILE", "also write the plan (JSON, no row values) to FILE, for review or `apply FILE`")
        static let retain: Option<Seconds?> = .duration("retain", "DURATION", "how long the deleted rows stay restorable (default 30d; from 1h to 400d)")
        static let ticket: Option<String> = .requiredText("ticket", "REF", "the support ticket (kept in the plan, the deletion record and the audit log)", required: true)
        static let yes: Option<Bool> = .flag("yes", "apply without asking")
    }
}
