import Gatehouse

/// A CLI option declared once, with its type: the same value goes in the command's `options:` list (as `.spec`,
/// which drives parsing, `--help`, completions and the man page) and is what the command reads it through, so the
/// name is written once and a misspelt read does not compile:
///
///     static let keepEmail: Option<MergeDecisions.Side?> = .choice("keep-email", "target|source", "which email U1 ends with")
///     options: [keepEmail.spec, .json]
///     let side = try invocation[keepEmail]
///
/// Reading a value parses it with the same words and exit status (2) as `Invocation`'s by-name reads, which it uses.
struct Option<Value>: Sendable {
    /// The declaration the parser, the help page, completions and the man page use.
    let spec: OptionSpec
    private let read: @Sendable (Invocation) throws -> Value

    private init(_ spec: OptionSpec, _ read: @escaping @Sendable (Invocation) throws -> Value) {
        self.spec = spec
        self.read = read
    }

    var name: String { spec.name }

    /// The value as `invocation` holds it.
    func value(in invocation: Invocation) throws -> Value { try read(invocation) }
}

extension Option where Value == Bool {
    /// A flag: true when given.
    static func flag(_ name: String, short: Character? = nil, _ help: String) -> Option<Bool> {
        Option(.flag(name, short: short, help)) { $0.flag(name) }
    }
}

extension Option where Value == String? {
    /// A text value, nil when absent (the last one wins when given twice).
    static func text(_ name: String, _ placeholder: String, _ help: String, required: Bool = false) -> Option<String?> {
        Option(.value(name, placeholder, help, required: required)) { $0.value(name) }
    }
}

extension Option where Value == String {
    /// A text value that must be given and not empty (`missing --NAME` otherwise). `required` marks it required in
    /// the spec too, which the parser then checks first and help shows.
    static func requiredText(_ name: String, _ placeholder: String, _ help: String, required: Bool = false) -> Option<String> {
        Option(.value(name, placeholder, help, required: required)) { try $0.required(name) }
    }
}

extension Option where Value == [String] {
    /// A value that may be given several times, in order.
    static func texts(_ name: String, _ placeholder: String, _ help: String, required: Bool = false) -> Option<[String]> {
        Option(.value(name, placeholder, help, required: required, repeatable: true)) { $0.values(name) }
    }
}

extension Option where Value == Int {
    /// A whole number within `range`, `defaultValue` when absent.
    static func integer(_ name: String, _ placeholder: String, _ help: String, required: Bool = false,
                        default defaultValue: Int, range: ClosedRange<Int>) -> Option<Int> {
        Option(.value(name, placeholder, help, required: required)) { try $0.integer(name, default: defaultValue, range: range) }
    }
}

extension Option where Value == Seconds? {
    /// A duration (`2h`, `90d`), nil when absent.
    static func duration(_ name: String, _ placeholder: String, _ help: String, required: Bool = false) -> Option<Seconds?> {
        Option(.value(name, placeholder, help, required: required)) { try $0.duration(name) }
    }
}

extension Option {
    /// One of `T`'s names, nil when absent.
    static func choice<T: CaseIterable & RawRepresentable & Sendable>(_ name: String, _ placeholder: String, _ help: String, required: Bool = false,
                                                           as type: T.Type) -> Option<T?> where T.RawValue == String {
        Option<T?>(.value(name, placeholder, help, required: required)) { try $0.choice(name, as: T.self) }
    }
}

extension Invocation {
    /// The value of a declared option (`try invocation[Self.keepEmail]`). The option must be in this command's spec;
    /// a debug build stops at a read of one that is not (the parser would never have accepted it).
    subscript<Value>(_ option: Option<Value>) -> Value {
        get throws {
            assert(declares(option.name), "--\(option.name) is read by `\(path.joined(separator: " "))` but not in its options")
            return try option.value(in: self)
        }
    }

    /// The value of an option that only some of the commands sharing a helper declare (`--request-sign-up`, which
    /// `policy simulate sign-in` takes and `policy simulate link` does not); nil for a command that does not.
    func ifDeclared<Value>(_ option: Option<Value>) throws -> Value? {
        declares(option.name) ? try self[option] : nil
    }

    /// Whether `name` is one of this command's options or a global one.
    func declares(_ name: String) -> Bool {
        spec.options.contains { $0.name == name } || GlobalOptions.all.contains { $0.name == name }
    }
}
