/// The command tree. Each noun's commands live in their own file; this is the one place they meet.
///
/// The root lists every noun by name and summary; a noun's subtree is built only when the command
/// line selects it, so `gatehouse users show` never builds the policy or Apple commands.
enum RootCommand {
    static func make() -> CommandSpec {
        CommandSpec(
            name: "gatehouse",
            summary: "operations toolkit for a Better Auth sign-in stack (Apple + Google)",
            discussion: """
                Gatehouse works on the store Better Auth and the sync server share: a SQLite file, or a Postgres
                database named by a postgres:// URI (its password from PGPASSWORD or ~/.pgpass; never printed).
                Pass it with --store FILE|URI or GATEHOUSE_STORE; a URI holding a password belongs in GATEHOUSE_STORE or in a
                file of mode 0600 (--store-file FILE or GATEHOUSE_STORE_FILE), not on the command line, where `ps` shows it.
                GATEHOUSE_ENV_FILE=FILE reads NAME=VALUE settings from FILE as data, as systemd's EnvironmentFile= does
                (-FILE: skipped when missing); they override the environment.
                Exit status: 0 success, 1 failure, 2 bad usage.
                """,
            subcommands: [
                .noun(InitCommand.self),
                .noun(StatusCommand.self),
                .noun(AuditCommands.self),
                .noun(DemoCommands.self),
                .noun(UsersCommands.self),
                .noun(AccountsCommands.self),
                .noun(PolicyCommands.self),
                .noun(GatesCommands.self),
                .noun(AdminsCommands.self),
                .noun(ApprovalsCommands.self),
                .noun(SSOCommands.self),
                .noun(AppleCommands.self),
                .noun(GoogleCommands.self),
                .noun(SecurityCommands.self),
                .noun(ProvidersCommands.self),
                .noun(TokenCommands.self),
                .noun(ServeCommand.self),
                .noun(HealthCommand.self),
                .noun(MergeCommands.self),
                .noun(CompletionCommand.self),
                .noun(ManCommand.self).hiddenFromListings(),
            ],
            examples: [
                "gatehouse init --store auth.sqlite",
                "gatehouse demo seed --store demo.sqlite --users 10000",
                "gatehouse audit --store auth.sqlite --since 24h",
            ]
        )
    }
}

/// A top-level noun (`users`, `policy`, ...): how the root lists it, and how its commands are built.
protocol CommandNoun {
    /// The word that selects it.
    static var name: String { get }
    /// Its line in `gatehouse --help`; the same as its spec's summary.
    static var summary: String { get }
    /// Its whole subtree.
    static func make() -> CommandSpec
}

extension CommandSpec {
    /// A noun listed at the root, built when the command line selects it.
    static func noun<Noun: CommandNoun>(_ noun: Noun.Type) -> CommandSpec {
        .lazy(noun.name, summary: noun.summary, noun.make)
    }
}

// HealthCommand.swift keeps its own spec; its name and summary for the root listing are repeated here
// (the CLI tests check that every noun's listed summary is the one its help page shows).
extension HealthCommand: CommandNoun {
    static let name = "health"
    static let summary = "run the secret-health checks (exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN)"
}
