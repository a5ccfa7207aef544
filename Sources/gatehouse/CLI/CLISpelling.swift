import Gatehouse

/// How the command line spells the domain's references (`DomainText`): a field as its flag (`keepEmail` →
/// `--keep-email`), a command as its command line (`` `gatehouse merge list` `` when named, bare when given to copy).
/// `Output` renders everything it prints with it; files the CLI writes (the merge SQL script, the Prometheus textfile)
/// are rendered with it too.
enum CLISpelling {
    static let spelling = DomainText.Spelling(field: flag, command: { command, arguments, quoted in
        let line = (["gatehouse", command.rawValue] + arguments.map { argument in
            switch argument {
            case .word(let word): return word
            case .option(let field, let value): return value.map { "\(flag(field)) \($0)" } ?? flag(field)
            }
        }).joined(separator: " ")
        return quoted ? "`\(line)`" : line
    })

    /// `--keep-email`.
    static func flag(_ field: InputField) -> String { "--" + field.kebabName }

    /// `text` in the command line's words.
    static func render(_ text: String) -> String { DomainText.render(text, spelling) }
}
