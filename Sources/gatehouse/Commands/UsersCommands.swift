import Foundation
import Gatehouse

/// `gatehouse users`: find people, show one user with everything linked to it, list likely split identities.
enum UsersCommands: CommandNoun {
    static let name = "users"
    static let summary = "find users, show linked accounts, list likely split identities"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            subcommands: [
                CommandSpec(name: "search", summary: "find users by any part of the email, name, user id, sub or provider account id",
                            discussion: """
                                Without --by, the query's form decides: better_auth|<id> is a sub; text with @ is part of
                                an email; 32 letters and digits is a user id (or an account id); digits or Apple's
                                000123.<hex>.0123 form is a provider account id; anything else is tried as part of an email
                                and as part of a name. Emails match any part of the address, the domain included
                                (privaterelay, @privaterelay.appleid.com, ana@), case-insensitively; names by case- and
                                accent-insensitive substring. Wildcards are not interpreted: % and _ are ordinary characters.
                                Results come a page at a time (--limit), in --sort order (name for a name search, email
                                otherwise); when there are more, the last line is the command for the next page (--after).
                                Names are found through the gatehouse_user_search index that init and `accounts index`
                                build (`health` says when it is missing or out of date); without it every name is read.
                                """,
                            arguments: [Arguments.query.spec],
                            options: [
                                Options.by.spec,
                                Options.searchLimit.spec,
                                Options.sort.spec,
                                Options.after.spec,
                                Options.provider.spec,
                                Options.flag.spec,
                                Options.createdAfter.spec,
                                Options.createdBefore.spec,
                                .json,
                            ],
                            examples: ["gatehouse users search ana.costa@", "gatehouse users search privaterelay --by email --sort created",
                                       "gatehouse users search 'Ana Costa' --by name --provider google",
                                       "gatehouse users search 001234.0123456789abcdef0123456789abcdef.0001"],
                            run: search),
                CommandSpec(name: "show", summary: "one user: accounts, sessions, sync row, workspaces, subscription, roles, merges",
                            discussion: "Token and password values are never shown, only whether each is present.",
                            arguments: [Arguments.user.spec],
                            options: [
                                Options.sessions.spec,
                                .json,
                            ],
                            examples: ["gatehouse users show ana@example.com", "gatehouse users show 'better_auth|u1AAAA…'"],
                            run: show),
                CommandSpec(name: "duplicates", summary: "pairs of users who are probably one person split in two",
                            discussion: """
                                Scores pairs of users sharing a normalised name (or an email mailbox at different domains):
                                shared session IP addresses, creation times within the window, one private-relay and one
                                real address, a shared user agent. Users already named in a merge record are left out.
                                """,
                            options: [
                                Options.minScore.spec,
                                Options.duplicatesLimit.spec,
                                Options.window.spec,
                                .json,
                            ],
                            examples: ["gatehouse users duplicates --min-score 0.8 --limit 20"],
                            run: duplicates),
                UserDeletionCommands.make(),
            ]
        )
    }

    static func search(_ invocation: Invocation) throws -> Int32 {
        let query = try invocation[Arguments.query]
        let kind = try invocation[Options.by]
        let limit = try invocation[Options.searchLimit]
        let sort = try invocation[Options.sort]
        let after = try invocation[Options.after]
        var filters = UserSearchFilters()
        do {
            filters.provider = try invocation[Options.provider].map { try UserSearchFilters.provider($0, what: "--provider") }
            filters.createdAfter = try invocation[Options.createdAfter].map { try UserSearchFilters.date($0, what: "--created-after") }
            filters.createdBefore = try invocation[Options.createdBefore].map { try UserSearchFilters.date($0, what: "--created-before") }
        } catch let error as GatehouseError {
            throw invocation.usage(error.message)
        }
        for text in try invocation[Options.flag].flatMap({ $0.split(separator: ",").map(String.init) }) {
            do {
                let flag = try NamedChoice.parse(text, as: UserSearchFlag.self)
                if !filters.flags.contains(flag) { filters.flags.append(flag) }
            } catch {
                throw invocation.usage(error.message(field: "--flag", echo: true))
            }
        }
        let result = try UserDirectory(store: invocation.openStore()).search(query, by: kind, limit: limit, sort: sort, after: after, filters: filters)
        if invocation.json {
            try invocation.output.json(result)
            return 0
        }
        let out = invocation.output
        if result.users.isEmpty {
            out.line("no user matches \(UserQuery.display(result.query)) (tried: \(result.kinds.map(\.rawValue).joined(separator: ", ")))")
            return 0
        }
        out.table(["ID", "EMAIL", "NAME", "PROVIDERS", "CREATED", "MATCH", "FLAGS"], result.users.map { user in
            [user.id.rawValue, user.email, user.name, user.providers.isEmpty ? "-" : user.providers.joined(separator: ","),
             user.createdAt?.iso8601 ?? "-", user.matchedBy.rawValue, user.flags.isEmpty ? "-" : user.flags.map(\.code).joined(separator: ",")]
        })
        if let next = result.nextCursor {
            out.line("next page: " + nextPageCommand(invocation, result: result, cursor: next))
        }
        return 0
    }

    /// The command line that shows the page after this one: this search's words with `--after CURSOR`.
    static func nextPageCommand(_ invocation: Invocation, result: UserSearchResult, cursor: String) -> String {
        var words = ["gatehouse", "users", "search", result.query]
        if let kind = try? invocation[Options.by] { words += ["--by", kind.rawValue] }
        if result.limit != 20 { words += ["--limit", String(result.limit)] }
        words += ["--sort", result.sort.rawValue]
        if let provider = try? invocation[Options.provider] { words += ["--provider", provider] }
        for flag in (try? invocation[Options.flag]) ?? [] { words += ["--flag", flag] }
        if let after = try? invocation[Options.createdAfter] { words += ["--created-after", after] }
        if let before = try? invocation[Options.createdBefore] { words += ["--created-before", before] }
        words += ["--after", cursor]
        // The store as given, unless it holds a secret (a password in a URI): the line is printed, and a --store-file
        // or $GATEHOUSE_STORE stays as it was given.
        if let file = (try? invocation[GlobalOptions.storeFile]) ?? nil {
            words += ["--store-file", file]
        } else if let store = (try? invocation[GlobalOptions.store]) ?? nil, let location = try? StoreLocation(store), location.description == store {
            words += ["--store", store]
        }
        return words.map(ShellWord.quoted).joined(separator: " ")
    }

    static func show(_ invocation: Invocation) throws -> Int32 {
        let reference = try invocation[Arguments.user]
        let sessions = try invocation[Options.sessions]
        let detail = try UserDirectory(store: invocation.openStore()).show(reference, latestSessions: sessions)
        if invocation.json { try invocation.output.json(detail); return 0 }
        render(detail, to: invocation.output)
        return 0
    }

    /// Each `out.line` here is one line of the report: a line break in stored data (a name, a user agent, a
    /// workspace name) is shown as `\u{000A}`, as `users search` shows it, never let out to forge a line.
    static func render(_ detail: UserDetail, to output: Output) {
        let out = OneLineOutput(output)
        let user = detail.user
        out.line("user \(user.id)")
        out.line("  name:           \(user.name.isEmpty ? "(none)" : user.name)")
        out.line("  email:          \(user.email.isEmpty ? "(none)" : user.email)\(user.emailVerified ? " (verified)" : " (NOT verified)")")
        out.line("  created:        \(user.createdAt?.iso8601 ?? "-")")
        out.line("  updated:        \(user.updatedAt?.iso8601 ?? "-")")
        if let image = user.image { out.line("  image:          \(image)") }
        if let role = user.role { out.line("  role:           \(role)") }
        if let ban = user.ban {
            out.line("  banned:         " + (ban.banned ? "YES" + (ban.reason.map { " — \($0)" } ?? "") + (ban.expires.map { " until \($0.iso8601)" } ?? "") : "no"))
        }
        out.line("flags:")
        if detail.flags.isEmpty { out.line("  (none)") }
        for flag in detail.flags { out.line("  ! \(flag.message)") }

        out.line("accounts (\(detail.accounts.count)):")
        if detail.accounts.isEmpty { out.line("  (none)") }
        for account in detail.accounts {
            out.line("  \(account.providerId)  \(account.accountId)")
            let remark = BetterAuthProviders.issuerRemark(providerID: account.providerId, recorded: account.issuer).map { " (\($0))" } ?? ""
            out.line("    id \(account.id)" + (account.issuer.map { ", issuer \($0)" } ?? ", issuer (not recorded: database before Better Auth 1.7)") + remark)
            out.line("    created \(account.createdAt?.iso8601 ?? "-"), updated \(account.updatedAt?.iso8601 ?? "-")")
            if let scope = account.scope { out.line("    scopes \(scope)") }
            let present = [("access token", account.hasAccessToken), ("refresh token", account.hasRefreshToken),
                           ("id token", account.hasIdToken), ("password", account.hasPassword)]
            out.line("    " + present.map { "\($0.0): \($0.1 ? "present" : "none")" }.joined(separator: ", "))
            if let expires = account.accessTokenExpiresAt { out.line("    access token expires \(expires.iso8601)") }
            if let expires = account.refreshTokenExpiresAt { out.line("    refresh token expires \(expires.iso8601)") }
        }

        out.line("sessions: \(detail.sessions.total) total, \(detail.sessions.unexpired) unexpired")
        for session in detail.sessions.latest {
            var line = "  \(session.createdAt?.iso8601 ?? "-")  \(session.ipAddress ?? "-")  expires \(session.expiresAt?.iso8601 ?? "-")\(session.expired ? " (expired)" : "")"
            if let admin = session.impersonatedBy { line += "  IMPERSONATED by \(admin)" }
            out.line(line)
            if let agent = session.userAgent { out.line("    \(agent)") }
        }

        let sync = detail.sync
        if let row = sync.user {
            out.line("sync: users row \(row.id), sub \(sync.sub), created \(row.createdAt ?? "-")")
        } else {
            out.line("sync: UNPROVISIONED (no users row for \(sync.sub))")
        }
        if !sync.missingTables.isEmpty { out.line("  (this database has no sync table: \(sync.missingTables.joined(separator: ", ")))") }
        out.line("  workspaces owned (\(sync.workspaces.count)):" + (sync.workspaces.isEmpty ? " none" : ""))
        for workspace in sync.workspaces { out.line("    \(workspace.id)  \(workspace.name)  created \(workspace.createdAt ?? "-")") }
        out.line("  subscriptions (\(sync.subscriptions.count)):" + (sync.subscriptions.isEmpty ? " none" : ""))
        for subscription in sync.subscriptions {
            out.line("    \(subscription.id)  \(subscription.plan)  \(subscription.status)  period ends \(subscription.currentPeriodEnd ?? "-")")
        }
        out.line("  allow-list roles: " + (sync.roles.isEmpty ? "none" : sync.roles.map { "\($0.role) (since \($0.grantedAt ?? "-"))" }.joined(separator: ", ")))

        if !detail.merges.available {
            out.line("merge history: none (merges are not recorded in this store yet)")
        } else if detail.merges.records.isEmpty {
            out.line("merge history: none")
        } else {
            out.line("merge history (\(detail.merges.records.count)):")
            for record in detail.merges.records {
                out.line("  " + record.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            }
        }
    }

    static func duplicates(_ invocation: Invocation) throws -> Int32 {
        var minScore = 0.7
        if let text = try invocation[Options.minScore] {
            guard let value = Double(text), value.isFinite, (0...1).contains(value) else {
                throw invocation.usage("--min-score must be a number from 0 to 1, got \"\(text.prefix(40))\"")
            }
            minScore = value
        }
        let limit = try invocation[Options.duplicatesLimit]
        let window = try invocation[Options.window]
        let report = try SplitIdentityFinder(store: invocation.openStore()).find(minScore: minScore, limit: limit, windowDays: window)
        if invocation.json { try invocation.output.json(report); return 0 }
        let out = invocation.output
        out.line("\(report.pairsFound) pair(s) scoring at least \(String(format: "%.2f", report.minScore)) among \(report.usersScanned) users "
                 + "(\(report.nameGroups) shared names, \(report.pairsScored) pairs scored)"
                 + (report.pairsFound > report.candidates.count ? "; showing the best \(report.candidates.count)" : ""))
        if report.mergeRecordsChecked { out.line("users already in a merge record are left out (\(report.usersExcludedAsMerged))") }
        for (number, candidate) in report.candidates.enumerated() {
            out.line("")
            out.line("\(number + 1). score \(String(format: "%.2f", candidate.score))")
            for user in [candidate.earlier, candidate.later] {
                out.line("   \(user.id)  \(user.email)  \"\(user.name)\"  \(user.providers.isEmpty ? "no accounts" : user.providers.joined(separator: "+"))  created \(user.createdAt?.iso8601 ?? "-")")
            }
            for reason in candidate.reasons { out.line("   +\(String(format: "%.2f", Double(reason.points) / 100))  \(reason.detail)") }
        }
        return 0
    }
}

/// Writes report lines that each stay one line, whatever the data in them holds (see `UsersCommands.render`).
struct OneLineOutput {
    let output: Output
    init(_ output: Output) { self.output = output }
    func line(_ text: String = "") { output.line(OperatorText.visible(text, keepLineBreaks: false)) }
}

extension UsersCommands {
    /// The positional arguments these commands read, each declared once.
    enum Arguments {
        static let query: Argument<String> = .text("QUERY", "what to look for (at most \(UserQuery.maxBytes) bytes)")
        static let user: Argument<String> = .text("USER", "a user id, an email, or a sub better_auth|<id>")
    }

    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let searchLimit: Option<Int> = .integer("limit", "N", "at most N users (default 20, at most \(UserDirectory.maxLimit))", default: 20, range: 1...UserDirectory.maxLimit)
        static let duplicatesLimit: Option<Int> = .integer("limit", "N", "at most N pairs, best first (default 50, at most 10000)", default: 50, range: 1...10_000)
        static let sort: Option<UserSort?> = .choice("sort", "ORDER", "page in this order: " + UserSort.allCases.map(\.rawValue).joined(separator: ", ")
                                                        + " (default: name for --by name; match for --by email, the addresses starting with the query first; email otherwise)", as: UserSort.self)
        static let after: Option<String?> = .text("after", "CURSOR", "the page after CURSOR (the one the previous page's last line or nextCursor gives)")
        static let provider: Option<String?> = .text("provider", "ID", "only users with an account of this provider (apple, google, credential, …)")
        static let flag: Option<[String]> = .texts("flag", "FLAG", "only users with this flag: " + UserSearchFlag.allCases.map(\.rawValue).joined(separator: ", "))
        static let createdAfter: Option<String?> = .text("created-after", "DATE", "only users created at or after DATE (2026-11-01)")
        static let createdBefore: Option<String?> = .text("created-before", "DATE", "only users created before DATE")
        static let by: Option<UserQueryKind?> = .choice("by", "KIND", "match only as: " + UserQueryKind.allCases.map(\.rawValue).joined(separator: ", "), as: UserQueryKind.self)
        static let minScore: Option<String?> = .text("min-score", "S", "only pairs scoring at least S, from 0 to 1 (default 0.7)")
        static let sessions: Option<Int> = .integer("sessions", "N", "how many of the latest sessions to list (default 5, at most 100)", default: 5, range: 0...100)
        static let window: Option<Int> = .integer("window", "DAYS", "creation times this close count as evidence (default 30)", default: 30, range: 1...3650)
    }
}
