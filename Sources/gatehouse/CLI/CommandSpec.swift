import Gatehouse

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

/// A positional argument's declaration (commands declare it as a typed `Argument` and list its `.spec`): what the
/// parser binds and checks, and what `--help`, the man page and the completions show.
struct ArgumentSpec: Sendable {
    let name: String
    let help: String
    var optional = false
    /// Takes all remaining positional words.
    var variadic = false
    /// What the word must look like; the parser refuses any other before the command runs.
    var form: ArgumentForm = .text
    /// What the shells offer in its place.
    var completion: ArgumentCompletion = .none

    /// The parser's one wording for an argument left out: its name, and what to pass.
    var missing: String { "missing \(name): pass \(help)" }

    /// The parser's one wording for a word not of the declared form, nil when it is: the argument's name, what it
    /// must be, the word as given (cut short, invisible characters shown), and what to pass.
    func malformed(_ word: String) -> String? {
        guard let expected = form.refusal(of: word) else { return nil }
        let shown = OperatorText.visible(word.count > 40 ? String(word.prefix(40)) + "…" : word, keepLineBreaks: false)
        return "\(name) must be \(expected), got \"\(shown)\"; pass \(help)"
    }
}

/// The form a positional word must have for the parser to accept it. What only the domain can judge (a provider's
/// name, a Key ID) is judged where the command reads the argument, in the domain's words.
enum ArgumentForm: Sendable {
    /// Any word.
    case text
    /// A whole number within the range (a record's number).
    case number(ClosedRange<Int64>)

    /// What `word` should have been, nil when it is of this form.
    func refusal(of word: String) -> String? {
        switch self {
        case .text:
            return nil
        case .number(let range):
            if let number = Int64(word), range.contains(number) { return nil }
            return range.upperBound == .max ? "a whole number ≥ \(range.lowerBound)" : "a whole number from \(range.lowerBound) to \(range.upperBound)"
        }
    }
}

/// What the completion scripts offer for a positional argument.
enum ArgumentCompletion: Sendable {
    /// Nothing: a name or an id only the operator knows.
    case none
    /// File names.
    case files
    /// These words (computed when a script is generated).
    case words(@Sendable () -> [String])
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
