import Foundation
import Gatehouse

/// `gatehouse apple transfer …`: moving every Sign in with Apple user to the new team's identifiers when the app
/// changes Apple developer team (TN3159), within the 60 days Apple's migration endpoints answer.
enum AppleTransferCommands {
    static func spec() -> CommandSpec {
        CommandSpec(name: "transfer", summary: "an app transfer to another Apple team: new subs and relay addresses for every Apple user, with an undo",
                    discussion: """
                        When the app moves to another Apple developer team, every Sign in with Apple user gets a new sub (and a Hide My
                        Email user a new relay address); Better Auth would make a new user for each at their next sign-in. Apple bridges
                        the two with a transfer identifier for 60 days after the transfer. start records the teams and the deadline;
                        collect asks the sending team's transfer identifiers, exchange the recipient team's new identifiers (both
                        resumable, rate-aware, with the keys of both teams in the one key ring); plan, apply and undo rewrite the
                        accounts like a merge. ops/runbooks/apple-transfer.md walks the whole job. Base URL https://appleid.apple.com
                        unless GATEHOUSE_APPLE_BASE_URL is set.
                        """,
                    subcommands: [
                        CommandSpec(name: "start", summary: "record the transfer: the sending team (the active key's), the recipient team, the date and so the deadline",
                                    options: [Options.toTeam.spec, Options.transferredAt.spec, Options.clientId.spec, Options.recipientElsewhere.spec, .json],
                                    examples: ["gatehouse apple transfer start --to-team NEWTEAM123 --transferred-at 2026-12-01"],
                                    run: start),
                        CommandSpec(name: "collect", summary: "sending side: ask Apple for every Apple account's transfer identifier (resumable)",
                                    options: [Options.limit.spec, Options.concurrency.spec, Options.retryRefused.spec, Options.quiet.spec, .json],
                                    examples: ["gatehouse apple transfer collect", "gatehouse apple transfer collect --limit 1000 --concurrency 2"],
                                    run: { try run(.collect, $0) }),
                        CommandSpec(name: "export", summary: "write the user ids and transfer identifiers (only those, as Apple asks) for a recipient's own store",
                                    options: [Options.out.spec, .json],
                                    examples: ["gatehouse apple transfer export --out transfer.json"],
                                    run: export),
                        CommandSpec(name: "import", summary: "recipient side: read a sending team's export into this store",
                                    arguments: [Arguments.file.spec], options: [.json],
                                    examples: ["gatehouse apple transfer import transfer.json"],
                                    run: importFile),
                        CommandSpec(name: "exchange", summary: "recipient side: ask Apple for each transfer identifier's new sub, email and is_private_email (resumable)",
                                    options: [Options.limit.spec, Options.concurrency.spec, Options.retryRefused.spec, Options.quiet.spec, .json],
                                    examples: ["gatehouse apple transfer exchange"],
                                    run: { try run(.exchange, $0) }),
                        CommandSpec(name: "plan", summary: "plan the rewrite of every exchanged account; name the stragglers to merge",
                                    options: [Options.planOut.spec, .json],
                                    examples: ["gatehouse apple transfer plan", "gatehouse apple transfer plan --out transfer-plan.json"],
                                    run: plan),
                        CommandSpec(name: "apply", summary: "apply a plan, if nothing changed since it was made (one transaction; batches on D1)",
                                    discussion: "Without --yes it asks on a terminal, and refuses when stdin is not a terminal. A batched apply that was cut off is finished by running it again.",
                                    arguments: [Arguments.planID.spec], options: [Options.ticket.spec, Options.yes.spec, .json],
                                    examples: ["gatehouse apple transfer apply tp_0123456789abcdef01234567 --ticket OPS-77 --yes"],
                                    run: apply),
                        CommandSpec(name: "undo", summary: "write the old identifiers back, while nothing has touched the rewritten rows",
                                    arguments: [Arguments.planID.spec], options: [Options.reason.spec, .json],
                                    examples: ["gatehouse apple transfer undo tp_0123456789abcdef01234567 --reason \"wrong recipient team\""],
                                    run: undo),
                        CommandSpec(name: "status", summary: "the stage, the counts, the days left, the failures",
                                    options: [.json], run: status),
                    ],
                    defaultSubcommand: "status")
    }

    static func start(_ invocation: Invocation) throws -> Int32 {
        let team: TeamID
        do { team = try TeamID(try invocation[Options.toTeam]) } catch let error as GatehouseError {
            throw GatehouseError.invalid("--to-team: \(error.message)", fix: error.fix)
        }
        let date = try invocation[Options.transferredAt].map { text -> Timestamp in
            guard let time = AppleTransfer.date(text) else {
                throw invocation.usage("--transferred-at \"\(OperatorText.visible(String(text.prefix(40)), keepLineBreaks: false))\" is not a date; use e.g. 2026-12-01 or 2026-12-01T09:00:00Z")
            }
            return time
        }
        let transfer = try AppleTransferStore(store: invocation.openStore()).start(
            toTeam: team, transferredAt: date, clientID: try invocation[Options.clientId], recipientElsewhere: try invocation[Options.recipientElsewhere],
            actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(transfer); return 0 }
        invocation.output.line("transfer \(transfer.id) started: team \(transfer.fromTeam) → team \(transfer.toTeam), client id \(transfer.clientID)")
        invocation.output.line("  transferred \(transfer.transferredAt.iso8601); Apple's migration endpoints answer until \(transfer.deadline.iso8601) (\(transfer.daysLeft(at: .now())) days left)")
        invocation.output.line("  next: gatehouse apple transfer collect")
        return 0
    }

    static func run(_ side: AppleTransferRunner.Side, _ invocation: Invocation) throws -> Int32 {
        var runner = AppleTransferRunner(store: try invocation.openStore())
        let limit = try invocation[Options.limit]
        runner.limit = limit == 0 ? nil : limit
        runner.concurrency = try invocation[Options.concurrency]
        runner.retryRefused = try invocation[Options.retryRefused]
        runner.actor = try invocation.actor
        // A progress line on a terminal, redrawn in place; nothing on a pipe but the summary.
        let quiet = try invocation[Options.quiet]
        let live = isatty(STDERR_FILENO) == 1 && !quiet && !invocation.json
        if live {
            runner.progress = { progress in
                let left = progress.secondsLeft.map { String(format: ", %.0f s left", $0) } ?? ""
                let line = String(format: "\r%@: %d/%d accounts, %.0f/s%@%@\u{1B}[K", side.rawValue, progress.done, progress.total, progress.perSecond, left,
                                  progress.failed > 0 ? ", \(progress.failed) failed" : "")
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
        let summary = try runner.run(side)
        if live { FileHandle.standardError.write(Data("\n".utf8)) }
        if invocation.json { try invocation.output.json(summary); return summary.unavailable > 0 ? 1 : 0 }
        invocation.output.line(String(format: "%@: %d asked, %d answered, %d refused, %d unavailable, %d still to ask; %.1f s, %.0f requests/s%@",
                                      side.rawValue, summary.asked, summary.answered, summary.refused, summary.unavailable, summary.remaining,
                                      summary.seconds, summary.requestsPerSecond,
                                      summary.rateLimited > 0 ? ", \(summary.rateLimited) rate-limited (429)" : ""))
        if summary.refused > 0 { invocation.output.line("  the refused accounts are listed by `gatehouse apple transfer status`") }
        if summary.unavailable > 0 { invocation.output.line("  Apple gave no usable answer for \(summary.unavailable) account(s): run `gatehouse apple transfer \(side.rawValue)` again") }
        else if summary.remaining > 0 { invocation.output.line("  run `gatehouse apple transfer \(side.rawValue)` again for the rest") }
        else { invocation.output.line("  next: gatehouse apple transfer \(side == .collect ? "exchange (or export, when the recipient runs its own store)" : "plan")") }
        return summary.unavailable > 0 ? 1 : 0
    }

    static func export(_ invocation: Invocation) throws -> Int32 {
        let path = try invocation[Options.out]
        let count = try AppleTransferStore(store: invocation.openStore()).export(to: path, actor: invocation.actor)
        struct Exported: Encodable { let users: Int; let file: String }
        if invocation.json { try invocation.output.json(Exported(users: count, file: path)); return 0 }
        invocation.output.line("wrote \(count) user id(s) and transfer identifier(s) to \(path) (mode 0600; no sub or relay address, as Apple asks)")
        invocation.output.line("  on the recipient's store: gatehouse apple transfer import \(path), then exchange")
        return 0
    }

    static func importFile(_ invocation: Invocation) throws -> Int32 {
        let result = try AppleTransferStore(store: invocation.openStore()).importFile(try invocation[Arguments.file], actor: invocation.actor)
        if invocation.json { try invocation.output.json(result); return 0 }
        invocation.output.line("imported \(result.users) user(s) into transfer \(result.transferId)\(result.created ? " (recorded from the file)" : ""): \(result.accounts) Apple account(s) to exchange")
        if result.withoutAccountCount > 0 {
            invocation.output.line("  \(result.withoutAccountCount) user(s) have no Apple account in this store (first: \(result.withoutAccount.prefix(5).joined(separator: ", ")))")
        }
        invocation.output.line("  next: gatehouse apple transfer exchange")
        return 0
    }

    static func plan(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.openStore()
        let out = try invocation[Options.planOut]
        // --out: every account's entry streamed to the file as it is planned, the summary last; renamed into place once whole.
        let file = try out.map(PrivateFile.Stream.init(path:))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var first = true
        file?.append("{\"accounts\": [\n")
        let summary = try AppleTransferPlanner(store: store).plan(actor: invocation.actor, entries: file.map { file in { entry in
            file.append((first ? "" : ",\n") + String(decoding: (try? encoder.encode(entry)) ?? Data("{}".utf8), as: UTF8.self))
            first = false
        } })
        if let file {
            file.append("\n], \"plan\": ")
            file.append(try encoder.encode(summary))
            file.append("}\n")
            try file.commit()
        }
        if invocation.json { try invocation.output.json(summary); return 0 }
        invocation.output.line("transfer plan \(summary.planId): \(summary.rewrites) account(s) to rewrite to the new sub (\(summary.emailRewrites) with a new relay address)")
        invocation.output.line("  left as they are: \(summary.stragglers) straggler(s), \(summary.unchanged) unchanged, \(summary.notExchanged) not exchanged")
        if !summary.stragglerPairs.isEmpty {
            invocation.output.line("  stragglers — signed in during the window, so Better Auth made a new user; merge each pair (new user into the old one),")
            invocation.output.line("  then apply each merge plan with `gatehouse merge apply PLAN --ticket REF --yes`:")
            for pair in summary.stragglerPairs.prefix(20) { invocation.output.line("    \(pair.mergeCommand)") }
            if summary.stragglerPairs.count > 20 { invocation.output.line("    … \(summary.stragglers - 20) more: `gatehouse apple transfer status --json` lists them") }
        }
        if let out { invocation.output.line("  the whole plan is in \(out) (mode 0600)") }
        invocation.output.line("  apply with: gatehouse apple transfer apply \(summary.planId) --ticket REF --yes")
        return 0
    }

    static func apply(_ invocation: Invocation) throws -> Int32 {
        let planID = try invocation[Arguments.planID]
        let ticket = try invocation[Options.ticket]
        let store = try invocation.openStore()
        _ = try MergeApplier.validate(ticket: ticket)
        if try !invocation[Options.yes] {
            guard isatty(0) == 1 else {
                throw GatehouseError.invalid("refusing to apply transfer plan \(planID.prefix(40)) without confirmation: stdin is not a terminal", fix: "review the plan, then pass --yes")
            }
            let plan = try AppleTransferPlanner(store: store).plan(planID).0
            invocation.output.write("Rewrite \(plan.rewrites) Apple account(s) to the new team's subs (\(plan.emailRewrites) relay addresses)? [y/N] ")
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            guard answer == "y" || answer == "yes" else { invocation.output.line("not applied"); return 1 }
        }
        let result = try AppleTransferApplier(store: store).apply(planID: planID, ticket: ticket, actor: invocation.actor)
        if invocation.json { try invocation.output.json(result); return 0 }
        invocation.output.line("transfer plan \(planID) applied: \(result.accounts) account(s) rewritten, \(result.emails) relay address(es), in \(result.writes) write(s) (ticket \(ticket))")
        invocation.output.line("  undo with: gatehouse apple transfer undo \(planID) --reason TEXT (while nobody has signed in with the new identifiers)")
        return 0
    }

    static func undo(_ invocation: Invocation) throws -> Int32 {
        let result = try AppleTransferApplier(store: invocation.openStore()).undo(planID: try invocation[Arguments.planID], reason: try invocation[Options.reason],
                                                                                  actor: invocation.actor)
        if invocation.json { try invocation.output.json(result); return 0 }
        invocation.output.line("transfer plan \(result.planId) undone: \(result.accounts) account(s) back on the old subs, \(result.emails) relay address(es) back")
        return 0
    }

    static func status(_ invocation: Invocation) throws -> Int32 {
        let status = try AppleTransferStore(store: invocation.openStore()).status(now: .now())
        if invocation.json { try invocation.output.json(status); return 0 }
        invocation.output.line("transfer \(status.transferID): team \(status.fromTeam) → team \(status.toTeam), client id \(status.clientId)")
        invocation.output.line("  stage: \(status.stage); \(status.daysLeft) day(s) left (deadline \(status.deadline))")
        let c = status.counts
        invocation.output.line("  accounts \(c.accounts), collected \(c.collected), exchanged \(c.exchanged), applied \(c.applied), failed \(c.failed)")
        if let plan = status.plan {
            invocation.output.line("  latest plan \(plan.planId): \(plan.status), \(plan.rewrites) rewrite(s), \(plan.stragglers) straggler(s)")
        }
        if !status.failed.isEmpty {
            invocation.output.table(["USER", "ACCOUNT", "STEP", "ERROR"], status.failed.prefix(20).map { [$0.userId, $0.accountId, $0.step, $0.error] })
        }
        invocation.output.line("  next: \(status.next)")
        return 0
    }
}

extension AppleTransferCommands {
    enum Arguments {
        static let file: Argument<String> = .text("FILE", "the file `apple transfer export` wrote on the sending team's store", completion: .files)
        static let planID: Argument<String> = .text("PLAN", "the plan id `apple transfer plan` printed (tp_…)")
    }

    enum Options {
        static let toTeam: Option<String> = .requiredText("to-team", "TEAMID", "the recipient team's Team ID", required: true)
        static let transferredAt: Option<String?> = .text("transferred-at", "DATE", "when the transfer completes in App Store Connect (default now); the deadline is 60 days later")
        static let clientId: Option<String?> = .text("client-id", "ID", "the client id sent to Apple (default: the configured bundle id, else the Services ID)")
        static let recipientElsewhere: Option<Bool> = .flag("recipient-elsewhere", "the recipient runs its own store: collect and export here, exchange there")
        static let limit: Option<Int> = .integer("limit", "N", "ask about at most N accounts this run (default: all)", default: 0, range: 0...100_000_000)
        static let concurrency: Option<Int> = .integer("concurrency", "N", "calls to Apple at once (default 4)", default: 4, range: AppleTransferRunner.concurrencyRange)
        static let retryRefused: Option<Bool> = .flag("retry-refused", "ask again for accounts Apple refused before")
        static let quiet: Option<Bool> = .flag("quiet", short: "q", "no progress line on stderr")
        static let out: Option<String> = .requiredText("out", "FILE", "where to write it (mode 0600)", required: true)
        static let planOut: Option<String?> = .text("out", "FILE", "also write the whole plan, every account, as JSON (mode 0600)")
        static let ticket: Option<String> = .requiredText("ticket", "REF", "the change ticket (kept in the plan and the audit log)", required: true)
        static let yes: Option<Bool> = .flag("yes", "apply without asking")
        static let reason: Option<String> = .requiredText("reason", "TEXT", "why it is undone (kept in the audit log)", required: true)
    }
}
