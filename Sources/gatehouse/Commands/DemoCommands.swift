import Foundation
import Gatehouse
import HTTPServer

/// `gatehouse demo seed`: realistic demo data.
enum DemoCommands: CommandNoun {
    static let name = "demo"
    static let summary = "fill a store with realistic demo data"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            subcommands: [
                CommandSpec(name: "seed", summary: "add deterministic demo users with accounts, sessions and sync rows",
                            discussion: """
                                Creates the store if needed. The same --seed and --anchor give the same rows. Tokens in the
                                demo data are random placeholders, not real credentials. Every date a row was created or
                                last used is at or before the anchor (expiry dates may lie after it). On a store with no
                                console admin, creates the admin `admin` (role admin) and prints its generated password
                                once, as `init` does.
                                """,
                            options: [
                                Options.users.spec,
                                Options.seed.spec,
                                Options.anchor.spec,
                                Options.quiet.spec,
                                .json,
                            ],
                            examples: ["gatehouse demo seed --store demo.sqlite --users 100000 --seed 7"],
                            run: seed),
            ]
        )
    }

    static func seed(_ invocation: Invocation) throws -> Int32 {
        let count = try invocation[Options.users]
        guard let seed = UInt64(try invocation[Options.seed] ?? "1") else {
            throw invocation.usage("--seed must be a non-negative whole number")
        }
        var anchor = Timestamp(milliseconds: Timestamp.now().milliseconds / 86_400_000 * 86_400_000)
        if let text = try invocation[Options.anchor] {
            guard let time = Timestamp(iso8601: text) else { throw invocation.usage("--anchor must be an ISO-8601 time, got \"\(text.prefix(40))\"") }
            guard DemoSeeder.anchorRange.contains(time) else {
                throw invocation.usage("--anchor must be from \(DemoSeeder.anchorRange.lowerBound.iso8601.prefix(10)) to \(DemoSeeder.anchorRange.upperBound.iso8601.prefix(10)): the demo data spans two years before it and weeks after it, and every date must stay within the years 1970 to 9999")
            }
            anchor = time
        }
        let (store, initialized) = try Store.initialize(path: invocation.storePath(), configurationPath: GlobalOptions.configurationPath(invocation),
                                              actor: invocation.actor)
        try DemoSeeder.checkCanSeed(store)
        // Before the rows, so a seed stopped half-way still leaves a store the console can be entered with.
        let firstAdmin = try FirstAdmin.ensure(in: store, username: try AdminUsername(FirstAdmin.defaultUsername), password: nil,
                                               actor: invocation.actor, now: .now())
        let quiet = try invocation[Options.quiet] || invocation.json
        var seeder = DemoSeeder(seed: seed, anchor: anchor)
        // Ctrl-C or SIGTERM stops the seed after the batch it is writing, not in the middle of one.
        let interrupt = TerminationSignals()
        seeder.shouldStop = { interrupt.received != nil }
        // A SQLite file this init created is bulk-loaded (Postgres decides by itself: see `DemoSeeder.seed`).
        seeder.bulkLoad = initialized.created
        let report = try seeder.seed(store, users: count) { done in
            if !quiet { invocation.output.error("seeded \(done)/\(count) users") }
        }
        if report.interrupted {
            // 128 + SIGINT, as a shell reports an interrupted command.
            invocation.output.error("gatehouse: demo seed interrupted after \(report.users) of \(count) users; the store holds every batch written so far")
            if invocation.json { try invocation.output.json(SeedOutput(report: report, admin: firstAdmin)) }
            else if firstAdmin.created { InitCommand.printCreated(firstAdmin, invocation) }
            return 130
        }
        if invocation.json { try invocation.output.json(SeedOutput(report: report, admin: firstAdmin)); return 0 }
        invocation.output.line("Seeded \(report.users) users (\(report.splitIdentities) split identities), \(report.accounts) accounts, "
            + "\(report.sessions) sessions, \(report.syncUsers) sync users, \(report.workspaces) workspaces, \(report.subscriptions) subscriptions, "
            + "\(report.roles) roles in \(String(format: "%.1f", report.seconds)) s")
        if firstAdmin.created { InitCommand.printCreated(firstAdmin, invocation) }
        return 0
    }

    /// `--json`: the seed's report, and `admin` when this seed created the first console admin.
    struct SeedOutput: Encodable {
        let report: DemoSeeder.Report
        let admin: FirstAdmin

        private enum Key: String, CodingKey { case admin }

        func encode(to encoder: any Encoder) throws {
            try report.encode(to: encoder)
            guard admin.created else { return }
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(admin, forKey: .admin)
        }
    }
}

extension DemoCommands {
    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let anchor: Option<String?> = .text("anchor", "TIME", "the 'now' the data is built around (default: today 00:00 UTC)")
        static let quiet: Option<Bool> = .flag("quiet", short: "q", "no progress on stderr")
        static let seed: Option<String?> = .text("seed", "S", "random seed (default 1)")
        static let users: Option<Int> = .integer("users", "N", "how many users to add (1 to 10,000,000)", required: true, default: 0, range: 1...10_000_000)
    }
}
