import Gatehouse

/// `gatehouse init`: create or upgrade a store, and create the console's first admin.
enum InitCommand: CommandNoun {
    static let name = "init"
    static let summary = "create a store, or upgrade an existing Better Auth database"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            discussion: """
                On a new file, creates Better Auth 1.7's tables, the sync server's tables and Gatehouse's own.
                On a database Better Auth already created, adds only Gatehouse's tables and gatehouse_ indexes (and the
                sync server's tables if absent) and never alters Better Auth's tables or rows. A database missing a column Gatehouse
                needs is reported, table and column, and left unchanged. Also creates the master key file
                <store>.key (mode 0600) that seals secrets at rest, unless GATEHOUSE_MASTER_KEY is set.
                When the store has no console admin yet, creates the first one (role admin) and prints its
                generated password once, or reads it from --admin-password-file. Later admins: `gatehouse admins`.
                """,
            options: [
                Options.admin.spec,
                Options.adminPasswordFile.spec,
                .json,
            ],
            examples: ["gatehouse init --store /var/lib/gatehouse/auth.sqlite",
                       "gatehouse init --store auth.sqlite --admin alice --admin-password-file alice.pw"],
            run: run
        )
    }

    struct Report: Encodable {
        let store: Store.InitReport
        let admin: FirstAdmin
    }

    static func run(_ invocation: Invocation) throws -> Int32 {
        // Bad admin input is refused before the store is touched.
        let username = try AdminUsername(try invocation[Options.admin] ?? FirstAdmin.defaultUsername)
        let suppliedPassword = try invocation[Options.adminPasswordFile].map { try PasswordFile.read($0, option: "--admin-password-file") }
        let (store, report) = try Store.initialize(path: invocation.storePath(), configurationPath: GlobalOptions.configurationPath(invocation),
                                                   actor: invocation.actor)
        let firstAdmin = try FirstAdmin.ensure(in: store, username: username, password: suppliedPassword, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(Report(store: report, admin: firstAdmin)); return 0 }
        let out = invocation.output
        out.line(report.created ? "Created store \(report.path)" : "Store \(report.path)")
        out.line("  schema: \(report.shape)")
        if report.applied.isEmpty && report.skipped.isEmpty && report.indexesCreated.isEmpty { out.line("  already up to date") }
        for name in report.applied { out.line("  applied \(name)") }
        for name in report.skipped { out.line("  kept existing tables, skipped \(name)") }
        for name in report.indexesCreated { out.line("  added index \(name)") }
        if let mode = report.journalSwitchedFrom { out.line("  switched the journal from \(mode) to WAL (readers and the writer no longer block each other; keep the -wal and -shm files with the store)") }
        for warning in report.warnings { out.line("  warning: \(warning)") }
        if let key = report.masterKeyCreated { out.line("  created master key file \(key) (mode 0600): back it up; sealed keys cannot be opened without it") }
        if firstAdmin.created {
            printCreated(firstAdmin, invocation)
        } else if try invocation[Options.admin] != nil || suppliedPassword != nil {
            out.line("  the store already has console admins; none created (manage them with `gatehouse admins`)")
        }
        return 0
    }
}

extension InitCommand {
    /// The lines `init` and `demo seed` print when they created the first admin: its name and, when generated, its
    /// password, once.
    static func printCreated(_ firstAdmin: FirstAdmin, _ invocation: Invocation) {
        let out = invocation.output
        out.line("  created the console admin \(firstAdmin.username) (role admin)")
        if let generated = firstAdmin.generatedPassword {
            out.line("  password for \(firstAdmin.username) (shown once; store it in your password manager now):")
            out.line("    \(generated)")
        }
    }

    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let admin: Option<String?> = .text("admin", "USER", "the first console admin's username (default: admin)")
        static let adminPasswordFile: Option<String?> = .text("admin-password-file", "FILE", "read the first admin's password from the first line of FILE (- for stdin)")
    }
}
