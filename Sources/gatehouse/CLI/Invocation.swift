import Foundation
import Gatehouse

/// A wrong command line: printed with the usage line, exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    let commandPath: [String]
    var description: String { message }
}

/// A parsed command line, bound to one command.
struct Invocation {
    /// The words that selected the command (`["apple", "key", "import"]`).
    let path: [String]
    let spec: CommandSpec
    /// Option values by long name; flags map to `[""]`.
    let options: [String: [String]]
    let arguments: [String]
    let environment: Environment
    let output: Output

    /// By-name reads, for options not yet declared as an `Option` value; a name must be declared in this command's
    /// spec (a debug build stops otherwise, and `CLIOptionDeclarationTests` checks every literal name read).
    func flag(_ name: String) -> Bool { checked(name); return options[name] != nil }
    func value(_ name: String) -> String? { checked(name); return options[name]?.last }
    func values(_ name: String) -> [String] { checked(name); return options[name] ?? [] }

    private func checked(_ name: String) {
        assert(declares(name), "--\(name) is read by `\(path.joined(separator: " "))` but not in its options")
    }
    var json: Bool { (try? self[GlobalOptions.json]) ?? false }

    /// The word given for a declared positional argument, nil when it was left out (read it through its
    /// `Argument`). The argument must be in this command's spec: a debug build stops otherwise.
    func word(for argument: ArgumentSpec) -> String? {
        guard let index = spec.arguments.firstIndex(where: { $0.name == argument.name }) else {
            assertionFailure("\(argument.name) is read by `\(path.joined(separator: " "))` but not in its arguments")
            return nil
        }
        if spec.arguments[index].variadic { return arguments.count > index ? arguments[index...].joined(separator: " ") : nil }
        return index < arguments.count ? arguments[index] : nil
    }

    func usage(_ message: String) -> UsageError { UsageError(message: message, commandPath: path) }

    /// A required option's value, or a usage error naming it.
    func required(_ name: String) throws -> String {
        guard let value = value(name), !value.isEmpty else { throw usage("missing --\(name)") }
        return value
    }

    /// A named-choice option (`--format json`), nil when absent, or a usage error listing the choices.
    func choice<T: CaseIterable & RawRepresentable>(_ name: String, as type: T.Type) throws -> T? where T.RawValue == String {
        guard let text = value(name) else { return nil }
        do { return try NamedChoice.parse(text, as: T.self) } catch { throw usage(error.message(field: "--\(name)", echo: true)) }
    }

    /// An integer option within bounds, or a usage error.
    func integer(_ name: String, default defaultValue: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = value(name) else { return defaultValue }
        guard let number = Int(text), range.contains(number) else {
            throw usage("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text.prefix(40))\"")
        }
        return number
    }

    /// A duration option (`--for 2h`, `--ttl 90d`), nil when absent. Text that is not a duration, or one longer than
    /// `Seconds.maximum`, is bad usage (exit 2), as every other malformed option value is.
    func duration(_ name: String) throws -> Seconds? {
        guard let text = value(name) else { return nil }
        do { return try Seconds.parse(text) } catch let error as GatehouseError {
            throw usage("--\(name): \(error.message)" + (error.fix.map { "; \($0)" } ?? ""))
        }
    }

    /// The store from `--store`, `--store-file`, `GATEHOUSE_STORE` or `GATEHOUSE_STORE_FILE` (the command line wins
    /// over the environment; two on the same level are refused). A value that looks like a misspelt database URI is
    /// a usage error, never a file name (`StoreLocation.misspeltURI`).
    func storePath() throws -> String {
        let path: String
        switch ((try? self[GlobalOptions.store]) ?? nil, (try? self[GlobalOptions.storeFile]) ?? nil) {
        case (.some, .some):
            throw usage("--store and --store-file both name the store; pass one of them")
        case (.some(let given), nil):
            path = given
        case (nil, .some(let file)):
            path = try StoreLocationFile.read(file, option: "--store-file")
        case (nil, nil):
            let direct = environment["GATEHOUSE_STORE"].flatMap { $0.isEmpty ? nil : $0 }
            let file = environment["GATEHOUSE_STORE_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            if direct != nil && file != nil { throw usage("GATEHOUSE_STORE and GATEHOUSE_STORE_FILE are both set; unset one of them") }
            if let file { path = try StoreLocationFile.read(file, option: "GATEHOUSE_STORE_FILE") } else { path = direct ?? "" }
        }
        guard !path.isEmpty else { throw usage("no store given: pass --store FILE or set GATEHOUSE_STORE (a URI with a password: in GATEHOUSE_STORE, or in a file named by --store-file or GATEHOUSE_STORE_FILE)") }
        if let problem = StoreLocation.misspeltURI(path) {
            throw usage(problem.message + (problem.fix.map { "; \($0)" } ?? ""))
        }
        return path
    }

    /// The store as messages may name it: the path, or the URI with its password replaced.
    func storeDescription() -> String? {
        (try? storePath()).map { (try? StoreLocation($0))?.description ?? "the store" }
    }

    /// Opens the store named on the command line.
    func openStore() throws -> Store {
        try Store.open(path: storePath(), configurationPath: configurationPath)
    }

    /// The store configuration file `--config` names, if any.
    var configurationPath: String? { GlobalOptions.configurationPath(self) }

    /// The actor for the audit log: `--actor`, else the invoking OS user.
    var actor: Actor {
        get throws {
            if let name = (try? self[GlobalOptions.actor]) ?? nil, !name.isEmpty { return try Actor.checked(name) }
            return osUser
        }
    }

    /// The invoking OS user, as an actor.
    private var osUser: Actor {
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return Actor(String(cString: name)) }
        return Actor(environment["USER"] ?? "uid:\(geteuid())")
    }
}
