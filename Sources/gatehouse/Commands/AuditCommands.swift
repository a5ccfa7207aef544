import Foundation
import Gatehouse

/// `gatehouse audit`: list and verify the audit log.
enum AuditCommands: CommandNoun {
    static let name = "audit"
    static let summary = "list and verify the audit log"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            subcommands: [
                CommandSpec(name: "list", summary: "list entries, newest first",
                            options: [
                                Options.since.spec,
                                Options.action.spec,
                                Options.by.spec,
                                Options.subject.spec,
                                Options.limit.spec,
                                .json,
                            ],
                            examples: ["gatehouse audit list --since 7d --action 'policy.*'"],
                            run: list),
                CommandSpec(name: "verify", summary: "check the hash chain: detects edited or deleted entries",
                            options: [
                                Options.expectHead.spec,
                                .json,
                            ],
                            run: verify),
            ],
            defaultSubcommand: "list"
        )
    }

    static func list(_ invocation: Invocation) throws -> Int32 {
        var query = AuditLog.Query(limit: try invocation[Options.limit])
        if let since = try invocation[Options.since] { query.since = try parseSince(since, invocation: invocation) }
        query.action = try invocation[Options.action]
        query.actor = try invocation[Options.by]
        query.subject = try invocation[Options.subject]
        let store = try invocation.openStore()
        let entries = try store.audit.entries(store.db, query)
        if invocation.json { try invocation.output.json(entries); return 0 }
        if entries.isEmpty { invocation.output.line("no audit entries match"); return 0 }
        invocation.output.table(["ID", "AT", "ACTOR", "ACTION", "SUBJECT", "DETAILS"], entries.map { entry in
            [String(entry.id), entry.at.iso8601, entry.actor, entry.action, entry.subject ?? "-", describe(entry.details)]
        })
        return 0
    }

    static func verify(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.openStore()
        let result = try store.audit.verify(store.db, expectedHead: try invocation[Options.expectHead])
        if invocation.json {
            try invocation.output.json(result)
        } else if result.isIntact {
            invocation.output.line("audit chain intact: \(result.entries) entries, head \(result.head)")
        } else {
            invocation.output.line("audit chain BROKEN (\(result.entries) entries):")
            for problem in result.problems { invocation.output.line("  - \(problem)") }
        }
        return result.isIntact ? 0 : 1
    }

    /// `24h`, `7d` (ago) or an ISO-8601 time; anything else is bad usage (exit 2).
    static func parseSince(_ text: String, invocation: Invocation) throws -> Timestamp {
        if let time = Timestamp(iso8601: text) { return time }
        do {
            return Timestamp.now().adding(seconds: -(try Seconds.parse(text)).value)
        } catch let error as GatehouseError where error.message.contains("longer than") {
            throw invocation.usage("--since: \(error.message)" + (error.fix.map { "; \($0)" } ?? ""))
        } catch {
            throw invocation.usage("--since \"\(OperatorText.visible(String(text.prefix(40)), keepLineBreaks: false))\" is neither an ISO-8601 time nor a duration; use e.g. 2026-11-01, 2026-11-01T12:00:00Z, 24h or 7d")
        }
    }

    static func describe(_ details: [String: AuditValue]) -> String {
        details.sorted { $0.key < $1.key }.map { key, value -> String in
            switch value {
            case .string(let text): return "\(key)=\(text)"
            case .int(let number): return "\(key)=\(number)"
            case .bool(let flag): return "\(key)=\(flag)"
            case .list(let items): return "\(key)=[\(items.joined(separator: ","))]"
            case .null: return "\(key)=null"
            }
        }.joined(separator: " ")
    }
}

extension AuditCommands {
    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let action: Option<String?> = .text("action", "ACTION", "only this action, or a prefix ending in * (apple.key.*)")
        static let by: Option<String?> = .text("by", "ACTOR", "only entries by this actor")
        static let expectHead: Option<String?> = .text("expect-head", "HASH", "a head hash recorded earlier: also detects entries deleted from the end")
        static let limit: Option<Int> = .integer("limit", "N", "at most N entries (default 50, at most 10000)", default: 50, range: 1...10_000)
        static let since: Option<String?> = .text("since", "WHEN", "entries at or after a time (ISO-8601) or a duration ago (24h, 7d)")
        static let subject: Option<String?> = .text("subject", "SUBJECT", "only entries about this subject")
    }
}
