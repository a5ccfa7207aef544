/// Renders a command's help page from its spec.
enum Help {
    static func usageLine(_ spec: CommandSpec, path: [String]) -> String {
        var parts = ["gatehouse"] + path
        if !spec.subcommands.isEmpty { parts.append(spec.run == nil && spec.defaultSubcommand == nil ? "<command>" : "[<command>]") }
        for option in spec.options where option.required { parts.append("--\(option.name) \(option.value ?? "")") }
        if spec.options.contains(where: { !$0.required }) { parts.append("[options]") }
        for argument in spec.arguments {
            let word = argument.name + (argument.variadic ? "..." : "")
            parts.append(argument.optional ? "[\(word)]" : word)
        }
        return "usage: " + parts.joined(separator: " ")
    }

    static func render(_ spec: CommandSpec, path: [String]) -> String {
        var text = ""
        text += (path.isEmpty ? "gatehouse — \(spec.summary)" : spec.summary) + "\n\n"
        text += usageLine(spec, path: path) + "\n"
        if let discussion = spec.discussion { text += "\n" + discussion + "\n" }
        if !spec.subcommands.isEmpty {
            text += "\ncommands:\n"
            let listed = spec.subcommands.filter { !$0.hidden }
            let width = listed.map(\.name.count).max() ?? 0
            for sub in listed {
                let marker = sub.name == spec.defaultSubcommand ? " (default)" : ""
                text += "  " + sub.name.padded(to: width) + "  " + sub.summary + marker + "\n"
            }
        }
        if !spec.arguments.isEmpty {
            text += "\narguments:\n"
            let width = spec.arguments.map(\.name.count).max() ?? 0
            for argument in spec.arguments {
                text += "  " + argument.name.padded(to: width) + "  " + argument.help + "\n"
            }
        }
        let options = spec.options + GlobalOptions.all
        text += "\noptions:\n"
        let labels = options.map { option -> String in
            var label = option.short.map { "-\($0), " } ?? "    "
            label += "--" + option.name + (option.value.map { " " + $0 } ?? "")
            return label
        }
        let width = labels.map(\.count).max() ?? 0
        for (label, option) in zip(labels, options) {
            text += "  " + label.padded(to: width) + "  " + option.help
                + (option.required ? " (required)" : "") + (option.repeatable ? " (repeatable)" : "") + "\n"
        }
        if path.isEmpty { text += "  " + "    --version".padded(to: width) + "  print the version and exit\n" }
        if !spec.examples.isEmpty {
            text += "\nexamples:\n" + spec.examples.map { "  " + $0 }.joined(separator: "\n") + "\n"
        }
        if !spec.subcommands.isEmpty {
            text += "\nRun `gatehouse \((path + ["<command>"]).joined(separator: " ")) --help` for a command's options.\n"
        }
        return text
    }
}
