import Foundation
import Gatehouse

/// `gatehouse accounts`: integrity of the links between Better Auth's tables and the sync server's.
enum AccountsCommands: CommandNoun {
    static let name = "accounts"
    static let summary = "check the integrity of users, accounts, sessions and sync rows"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            subcommands: [
                CommandSpec(name: "check", summary: "integrity findings with counts and samples",
                            discussion: """
                                Account rows and sessions whose user is missing, users without accounts, sync subs not of
                                the form better_auth|<existing user id>, users with no sync row, provider accounts attached
                                twice. Exit status 0 when the check ran (findings or not), 1 when it could not run.
                                """,
                            options: [.json],
                            run: check),
                CommandSpec(name: "index", summary: "add the gatehouse_ indexes that speed up account inspection and name search",
                            discussion: """
                                `gatehouse init` adds them to Better Auth tables that Gatehouse created. On a database that
                                Better Auth created, init leaves its schema alone: run this to add them (audited).
                                Also builds the name search index (gatehouse_user_search: SQLite FTS5 trigrams; on Postgres a
                                key table, with a pg_trgm GIN index where the database has pg_trgm), or folds in the users
                                Better Auth added, renamed or deleted since; triggers on the user table record which, and
                                searches read those directly until then. With --rebuild, it is built afresh.
                                """,
                            options: [Options.rebuild.spec, .json],
                            run: index),
            ],
            defaultSubcommand: "check"
        )
    }

    static func check(_ invocation: Invocation) throws -> Int32 {
        let report = try IntegrityChecker(store: invocation.openStore()).run()
        if invocation.json { try invocation.output.json(report); return 0 }
        let out = invocation.output
        out.line("schema: \(report.schema)")
        for finding in report.findings {
            let mark = finding.count == 0 ? "ok  " : finding.severity == "error" ? "ERR " : "WARN"
            out.line("\(mark) \(finding.count.formatted())  \(finding.title)")
            for sample in finding.samples { out.line("       \(sample)") }
            if finding.count > 0 { out.line("       fix: \(finding.fix)") }
        }
        for code in report.skipped { out.line("skip \(code) (this database has no sync-server tables)") }
        if !report.missingIndexes.isEmpty {
            out.line("note: missing indexes \(report.missingIndexes.joined(separator: ", ")): run `gatehouse accounts index`")
        }
        out.line(report.isClean ? "no findings" : "\(report.findings.filter { $0.count > 0 }.count) kind(s) of finding")
        return 0
    }

    static func index(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.openStore()
        let created = try AccountIndexes.create(store, actor: invocation.actor)
        let search = try UserSearchIndex.ensure(store, actor: invocation.actor, rebuild: try invocation[Options.rebuild])
        let searchLine: String, searchReport: SearchIndexReport
        switch search {
        case .built(let users):
            searchLine = "built the name search index \(UserSearchIndex.table) (\(users.formatted()) named users)"
            searchReport = SearchIndexReport(action: "built", users: users, reason: nil)
        case .folded(let users):
            searchLine = "name search index: folded in \(users.formatted()) changed user(s)"
            searchReport = SearchIndexReport(action: "folded", users: users, reason: nil)
        case .unchanged:
            searchLine = "the name search index is current"
            searchReport = SearchIndexReport(action: "unchanged", users: nil, reason: nil)
        case .unsupported(let reason):
            searchLine = "no name search index: \(reason)"
            searchReport = SearchIndexReport(action: "unsupported", users: nil, reason: reason)
        }
        if invocation.json {
            try invocation.output.json(IndexReport(created: created, searchIndex: searchReport))
            return 0
        }
        invocation.output.line(created.isEmpty ? "all gatehouse indexes are present" : "created \(created.joined(separator: ", "))")
        invocation.output.line(searchLine)
        return 0
    }

    /// `accounts index --json`.
    struct IndexReport: Encodable {
        let created: [String]
        let searchIndex: SearchIndexReport
    }

    /// What `accounts index` did to the name search index: built, folded (users = how many), unchanged, unsupported.
    struct SearchIndexReport: Encodable {
        let action: String
        let users: Int?
        let reason: String?
    }
}

extension AccountsCommands {
    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let rebuild: Option<Bool> = .flag("rebuild", "build the name search index afresh even when it is current")
    }
}
