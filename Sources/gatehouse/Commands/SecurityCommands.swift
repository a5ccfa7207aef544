import Foundation
import Gatehouse

/// `gatehouse security events`: one inbox for every provider's security events (Apple's notifications, Google's
/// Cross-Account Protection), and the undo of what an event changed.
enum SecurityCommands: CommandNoun {
    static let name = "security"
    static let summary = "one inbox of Apple's and Google's security events, with what each did and its undo"

    static func make() -> CommandSpec {
        CommandSpec(name: name, summary: summary, subcommands: [
            CommandSpec(name: "events", summary: "Apple's and Google's security events, newest first",
                        subcommands: [
                            CommandSpec(name: "list", summary: "the latest events: when, provider, event, user, what Gatehouse did, whether it can be undone",
                                        options: [Options.provider.spec, Options.event.spec, Options.since.spec, Options.limit.spec, .json],
                                        examples: ["gatehouse security events --provider google --since 7d", "gatehouse security events --event account-disabled"],
                                        run: list),
                            CommandSpec(name: "refused", summary: "the tokens refused (forged, another app's, unparseable): a count per provider, reason and source",
                                        options: [Options.provider.spec, .json],
                                        examples: ["gatehouse security events refused --provider google"],
                                        run: refused),
                            CommandSpec(name: "undo", summary: "give back what a Google event changed (flags, tokens; ended sessions cannot come back)",
                                        arguments: [Arguments.event.spec], options: [Options.reason.spec, .json],
                                        examples: ["gatehouse security events undo google:12 --reason \"SUP-77: false alarm\""],
                                        run: undo),
                        ],
                        defaultSubcommand: "list"),
        ])
    }

    static func list(_ invocation: Invocation) throws -> Int32 {
        let since = try invocation[Options.since].map { try AuditCommands.parseSince($0, invocation: invocation) }
        let entries = try SecurityEventInbox.list(store: try invocation.openStore(), provider: try invocation[Options.provider],
                                                  event: try invocation[Options.event], since: since, limit: try invocation[Options.limit])
        if invocation.json { try invocation.output.json(entries); return 0 }
        if entries.isEmpty {
            invocation.output.line("no security event recorded\(since == nil ? "" : " since then")\(try invocation[Options.event].map { " of type \($0)" } ?? ""): Apple's arrive through `gatehouse apple notifications serve`, Google's through `gatehouse google risc serve` (ops/runbooks/apple-notifications.md, google-risc.md)")
            return 0
        }
        // The user by id, with their email as it is now.
        func user(_ entry: SecurityEventInbox.Entry) -> String {
            guard let id = entry.userId else { return "-" }
            return entry.userEmail.map { "\(id) (\($0))" } ?? id
        }
        invocation.output.table(["EVENT", "RECEIVED", "PROVIDER", "TYPE", "USER", "WHAT GATEHOUSE DID", "UNDO"], entries.map {
            ["\($0.provider):\($0.id)", $0.receivedAt, $0.provider, $0.event, user($0), $0.action,
             $0.undoneAt != nil ? "undone" : $0.undoable ? "yes" : ($0.sessionsEnded > 0 ? "no (sessions cannot come back)" : "-")]
        })
        return 0
    }

    static func refused(_ invocation: Invocation) throws -> Int32 {
        let counters = try SecurityEventInbox.refusals(store: try invocation.openStore(), provider: try invocation[Options.provider])
        if invocation.json { try invocation.output.json(counters); return 0 }
        guard !counters.isEmpty else {
            invocation.output.line("no token refused")
            return 0
        }
        invocation.output.table(["PROVIDER", "REASON", "FROM", "COUNT", "FIRST", "LAST", "THE LAST ONE"], counters.map {
            [$0.provider, $0.reason, $0.source, String($0.count), $0.firstSeen, $0.lastSeen, $0.detail]
        })
        return 0
    }

    static func undo(_ invocation: Invocation) throws -> Int32 {
        let reference = try invocation[Arguments.event]
        let parts = reference.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let id = Int64(parts[1]), id > 0 else {
            throw invocation.usage("\"\(reference.prefix(40))\" is not an event: write PROVIDER:ID as `security events` shows it (google:12)")
        }
        guard parts[0] == "google" else {
            throw GatehouseError.invalid("Apple's notifications change nothing an undo gives back here", fix: "see `gatehouse apple notifications list`; a consent revoked is restored by the person signing in again")
        }
        let result = try GoogleSecurityInbox(store: try invocation.openStore(), keys: GoogleRISCKeys())
            .undo(id: id, reason: try invocation[Options.reason], actor: try invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(result); return 0 }
        invocation.output.line("google:\(id) undone: \(result.restored) given back\(result.sessionsNotRestored > 0 ? "; the \(result.sessionsNotRestored) session(s) it ended cannot come back" : "")")
        return 0
    }
}

extension SecurityCommands {
    enum Arguments {
        static let event: Argument<String> = .text("EVENT", "the event as `security events` shows it: PROVIDER:ID")
    }

    enum Options {
        static let provider: Option<SecurityEventInbox.Provider?> = .choice("provider", "apple|google", "one provider's events", as: SecurityEventInbox.Provider.self)
        static let event: Option<String?> = .text("event", "TYPE", "one event type: sessions-revoked, account-disabled, consent-revoked, …")
        static let since: Option<String?> = .text("since", "TIME", "received at or after: 24h, 7d, or an ISO-8601 time")
        static let limit: Option<Int> = .integer("limit", "N", "how many (default 200, at most 5000)", default: 200, range: 1...5000)
        static let reason: Option<String> = .requiredText("reason", "TEXT", "why it is undone (kept in the audit log)", required: true)
    }
}
