/// A positional argument declared once, with its type, as `Option` declares an option: the same value goes in the
/// command's `arguments:` list (as `.spec`, which drives parsing, `--help`, completions and the man page) and is what
/// the command reads it through, so the name is written once:
///
///     static let mergeID: Argument<Int64> = .number("MERGE_ID", "the merge's number (see `merge list`)")
///     arguments: [mergeID.spec]
///     let id = try invocation[mergeID]
///
/// The parser refuses a missing argument, or a word not of its declared form, before the command runs, in one
/// wording (`ArgumentSpec.missing`, `ArgumentSpec.malformed`) and with exit status 2. What only the domain can judge
/// (a provider's name, a Key ID) is judged by the read, with the domain's words and exit status 1.
struct Argument<Value>: Sendable {
    /// The declaration the parser, the help page, completions and the man page use.
    let spec: ArgumentSpec
    private let read: @Sendable (String?) throws -> Value

    private init(_ spec: ArgumentSpec, _ read: @escaping @Sendable (String?) throws -> Value) {
        self.spec = spec
        self.read = read
    }

    var name: String { spec.name }

    /// The value as `invocation` holds it. The parser has refused a missing or malformed word already; an
    /// invocation built otherwise gets the same refusal here.
    func value(in invocation: Invocation) throws -> Value {
        let word = invocation.word(for: spec)
        if let word, let refusal = spec.malformed(word) { throw invocation.usage(refusal) }
        do { return try read(word) } catch is Missing { throw invocation.usage(spec.missing) }
    }

    /// A required word left out, or not of its form: refused in the parser's words by `value(in:)`.
    private struct Missing: Error {}

    private static func required(_ word: String?) throws -> String {
        guard let word else { throw Missing() }
        return word
    }
}

extension Argument where Value == String {
    /// Any word (an id, a name, a file, `-` for stdin), taken as given.
    static func text(_ name: String, _ help: String, completion: ArgumentCompletion = .none) -> Argument<String> {
        Argument(ArgumentSpec(name: name, help: help, completion: completion)) { try required($0) }
    }
}

extension Argument where Value == String {
    /// Every remaining word, joined by single spaces (a list of names); at least one.
    static func words(_ name: String, _ help: String) -> Argument<String> {
        Argument(ArgumentSpec(name: name, help: help, variadic: true)) { try required($0) }
    }
}

extension Argument where Value == String? {
    /// Any word, nil when left out.
    static func optionalText(_ name: String, _ help: String, completion: ArgumentCompletion = .none) -> Argument<String?> {
        Argument(ArgumentSpec(name: name, help: help, optional: true, completion: completion)) { $0 }
    }
}

extension Argument where Value == Int64 {
    /// A whole number within `range` (a record's number); the parser refuses any other word.
    static func number(_ name: String, _ help: String, range: ClosedRange<Int64> = 1...Int64.max) -> Argument<Int64> {
        Argument(ArgumentSpec(name: name, help: help, form: .number(range))) { word in
            guard let number = Int64(try required(word)) else { throw Missing() }
            return number
        }
    }
}

extension Argument {
    /// A word the domain turns into a value (`KeyID`, `GateProvider`), refused in the domain's words when it cannot.
    static func parsed(_ name: String, _ help: String, completion: ArgumentCompletion = .none,
                       _ parse: @escaping @Sendable (String) throws -> Value) -> Argument<Value> {
        Argument(ArgumentSpec(name: name, help: help, completion: completion)) { try parse(try required($0)) }
    }

    /// `parsed`, nil when left out.
    static func optionalParsed<Wrapped>(_ name: String, _ help: String, completion: ArgumentCompletion = .none,
                                        _ parse: @escaping @Sendable (String) throws -> Wrapped) -> Argument<Wrapped?> {
        Argument<Wrapped?>(ArgumentSpec(name: name, help: help, optional: true, completion: completion)) { try $0.map(parse) }
    }
}

extension Invocation {
    /// The value of a declared positional argument (`try invocation[Self.mergeID]`). The argument must be in this
    /// command's spec; a debug build stops at a read of one that is not.
    subscript<Value>(_ argument: Argument<Value>) -> Value {
        get throws { try argument.value(in: self) }
    }
}
