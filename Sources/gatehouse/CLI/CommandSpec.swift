/// One declarative description of a command: it drives parsing and `--help` both, so the help can
/// never drift from what is accepted.
///
/// A noun's subtree is built only when the command line names it (see `lazy`): a process builds the
/// one spec it runs, not the whole tree. Discussions are computed only when a help page shows them.
struct CommandSpec {
    /// The word that selects the command (`seed` in `gatehouse demo seed`).
    let name: String
    /// One line for listings.
    let summary: String
    /// Paragraphs for the command's own help page.
    var discussion: String? { discussionText() }
    var arguments: [ArgumentSpec]
    var options: [OptionSpec]
    var subcommands: [CommandSpec]
    /// The subcommand run when none is named (`gatehouse audit` lists entries).
    var defaultSubcommand: String?
    /// Examples shown at the end of the help.
    var examples: [String]
    /// The work; nil for a pure group.
    var run: ((Invocation) throws -> Int32)?
    /// Accepted but not listed in help, completions or the man page (`gatehouse man`, which the package runs).
    var hidden = false

    private let discussionText: () -> String?
    /// Builds the real spec of a `lazy` entry; nil for a spec that is already complete.
    private var build: (() -> CommandSpec)?

    init(name: String, summary: String, discussion: @autoclosure @escaping () -> String? = nil,
         arguments: [ArgumentSpec] = [], options: [OptionSpec] = [], subcommands: [CommandSpec] = [],
         defaultSubcommand: String? = nil, examples: [String] = [], run: ((Invocation) throws -> Int32)? = nil) {
        self.name = name
        self.summary = summary
        self.discussionText = discussion
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.defaultSubcommand = defaultSubcommand
        self.examples = examples
        self.run = run
    }

    /// An entry that lists as `name` and `summary` and builds its spec only when selected:
    ///
    ///     CommandSpec.lazy("users", summary: UsersCommands.summary, UsersCommands.make)
    ///
    /// The built spec must have the same name and summary; `--help` at the root lists the entry's.
    static func lazy(_ name: String, summary: String, _ build: @escaping () -> CommandSpec) -> CommandSpec {
        var entry = CommandSpec(name: name, summary: summary)
        entry.build = build
        return entry
    }

    /// The complete spec: built now for a `lazy` entry, `self` otherwise.
    func resolved() -> CommandSpec {
        guard let build else { return self }
        let spec = build()
        assert(spec.name == name && spec.summary == summary, "the lazy entry \(name) lists a different name or summary than its spec")
        return spec
    }

    /// The same spec, accepted but left out of listings.
    func hiddenFromListings() -> CommandSpec {
        var spec = self
        spec.hidden = true
        return spec
    }

    /// The subcommand called `name`, built if it is a lazy entry.
    func subcommand(named name: String) -> CommandSpec? { subcommands.first { $0.name == name }?.resolved() }
}

/// A positional argument.
struct ArgumentSpec {
    let name: String
    let help: String
    var optional = false
    /// Takes all remaining positional words.
    var variadic = false
}

/// An option: a flag (`--json`) or an option with a value (`--store FILE`).
struct OptionSpec {
    let name: String
    var short: Character? = nil
    /// The placeholder for the value in help; nil for a flag.
    var value: String? = nil
    let help: String
    var repeatable = false
    var required = false

    var isFlag: Bool { value == nil }

    static func flag(_ name: String, short: Character? = nil, _ help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, value: nil, help: help)
    }

    static func value(_ name: String, _ placeholder: String, _ help: String, required: Bool = false, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, value: placeholder, help: help, repeatable: repeatable, required: required)
    }

    /// `--json` on every read.
    static let json = GlobalOptions.json.spec
}

/// Options every command accepts, wherever they stand on the line (`all`), and `--json`, which every read lists.
enum GlobalOptions {
    static let store: Option<String?> = .text("store", "FILE|URI", "the store: a SQLite file, a postgres:// URI or d1://ACCOUNT/DATABASE (default: $GATEHOUSE_STORE)")
    static let storeFile: Option<String?> = .text("store-file", "FILE", "read the store's URI from FILE (mode 0600), so no password is on the command line (default: $GATEHOUSE_STORE_FILE)")
    static let config: Option<String?> = .text("config", "FILE", "store configuration (default: gatehouse.json beside the store)")
    static let actor: Option<String?> = .text("actor", "NAME", "who is making the change, for the audit log (default: your OS user)")
    static let help: Option<Bool> = .flag("help", short: "h", "show help for the command")
    static let json: Option<Bool> = .flag("json", "print machine-readable JSON instead of text")

    static let all: [OptionSpec] = [store.spec, storeFile.spec, config.spec, actor.spec, help.spec]

    /// The store configuration file: `--config`, else `GATEHOUSE_CONFIG`.
    static func configurationPath(_ invocation: Invocation) -> String? {
        (try? invocation[config]) ?? invocation.environment["GATEHOUSE_CONFIG"]
    }
}
