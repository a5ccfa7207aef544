import Foundation
import Gatehouse

/// `gatehouse gates`: the Apple-membership gate per provider and platform, with Guideline 4.8 enforced.
enum GatesCommands: CommandNoun {
    static let name = "gates"
    static let summary = "the Apple-membership gate: which provider may go live on which platform"

    /// One line per requirement, for the help page (computed only when it is shown).
    static var requirementLines: String {
        GateRequirement.allCases.map { requirement in
            "  \(requirement.provider.rawValue) \(requirement.rawValue) (\(requirement.platforms.map(\.rawValue).joined(separator: ", ")); \(requirement.source.rawValue)): \(requirement.summary)"
        }.joined(separator: "\n")
    }

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            discussion: """
                Each provider × platform (ios, desktop, web) is blocked (a requirement is unmet), ready (all met),
                live (enabled, all met) or lapsed (enabled, but a requirement has since lapsed). Operator requirements
                are declared with evidence; derived ones follow the key ring and the provider configuration.
                \(Guideline48.rule): Google cannot be enabled on ios unless Apple is live there, and Apple cannot be
                disabled on ios while Google is enabled there. Requirements:
                \(requirementLines)
                """,
            subcommands: [
                CommandSpec(name: "show", summary: "the board: states, unmet requirements, next expiry, the membership's renewal",
                            options: [.json], run: show),
                CommandSpec(name: "set", summary: "declare an operator requirement met or unmet, with evidence",
                            discussion: """
                                Derived requirements (p8_key, bundle_audience, oauth_client) cannot be set: they follow the key
                                ring and `gatehouse providers`. The membership needs --expires (its renewal date) when met; a
                                date in the past is refused without --force. DATE is YYYY-MM-DD (midnight UTC) or ISO-8601.
                                Without --platform a declaration covers every platform the requirement applies to; a
                                platform's own declaration overrides it there.
                                """,
                            arguments: [Arguments.provider.spec, Arguments.requirement.spec, Arguments.state.spec],
                            options: [
                                Options.platform.spec,
                                Options.evidence.spec,
                                Options.expires.spec,
                                Options.force.spec,
                                .json,
                            ],
                            examples: [
                                "gatehouse gates set apple membership met --evidence \"order W123456, team TEAMID1234\" --expires 2027-03-01",
                                "gatehouse gates set apple services_id met --platform desktop --evidence \"com.example.web created\"",
                            ],
                            run: set),
                CommandSpec(name: "enable", summary: "offer a provider on a platform (it must be ready)",
                            arguments: [Arguments.provider.spec],
                            options: [
                                Options.requiredPlatform.spec,
                                Options.reason.spec,
                                .json,
                            ],
                            examples: ["gatehouse gates enable apple --platform ios --reason \"iOS 2.0 ships Sign in with Apple\""],
                            run: enable),
                CommandSpec(name: "disable", summary: "stop offering a provider on a platform",
                            arguments: [Arguments.provider.spec],
                            options: [
                                Options.requiredPlatform.spec,
                                Options.reason.spec,
                                .json,
                            ],
                            run: disable),
                CommandSpec(name: "history", summary: "every declaration, enable and disable, newest first",
                            options: [Options.limit.spec, .json],
                            run: history),
                CommandSpec(name: "export", summary: "which providers the app should offer on each platform",
                            discussion: """
                                Only live gates are offered, and Google is never offered on ios without Apple. json: {"generatedAt",
                                "offer": {"ios": [...], "desktop": [...], "web": [...]}, "withheld": [{provider, platform, state,
                                reason}], "validUntil"}; validUntil (absent when nothing expires) is the earliest expiry among the
                                offered gates' requirements: read the export again after it.
                                """,
                            options: [.json], run: export),
            ],
            defaultSubcommand: "show",
            examples: [
                "gatehouse gates",
                "gatehouse gates set apple membership met --evidence \"renewed, receipt 42\" --expires 2027-03-01",
                "gatehouse gates enable google --platform ios --reason \"iOS 2.0\"",
                "gatehouse gates export --json",
            ]
        )
    }

    static func show(_ invocation: Invocation) throws -> Int32 {
        let board = try GateStore(store: invocation.openStore()).board(now: .now())
        if invocation.json { try invocation.output.json(board); return 0 }
        render(board, invocation.output)
        return 0
    }

    /// The STATE of `gates set`.
    enum RequirementState: String, CaseIterable { case met, unmet }

    static func set(_ invocation: Invocation) throws -> Int32 {
        let provider = try invocation[Arguments.provider]
        let requirement = try GateRequirement.named(try invocation[Arguments.requirement], provider: provider)
        let met = try invocation[Arguments.state] == .met
        var change = GateChange(requirement: requirement, platform: try invocation[Options.platform].map(GatePlatform.named), met: met,
                                evidence: try invocation[Options.evidence], force: try invocation[Options.force])
        if let text = try invocation[Options.expires] { change.expires = try GateInput.date(text, field: .expires) }
        let result = try GateStore(store: invocation.openStore()).set(change, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(result); return 0 }
        let out = invocation.output
        let was = result.previous.map { $0.met ? "met" : "unmet" } ?? "undeclared"
        out.line("\(provider.rawValue) \(requirement.rawValue) (\(result.platform)): \(was) → \(met ? "met" : "unmet")" +
                 (result.expiresAt.map { ", expires \($0.iso8601)" } ?? ""))
        for transition in result.transitions { out.line("\(transition.gate): \(transition.from.rawValue) → \(transition.to.rawValue)") }
        for warning in result.warnings { out.error("warning: \(warning)") }
        return 0
    }

    static func enable(_ invocation: Invocation) throws -> Int32 {
        try change(invocation, enable: true)
    }

    static func disable(_ invocation: Invocation) throws -> Int32 {
        try change(invocation, enable: false)
    }

    static func change(_ invocation: Invocation, enable: Bool) throws -> Int32 {
        let provider = try invocation[Arguments.provider]
        let platform = try GatePlatform.named(try invocation[Options.requiredPlatform])
        let reason = try invocation[Options.reason]
        let gates = GateStore(store: try invocation.openStore())
        let result = enable
            ? try gates.enable(provider, on: platform, reason: reason, actor: invocation.actor, now: .now())
            : try gates.disable(provider, on: platform, reason: reason, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(result); return 0 }
        if result.changed {
            invocation.output.line("\(result.gate.prose): \(enable ? "enabled" : "disabled") (now \(result.gate.state.rawValue))")
        } else {
            invocation.output.line("\(result.gate.prose) is already \(enable ? "enabled" : "disabled") (\(result.gate.state.rawValue)); nothing changed")
        }
        return 0
    }

    static func history(_ invocation: Invocation) throws -> Int32 {
        let limit = try invocation[Options.limit]
        let entries = try GateStore(store: invocation.openStore()).history(limit: limit)
        if invocation.json { try invocation.output.json(entries); return 0 }
        if entries.isEmpty { invocation.output.line("no gate changes yet"); return 0 }
        invocation.output.table(["AT", "ACTOR", "ACTION", "WHAT", "CHANGE", "EVIDENCE / REASON"], entries.map { entry in
            var what = "\(entry.provider)/\(entry.platform)"
            var change = "\(entry.fromState?.rawValue ?? "?") → \(entry.toState?.rawValue ?? "?")"
            if let requirement = entry.requirement {
                what = "\(entry.provider) \(requirement) (\(entry.platform))"
                change = entry.met == true ? "met" : "unmet"
                if let expires = entry.expiresAt { change += " until \(expires.iso8601)" }
                if entry.forced { change += " (forced)" }
            }
            return [entry.at.iso8601, entry.actor, entry.action.rawValue, what, change, oneLine(entry.text)]
        })
        return 0
    }

    static func export(_ invocation: Invocation) throws -> Int32 {
        let export = try GateStore(store: invocation.openStore()).export(now: .now())
        if invocation.json { try invocation.output.json(export); return 0 }
        for platform in GatePlatform.allCases {
            let providers = export.providers(on: platform).map(\.rawValue)
            invocation.output.line("\(platform.rawValue): \(providers.isEmpty ? "(none)" : providers.joined(separator: ", "))")
        }
        for item in export.withheld {
            invocation.output.line("withheld: \(item.provider.rawValue) on \(item.platform.rawValue) — \(item.reason)")
        }
        if let until = export.validUntil { invocation.output.line("valid until \(until.iso8601)") }
        return 0
    }

    static func render(_ board: GateBoard, _ out: Output) {
        out.table(["PROVIDER"] + GatePlatform.allCases.map { $0.rawValue.uppercased() }, GateProvider.allCases.map { provider in
            [provider.rawValue] + GatePlatform.allCases.map { board.gate(provider, $0).state.rawValue }
        })
        out.line()
        out.table(["GATE", "STATE", "UNMET", "NEXT EXPIRY"], board.gates.map { gate in
            [gate.name, gate.state.rawValue, gate.unmet.isEmpty ? "-" : gate.unmetDescription, gate.nextExpiry?.iso8601 ?? "-"]
        })
        out.line()
        if let renewal = board.membership {
            out.line("membership: \(renewal.level == .ok ? "" : renewal.level.rawValue.uppercased() + ": ")\(renewal.message)")
        } else {
            out.line("membership: not declared met (every Apple gate is blocked until it is)")
        }
        out.line((board.guideline48.breached ? "CRITICAL: " : "") + board.guideline48.message)
        if let next = board.nextExpiry { out.line("next expiry: \(next.iso8601)") }
        var seen = Set<String>()
        let fixes = board.gates.filter { $0.state == .blocked || $0.state == .lapsed }.flatMap(\.fixes).filter { seen.insert($0).inserted }
        if !fixes.isEmpty {
            out.line("to do:")
            for fix in fixes { out.line("  \(fix)") }
        }
    }

    static func oneLine(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " ")
        return flat.count > 80 ? String(flat.prefix(79)) + "…" : flat
    }
}

extension GatesCommands {
    /// The positional arguments these commands read, each declared once. The requirement is judged with its provider.
    enum Arguments {
        static let provider: Argument<GateProvider> = .parsed("PROVIDER", "apple or google", completion: .words { GateProvider.allCases.map(\.rawValue) },
                                                              GateProvider.named)
        static let requirement: Argument<String> = .text("REQUIREMENT", "membership, app_id, services_id, return_urls",
                                                         completion: .words { GateRequirement.allCases.filter { $0.source == .operator }.map(\.rawValue) })
        static let state: Argument<RequirementState> = .parsed("STATE", "met or unmet", completion: .words { RequirementState.allCases.map(\.rawValue) }) { text in
            do throws(NamedChoice.Refusal) { return try NamedChoice.parse(text, as: RequirementState.self) } catch {
                throw GatehouseError.invalid("\"\(error.shownGiven)\" is not a requirement state", fix: "write met or unmet")
            }
        }
    }

    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let platform: Option<String?> = .text("platform", "P", "only for this platform (ios, desktop, web)")
        static let requiredPlatform: Option<String> = .requiredText("platform", "P", "ios, desktop or web", required: true)
        static let reason: Option<String> = .requiredText("reason", "TEXT", "why (kept in the history and the audit log)", required: true)
        static let evidence: Option<String> = .requiredText("evidence", "TEXT", "what was checked and where (at most \(GateInput.maxTextLength) characters)", required: true)
        static let expires: Option<String?> = .text("expires", "DATE", "when it stops being met: the membership's renewal date")
        static let force: Option<Bool> = .flag("force", "accept an expiry in the past (it reads as expired)")
        static let limit: Option<Int> = .integer("limit", "N", "at most N entries (default 200, at most 100000)", default: 200, range: 1...100_000)
    }
}
