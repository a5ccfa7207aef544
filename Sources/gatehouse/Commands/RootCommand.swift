/// The command tree. Each noun's commands live in their own file; this is the one place they meet.
enum RootCommand {
    static func make() -> CommandSpec {
        CommandSpec(
            name: "gatehouse",
            summary: "operations toolkit for a Better Auth sign-in stack (Apple + Google)",
            discussion: """
                Gatehouse works on one SQLite store shared with Better Auth and the sync server. Pass it with
                --store FILE or GATEHOUSE_STORE. Exit status: 0 success, 1 failure, 2 bad usage.
                """,
            subcommands: [
                InitCommand.make(),
                StatusCommand.make(),
                AuditCommands.make(),
                DemoCommands.make(),
                UsersCommands.make(),
                AccountsCommands.make(),
                PolicyCommands.make(),
                GatesCommands.make(),
                AdminsCommands.make(),
                AppleCommands.make(),
                ProvidersCommands.make(),
                TokenCommands.make(),
                ServeCommand.make(),
                HealthCommand.make(),
                MergeCommands.make(),
            ],
            examples: [
                "gatehouse init --store auth.sqlite",
                "gatehouse demo seed --store demo.sqlite --users 10000",
                "gatehouse audit --store auth.sqlite --since 24h",
            ]
        )
    }
}
