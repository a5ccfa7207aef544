import Console
import Foundation
import Gatehouse
import JOSE

/// `gatehouse approvals`: which console actions need a second admin's approval, and the requests waiting for one.
/// The CLI on the host is the break-glass path: an action that needs approval runs here at once and is audited as
/// bypassed (`ApprovalBypass`), and `health` warns for a day after.
enum ApprovalsCommands: CommandNoun {
    static let name = "approvals"
    static let summary = "two-person approval: which console actions need a second admin, and the requests waiting"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name, summary: summary,
            discussion: """
                In the console, an action that needs approval answers 202 with a request id and changes nothing; another admin
                approves it on the Approvals page (or here), and it then runs exactly as requested, against the store as it is
                then: a merge plan that went stale is refused as stale. Nobody approves their own request. A request expires
                after 24 hours unless --expires-after says otherwise. The action's own audit entry names both admins.
                Run on the host, an action that needs approval proceeds and is audited as "approval: bypassed (cli)";
                `gatehouse health` warns for 24 hours after. Actions: \(ApprovalAction.allCases.map(\.rawValue).joined(separator: " ")).
                """,
            subcommands: [
                CommandSpec(name: "require", summary: "set which actions need a second admin's approval (none: no action)",
                            arguments: [Arguments.actions.spec], options: [Options.expiresAfter.spec, .json],
                            examples: ["gatehouse approvals require merge.apply user.delete policy.set", "gatehouse approvals require none",
                                       "gatehouse approvals require merge.apply --expires-after 8h"],
                            run: require),
                CommandSpec(name: "list", summary: "the requests waiting for approval (--all: every request), newest first",
                            options: [Options.all.spec, Options.limit.spec, .json], examples: ["gatehouse approvals list --json"], run: list),
                CommandSpec(name: "show", summary: "one request: what it runs, who asked, its detail and how it ended",
                            arguments: [Arguments.id.spec], options: [.json], run: show),
                CommandSpec(name: "approve", summary: "run a request another admin made, as they made it (audited with both names)",
                            arguments: [Arguments.id.spec], options: [.json], examples: ["gatehouse approvals approve 3"], run: approve),
                CommandSpec(name: "deny", summary: "close a request without running it",
                            arguments: [Arguments.id.spec], options: [Options.reason.spec, .json],
                            examples: ["gatehouse approvals deny 3 --reason \"wrong user: see SUP-7\""], run: deny),
            ],
            defaultSubcommand: "list",
            examples: ["gatehouse approvals require merge.apply merge.undo user.delete", "gatehouse approvals", "gatehouse approvals approve 3"]
        )
    }

    static func require(_ invocation: Invocation) throws -> Int32 {
        let words = try invocation[Arguments.actions].split(separator: " ").map(String.init)
        let actions: Set<ApprovalAction>
        if words == ["none"] {
            actions = []
        } else {
            guard !words.contains("none") else { throw invocation.usage("none stands alone: it means no action needs approval") }
            actions = Set(try words.map { try ApprovalAction.named($0) })
        }
        let settings = try ApprovalStore(store: try invocation.openStore())
            .require(actions, expiresAfter: try invocation[Options.expiresAfter], actor: try invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(settings); return 0 }
        invocation.output.line(settings.actions.isEmpty ? "no action needs a second admin's approval"
            : "a second admin approves in the console: \(settings.actions.map(\.rawValue).joined(separator: " ")); a request waits \(settings.expiresAfter)")
        return 0
    }

    static func list(_ invocation: Invocation) throws -> Int32 {
        let approvals = ApprovalStore(store: try invocation.openStore())
        let all = try invocation[Options.all]
        let rows = try approvals.list(pendingOnly: !all, limit: try invocation[Options.limit], now: .now())
        if invocation.json { try invocation.output.json(rows); return 0 }
        let settings = try approvals.settings()
        invocation.output.line(settings.actions.isEmpty ? "no action needs approval (`gatehouse approvals require ACTION...`)"
            : "needs approval: \(settings.actions.map(\.rawValue).joined(separator: " "))")
        if rows.isEmpty { invocation.output.line(all ? "no request was ever made" : "no request waits for approval"); return 0 }
        invocation.output.table(["ID", "STATUS", "ACTION", "REQUEST", "BY", "AT", "EXPIRES", "DECIDED BY"], rows.map {
            [String($0.id), $0.status.rawValue.uppercased(), $0.action.rawValue, "\($0.method) \($0.path)", $0.requestedBy, $0.requestedAt.iso8601,
             $0.expiresAt.iso8601, $0.decidedBy ?? "-"]
        })
        return 0
    }

    static func show(_ invocation: Invocation) throws -> Int32 {
        let approval = try ApprovalStore(store: try invocation.openStore()).show(try invocation[Arguments.id], now: .now())
        if invocation.json { try invocation.output.json(approval); return 0 }
        invocation.output.line("approval \(approval.id): \(approval.status.rawValue.uppercased())")
        invocation.output.line("  \(approval.action.rawValue) (\(approval.action.summary)): \(approval.method) \(approval.path)")
        invocation.output.line("  requested by \(approval.requestedBy) at \(approval.requestedAt.iso8601); expires \(approval.expiresAt.iso8601)")
        if let body = approval.body { invocation.output.line("  body: \(String(decoding: try JSONValue.serialize(body.objectValue ?? [:]), as: UTF8.self))") }
        if let by = approval.decidedBy { invocation.output.line("  decided by \(by) at \(approval.decidedAt?.iso8601 ?? "?")\(approval.reason.map { ": \($0)" } ?? "")") }
        if let status = approval.outcomeStatus { invocation.output.line("  the action answered HTTP \(status)") }
        if let note = approval.outcome?.objectValue?["interrupted"]?.stringValue { invocation.output.line("  interrupted: \(note)") }
        return 0
    }

    static func approve(_ invocation: Invocation) throws -> Int32 {
        let id = try invocation[Arguments.id]
        let result = try ApprovalRunner.approve(id, storePath: try invocation.storePath(), configurationPath: invocation.configurationPath,
                                                actor: try invocation.actor)
        let answer = (try? JSONValue.parse(result.body)) ?? .null
        if invocation.json {
            try invocation.output.json(ApproveResult(approval: id, status: result.status, answer: answer))
        } else if (200..<300).contains(result.status) {
            invocation.output.line("approval \(id) approved: the action ran (HTTP \(result.status))")
        }
        guard (200..<300).contains(result.status) else {
            let message = answer.objectValue?["error"]?.objectValue?["message"]?.stringValue ?? answer.objectValue?["message"]?.stringValue ?? "HTTP \(result.status)"
            throw GatehouseError("approval \(id) was approved but its action was refused: \(message)",
                                 fix: "the request is closed as failed; make the change again in the console if it is still wanted")
        }
        return 0
    }

    struct ApproveResult: Encodable {
        let approval: Int64
        let status: Int
        let answer: JSONValue
    }

    static func deny(_ invocation: Invocation) throws -> Int32 {
        let approval = try ApprovalStore(store: try invocation.openStore())
            .deny(try invocation[Arguments.id], reason: try invocation[Options.reason], actor: try invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(approval); return 0 }
        invocation.output.line("approval \(approval.id) denied: \(approval.reason ?? "")")
        return 0
    }
}

extension ApprovalsCommands {
    enum Arguments {
        static let actions: Argument<String> = .words("ACTION", "one or more of \(ApprovalAction.allCases.map(\.rawValue).joined(separator: " ")), or none")
        static let id: Argument<Int64> = .number("ID", "the request's number (see `approvals list`)")
    }

    enum Options {
        static let expiresAfter: Option<Seconds?> = .duration("expires-after", "DURATION", "how long a request waits for approval (default 24h; 1m to 30d)")
        static let all: Option<Bool> = .flag("all", "every request, not only the pending ones")
        static let limit: Option<Int> = .integer("limit", "N", "how many (default 200, at most 10000)", default: 200, range: 1...10_000)
        static let reason: Option<String> = .requiredText("reason", "TEXT", "why it is denied (kept in the audit log)", required: true)
    }
}
