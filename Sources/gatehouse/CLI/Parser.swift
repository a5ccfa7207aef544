import Gatehouse

/// Turns argv into an `Invocation`: tokenise (`--name=value`, `--name value`, `-h`, `--`), walk
/// the subcommand words, then bind options and arguments to the chosen command's spec.
struct Parser {
    let root: CommandSpec

    /// The outcome of parsing: run a command, or show help for one.
    enum Outcome {
        case run(Invocation)
        case help(CommandSpec, path: [String])
    }

    func parse(_ argv: [String], environment: Environment, output: Output) throws -> Outcome {
        var spec = root
        var path: [String] = []
        var options: [String: [String]] = [:]
        var positionals: [String] = []
        var index = 0
        var optionsEnded = false

        func findOption(_ name: String) -> OptionSpec? {
            (spec.options + GlobalOptions.all).first { $0.name == name }
        }
        func knownNames() -> [String] { (spec.options + GlobalOptions.all).map { "--" + $0.name } }

        while index < argv.count {
            let token = argv[index]
            index += 1
            if optionsEnded || !token.hasPrefix("-") || token == "-" {
                // Subcommand words come before the command's own positionals.
                if positionals.isEmpty && !spec.subcommands.isEmpty && !optionsEnded {
                    if let next = spec.subcommand(named: token) {
                        spec = next
                        path.append(token)
                        continue
                    }
                    if spec.run == nil && spec.defaultSubcommand == nil {
                        throw unknownCommand(token, in: spec, path: path)
                    }
                    if let name = spec.defaultSubcommand, let next = spec.subcommand(named: name), next.arguments.isEmpty {
                        throw unknownCommand(token, in: spec, path: path)
                    }
                }
                positionals.append(token)
                continue
            }
            if token == "--" { optionsEnded = true; continue }
            var name: String
            var inlineValue: String?
            if token.hasPrefix("--") {
                let body = token.dropFirst(2)
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inlineValue = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                }
            } else {
                guard token.count == 2, let short = token.last,
                      let match = (spec.options + GlobalOptions.all).first(where: { $0.short == short }) else {
                    throw UsageError(message: "unknown option \(token.prefix(60))\(suggestion(for: token, among: knownNames()))", commandPath: path)
                }
                name = match.name
            }
            if name == "version" && path.isEmpty {
                return .run(versionInvocation(json: argv.contains("--json"), environment: environment, output: output))
            }
            // An option before any subcommand word belongs to the group's default subcommand.
            if findOption(name) == nil, positionals.isEmpty, let fallback = spec.defaultSubcommand, let next = spec.subcommand(named: fallback) {
                spec = next
                path.append(fallback)
            }
            guard let option = findOption(name) else {
                throw UsageError(message: "unknown option --\(name.prefix(60))\(suggestion(for: "--" + name, among: knownNames()))", commandPath: path)
            }
            if option.isFlag {
                if inlineValue != nil { throw UsageError(message: "--\(name) takes no value", commandPath: path) }
                options[name, default: []].append("")
            } else {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < argv.count else { throw UsageError(message: "--\(name) needs a value (\(option.value ?? "VALUE"))", commandPath: path) }
                    value = argv[index]
                    index += 1
                }
                if options[name] != nil && !option.repeatable {
                    throw UsageError(message: "--\(name) is given more than once", commandPath: path)
                }
                options[name, default: []].append(value)
            }
        }

        if options["help"] != nil { return .help(spec, path: path) }
        if spec.run == nil {
            if let name = spec.defaultSubcommand, let next = spec.subcommand(named: name) {
                spec = next
                path.append(name)
            } else {
                return .help(spec, path: path)
            }
        }
        // Bind positionals.
        let declared = spec.arguments
        let variadic = declared.last?.variadic == true
        if positionals.count > declared.count && !variadic {
            let extra = positionals[declared.count]
            if !spec.subcommands.isEmpty { throw unknownCommand(extra, in: spec, path: path) }
            throw UsageError(message: "unexpected argument \"\(extra.prefix(60))\"", commandPath: path)
        }
        for (position, argument) in declared.enumerated() {
            guard position < positionals.count else {
                if argument.optional { continue }
                throw UsageError(message: argument.missing, commandPath: path)
            }
            let word = argument.variadic ? positionals[position...].joined(separator: " ") : positionals[position]
            if let refusal = argument.malformed(word) { throw UsageError(message: refusal, commandPath: path) }
        }
        for option in spec.options where option.required && options[option.name] == nil {
            throw UsageError(message: "missing --\(option.name) \(option.value ?? "")", commandPath: path)
        }
        return .run(Invocation(path: path, spec: spec, options: options, arguments: positionals, environment: environment, output: output))
    }

    /// `--version` (`--json` too): the version, the commit and the build date. Nothing else is parsed or built,
    /// so its cold start stays what ops/bench measures (< 20 ms).
    private func versionInvocation(json: Bool, environment: Environment, output: Output) -> Invocation {
        let spec = CommandSpec(name: "version", summary: "", run: { invocation in
            if json {
                try invocation.output.json(["version": GatehouseVersion.current, "commit": GatehouseVersion.commit,
                                            "buildDate": GatehouseVersion.buildDate])
            } else {
                invocation.output.line("gatehouse \(GatehouseVersion.current) (commit \(GatehouseVersion.commit), built \(GatehouseVersion.buildDate))")
            }
            return 0
        })
        return Invocation(path: ["version"], spec: spec, options: [:], arguments: [], environment: environment, output: output)
    }

    private func unknownCommand(_ word: String, in spec: CommandSpec, path: [String]) -> UsageError {
        let owner = (["gatehouse"] + path).joined(separator: " ")
        return UsageError(message: "unknown command \"\(word.prefix(60))\" for \"\(owner)\"\(suggestion(for: word, among: spec.subcommands.map(\.name)))",
                          commandPath: path)
    }
}

/// "; did you mean 'json'?" when a known word is close to what was typed.
func suggestion(for word: String, among candidates: [String]) -> String {
    Suggestion.closest(to: word, among: candidates).map { "; did you mean \"\($0)\"?" } ?? ""
}
