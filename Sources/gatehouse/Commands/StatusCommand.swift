import Gatehouse

/// `gatehouse status`: what the store holds.
enum StatusCommand: CommandNoun {
    static let name = "status"
    static let summary = "show the store's schema and row counts"

    static func make() -> CommandSpec {
        CommandSpec(name: name, summary: summary,
                    discussion: """
                        Row counts of \(StoreStatus.countedBelow) and more come from the engine's statistics (SQLite: the
                        table's rowid span, an upper bound, exact for a table only appended to; Postgres: the planner's
                        estimate), so status answers at once on a store of any size; they are marked "(estimate)", and in
                        --json named in "estimatedCounts". --exact counts every row, which reads every table.
                        """,
                    options: [Options.exact.spec, .json], run: run)
    }

    static func run(_ invocation: Invocation) throws -> Int32 {
        let status = try StoreStatus.read(invocation.openStore(), exact: try invocation[Options.exact])
        if invocation.json { try invocation.output.json(status); return 0 }
        let out = invocation.output
        out.line("store:         \(status.store)")
        out.line("schema:        \(status.schema)")
        out.line("migrations:    \(status.migrations) applied")
        for (name, count) in status.counts.sorted(by: { $0.key < $1.key }) {
            let mark = status.estimatedCounts.contains(name) ? " (estimate)" : ""
            out.line("\(name.replacingOccurrences(of: "_", with: " ")):".padding(toLength: 15, withPad: " ", startingAt: 0) + "\(count)\(mark)")
        }
        if status.estimated { out.line("estimates come from the engine's statistics; --exact counts every row") }
        return 0
    }

    /// The options `status` reads, each declared once.
    enum Options {
        static let exact: Option<Bool> = .flag("exact", "count every row (reads every table) instead of estimating large tables from the engine's statistics")
    }
}
