/// The whole command tree, every lazy noun built: what the completion scripts and the man page are generated from,
/// so they list exactly what the parser accepts and `--help` shows.
struct CommandTree {
    /// One listed command: the words that select it (`["users", "show"]`, `[]` for the root) and its spec.
    struct Entry {
        let path: [String]
        let spec: CommandSpec
        /// Its visible subcommands, built.
        var children: [CommandSpec] { spec.subcommands.filter { !$0.hidden }.map { $0.resolved() } }
    }

    /// Every listed command, depth-first in listing order, the root first.
    let entries: [Entry]

    init(root: CommandSpec) {
        var entries: [Entry] = []
        func visit(_ spec: CommandSpec, _ path: [String]) {
            let entry = Entry(path: path, spec: spec)
            entries.append(entry)
            for child in entry.children { visit(child, path + [child.name]) }
        }
        visit(root, [])
        self.entries = entries
    }

    /// Options every command takes (`GlobalOptions.all`), and `--version` at the root.
    static var globalOptions: [OptionSpec] { GlobalOptions.all }
    static let version = OptionSpec.flag("version", "print the version, the commit and the build date, and exit")

    /// The options of `entry`, its own first; the root adds `--version`.
    static func options(of entry: Entry) -> [OptionSpec] {
        entry.spec.options + globalOptions + (entry.path.isEmpty ? [version] : [])
    }

    /// Every option that takes a value, by `--name`, anywhere in the tree: a completer skips the word after one.
    var valueOptions: [String] {
        var names: [String] = []
        for entry in entries {
            for option in Self.options(of: entry) where !option.isFlag && !names.contains("--" + option.name) {
                names.append("--" + option.name)
            }
        }
        return names
    }
}
