import Gatehouse

/// `gatehouse init`: create or upgrade a store.
enum InitCommand {
    static func make() -> CommandSpec {
        CommandSpec(
            name: "init",
            summary: "create a store, or upgrade an existing Better Auth database",
            discussion: """
                On a new file, creates Better Auth 1.7's tables, the sync server's tables and Gatehouse's own.
                On a database Better Auth already created, adds only Gatehouse's tables and gatehouse_ indexes (and the
                sync server's tables if absent) and never alters Better Auth's tables or rows. A database missing a column Gatehouse
                needs is reported, table and column, and left unchanged. Also creates the master key file
                <store>.key (mode 0600) that seals secrets at rest, unless GATEHOUSE_MASTER_KEY is set.
                """,
            options: [.json],
            examples: ["gatehouse init --store /var/lib/gatehouse/auth.sqlite"],
            run: run
        )
    }

    static func run(_ invocation: Invocation) throws -> Int32 {
        let (_, report) = try Store.initialize(path: invocation.storePath(), configurationPath: invocation.value("config") ?? invocation.environment["GATEHOUSE_CONFIG"],
                                               actor: invocation.actor)
        if invocation.json { try invocation.output.json(report); return 0 }
        let out = invocation.output
        out.line(report.created ? "Created store \(report.path)" : "Store \(report.path)")
        out.line("  schema: \(report.shape)")
        if report.applied.isEmpty && report.skipped.isEmpty && report.indexesCreated.isEmpty { out.line("  already up to date") }
        for name in report.applied { out.line("  applied \(name)") }
        for name in report.skipped { out.line("  kept existing tables, skipped \(name)") }
        for name in report.indexesCreated { out.line("  added index \(name)") }
        if let key = report.masterKeyCreated { out.line("  created master key file \(key) (mode 0600): back it up; sealed keys cannot be opened without it") }
        return 0
    }
}
