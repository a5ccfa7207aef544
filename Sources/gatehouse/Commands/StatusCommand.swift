import Gatehouse

/// `gatehouse status`: what the store holds.
enum StatusCommand: CommandNoun {
    static let name = "status"
    static let summary = "show the store's schema and row counts"

    static func make() -> CommandSpec {
        CommandSpec(name: name, summary: summary, options: [.json], run: run)
    }

    static func run(_ invocation: Invocation) throws -> Int32 {
        let status = try StoreStatus.read(invocation.openStore())
        if invocation.json { try invocation.output.json(status); return 0 }
        let out = invocation.output
        out.line("store:         \(status.store)")
        out.line("schema:        \(status.schema)")
        out.line("migrations:    \(status.migrations) applied")
        for (name, count) in status.counts.sorted(by: { $0.key < $1.key }) {
            out.line("\(name.replacingOccurrences(of: "_", with: " ")):".padding(toLength: 15, withPad: " ", startingAt: 0) + "\(count)")
        }
        return 0
    }
}
