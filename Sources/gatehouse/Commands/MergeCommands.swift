import Foundation
import Gatehouse

/// `gatehouse merge`: support-driven merges of a split identity (U2 into U1): plan, apply, undo, list, show.
enum MergeCommands: CommandNoun {
    static let name = "merge"
    static let summary = "merge a split identity: plan, apply atomically, undo, emit SQL"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            discussion: """
                A person with two users (U1 from Apple with a relay email, U2 from Google) is merged U2 into U1. U1 keeps its
                id (so the sub better_auth|U1 is unchanged); U2's accounts move to U1; U2's sessions and the verification rows
                for its email are deleted; every sync row referencing U2's users row (found through foreign keys) moves to
                U1's, and U2's users row is removed (a token with sub better_auth|U2 fails closed; when only U2 has a users
                row it is re-keyed to better_auth|U1); U2's user row is deleted. Users are named by Better Auth id, exact
                email, or sub better_auth|<id>. Plan first, review, then apply the plan id: apply refuses if any row the
                plan read has changed since. Every merge can be undone while nothing has touched its rows.
                """,
            subcommands: [
                CommandSpec(name: "plan", summary: "show what a merge would do, with its conflicts and decisions, and store it under a plan id",
                            options: [Options.from.spec, Options.into.spec, Options.keepEmail.spec, Options.keepSubscription.spec,
                                      Options.keepPassword.spec, Options.sameProvider.spec, Options.carryRoles.spec, Options.emitSQL.spec, .json],
                            examples: [
                                "gatehouse merge plan --from ana@gmail.com --into better_auth|U1ID --keep-email source",
                                "gatehouse merge plan --from U2ID --into U1ID --keep-subscription target --emit-sql merge.sql",
                            ],
                            run: plan),
                CommandSpec(name: "apply", summary: "apply a plan in one transaction, if nothing changed since it was made",
                            discussion: "Without --yes it asks on a terminal, and refuses when stdin is not a terminal.",
                            arguments: [Arguments.planID.spec],
                            options: [Options.ticket.spec, Options.yes.spec, .json],
                            examples: ["gatehouse merge apply mp_0123456789abcdef01234567 --ticket SUP-1234 --yes"],
                            run: apply),
                CommandSpec(name: "undo", summary: "restore every row a merge changed, if nothing touched them since",
                            arguments: [Arguments.mergeID.spec],
                            options: [Options.reason.spec, .json],
                            examples: ["gatehouse merge undo 3 --reason \"wrong person, SUP-1240\""],
                            run: undo),
                CommandSpec(name: "list", summary: "merges, newest first",
                            options: [Options.limit.spec, .json], run: list),
                CommandSpec(name: "show", summary: "one merge: who, when, ticket, and every row it touched (never values)",
                            arguments: [Arguments.shownID.spec], options: [.json], run: show),
            ],
            defaultSubcommand: "list"
        )
    }

    static func plan(_ invocation: Invocation) throws -> Int32 {
        let decisions = MergeDecisions(keepEmail: try invocation[Options.keepEmail],
                                       keepSubscription: try invocation[Options.keepSubscription],
                                       keepPassword: try invocation[Options.keepPassword],
                                       sameProvider: try invocation[Options.sameProvider],
                                       carryRoles: try invocation[Options.carryRoles])
        let store = try invocation.openStore()
        let plan = try MergePlanner(store: store).plan(source: try invocation[Options.from], target: try invocation[Options.into],
                                                       decisions: decisions, actor: invocation.actor)
        let view = MergePlanView(plan)
        if invocation.json { try invocation.output.json(view) } else { render(view, invocation.output) }
        guard plan.id != nil else {
            let options = plan.unresolved.map { "\(option($0.field)) (\($0.kind.rawValue))" }.joined(separator: ", ")
            throw GatehouseError.conflict("\(plan.unresolved.count) conflict(s) need a decision; the plan was not stored",
                                          fix: "plan again with \(options)")
        }
        if let path = try invocation[Options.emitSQL] {
            let script = CLISpelling.render(try MergeSQLEmitter.script(for: plan, at: .now(), on: store))
            // The script carries the planned rows' full images (session and OAuth tokens among them): owner-only.
            do {
                try Data(script.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            } catch {
                throw GatehouseError("cannot write the SQL script to \(path) (\(error.localizedDescription))", fix: "check the folder exists and is writable")
            }
            if !invocation.json { invocation.output.line("SQL script written to \(path) (mode 0600: it holds token values; \(plan.steps.count) guarded statements, one transaction)") }
        }
        return 0
    }

    /// A decision as this command line spells it: `--keep-email target|source`, `--carry-roles`.
    static func option(_ field: MergeDecisions.Field) -> String {
        let flag = CLISpelling.flag(field.input)
        return field == .carryRoles ? flag : flag + " " + field.values.joined(separator: "|")
    }

    static func render(_ view: MergePlanView, _ out: Output) {
        out.line(view.planID.map { "merge plan \($0)" } ?? "merge plan (not stored: conflicts need a decision)")
        out.line("  from U2: \(view.source)  \(view.sourceEmail)")
        out.line("  into U1: \(view.target)  \(view.targetEmail)")
        out.line("conflicts and decisions:")
        for conflict in view.conflicts {
            out.line("  \(conflict.kind.rawValue): \(conflict.message)")
            out.line("    → " + (conflict.decision ?? "UNDECIDED: pass \(option(conflict.field))"))
        }
        if !view.warnings.isEmpty {
            out.line("warnings:")
            for warning in view.warnings { out.line("  ! \(warning)") }
        }
        out.line("changes: \(view.rowsUpdated) row(s) updated, \(view.rowsDeleted) deleted")
        var groups: [String] = []
        for change in view.changes where !groups.contains(change.group) { groups.append(change.group) }
        for group in groups {
            let changes = view.changes.filter { $0.group == group }
            out.line("  \(group): \(changes.count)")
            for change in changes.prefix(8) {
                let set = change.set.sorted { $0.key < $1.key }.map { "\($0.key) → \($0.value)" }.joined(separator: ", ")
                out.line("    \(change.operation) \(change.table) \(change.key)\(set.isEmpty ? "" : ": " + set)  (\(change.reason))")
            }
            if changes.count > 8 { out.line("    … and \(changes.count - 8) more") }
        }
        out.line("follows foreign keys: " + (view.references.isEmpty ? "(none)" : view.references.joined(separator: ", ")))
        if let id = view.planID { out.line("apply with: gatehouse merge apply \(id) --ticket REF") }
    }

    static func apply(_ invocation: Invocation) throws -> Int32 {
        let planID = try invocation[Arguments.planID]
        let ticket = try invocation[Options.ticket]
        let applier = try MergeApplier.open(path: invocation.storePath(), configurationPath: invocation.configurationPath, planID: planID)
        _ = try MergeApplier.validate(ticket: ticket)
        if try !invocation[Options.yes] {
            guard isatty(0) == 1 else {
                throw GatehouseError.invalid("refusing to apply merge plan \(planID.prefix(40)) without confirmation: stdin is not a terminal",
                                             fix: "review the plan, then pass --yes")
            }
            let plan = try applier.plan(planID)
            let view = MergePlanView(plan)
            render(view, invocation.output)
            invocation.output.write("Merge \(plan.source) into \(plan.target) (\(view.rowsUpdated) updated, \(view.rowsDeleted) deleted)? [y/N] ")
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            guard answer == "y" || answer == "yes" else { invocation.output.line("not applied"); return 1 }
        }
        let result = try applier.apply(planID: planID, ticket: ticket, actor: invocation.actor)
        if invocation.json { try invocation.output.json(result); return 0 }
        invocation.output.line("merge \(result.mergeID) applied: \(result.source) merged into \(result.target) (ticket \(result.ticket))")
        invocation.output.line("  updated: \(counts(result.updated)); deleted: \(counts(result.deleted))")
        invocation.output.line("  in \(result.transactionMilliseconds) ms inside the transaction; undo with: gatehouse merge undo \(result.mergeID) --reason TEXT")
        return 0
    }

    static func counts(_ counts: [String: Int]) -> String {
        counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }

    static func undo(_ invocation: Invocation) throws -> Int32 {
        let result = try MergeUndo(store: invocation.openStore())
            .undo(mergeID: String(try invocation[Arguments.mergeID]), reason: try invocation[Options.reason], actor: invocation.actor)
        if invocation.json { try invocation.output.json(result); return 0 }
        invocation.output.line("merge \(result.mergeID) undone: \(result.rowsRestored) row(s) restored; \(result.source) and \(result.target) are separate users again")
        return 0
    }

    static func list(_ invocation: Invocation) throws -> Int32 {
        let records = try MergeRecords(store: invocation.openStore()).list(limit: try invocation[Options.limit])
        if invocation.json { try invocation.output.json(records); return 0 }
        if records.isEmpty { invocation.output.line("no merges yet"); return 0 }
        invocation.output.table(["ID", "STATUS", "APPLIED", "FROM (U2)", "INTO (U1)", "TICKET", "ACTOR"], records.map {
            [String($0.id), $0.status, $0.appliedAt, $0.source, $0.target, $0.ticket, $0.actor]
        })
        return 0
    }

    static func show(_ invocation: Invocation) throws -> Int32 {
        let record = try MergeRecords(store: invocation.openStore()).show(String(try invocation[Arguments.shownID]))
        if invocation.json { try invocation.output.json(record); return 0 }
        let out = invocation.output
        out.line("merge \(record.id) (\(record.status)), plan \(record.planID)")
        out.line("  from U2: \(record.source)")
        out.line("  into U1: \(record.target)")
        out.line("  ticket \(record.ticket), applied \(record.appliedAt) by \(record.actor) (planned \(record.plannedAt))")
        if let at = record.undoneAt { out.line("  undone \(at) by \(record.undoneBy ?? "?"): \(record.undoReason ?? "")") }
        out.line("  updated: \(counts(record.summary.updated)); deleted: \(counts(record.summary.deleted))")
        for row in record.rows ?? [] { out.line("    \(row)") }
        return 0
    }
}

extension MergeCommands {
    /// The positional arguments these commands read, each declared once.
    enum Arguments {
        static let planID: Argument<String> = .text("PLAN_ID", "the id `merge plan` printed (mp_…)")
        static let mergeID: Argument<Int64> = .number("MERGE_ID", "the merge's number (see `merge list`)")
        static let shownID: Argument<Int64> = .number("ID", "the merge's number")
    }

    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let carryRoles: Option<Bool> = .flag("carry-roles", "grant U1 the allow-list roles only U2 had (otherwise they are dropped)")
        static let emitSQL: Option<String?> = .text("emit-sql", "FILE", "also write the merge as a guarded SQL script for a remote copy, in the store's SQL (SQLite/D1 or Postgres)")
        static let from: Option<String> = .requiredText("from", "U2", "the user merged away (source)", required: true)
        static let into: Option<String> = .requiredText("into", "U1", "the user kept (target)", required: true)
        static let keepEmail: Option<MergeDecisions.Side?> = .choice("keep-email", "target|source", "which email U1 ends with (required when U1's is a relay and U2's is real)", as: MergeDecisions.Side.self)
        static let keepPassword: Option<MergeDecisions.Side?> = .choice("keep-password", "target|source", "whose password U1 keeps when both have one", as: MergeDecisions.Side.self)
        static let keepSubscription: Option<MergeDecisions.Side?> = .choice("keep-subscription", "target|source", "which live subscription stays live when both have one", as: MergeDecisions.Side.self)
        static let limit: Option<Int> = .integer("limit", "N", "at most N merges (default 100, at most 10000)", default: 100, range: 1...10_000)
        static let reason: Option<String> = .requiredText("reason", "TEXT", "why (kept in the merge record and the audit log)", required: true)
        static let sameProvider: Option<MergeDecisions.SameProvider?> = .choice("same-provider", "both|target|source", "two accounts of one provider: keep both, U1's or U2's", as: MergeDecisions.SameProvider.self)
        static let ticket: Option<String> = .requiredText("ticket", "REF", "the support ticket (kept in the merge record and the audit log)", required: true)
        static let yes: Option<Bool> = .flag("yes", "apply without asking")
    }
}
