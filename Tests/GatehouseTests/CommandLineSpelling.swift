@testable import D1Engine
import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines

/// The command line's spelling of `DomainText` references (the CLI's `CLISpelling`, which lives in the executable),
/// so domain tests can assert a message as an operator reads it in a terminal.
enum CommandLineSpelling {
    static let spelling = DomainText.Spelling(field: { "--" + $0.kebabName }, command: { command, arguments, quoted in
        let line = (["gatehouse", command.rawValue] + arguments.map { argument -> String in
            switch argument {
            case .word(let word): return word
            case .option(let field, let value): return ["--" + field.kebabName, value].compactMap { $0 }.joined(separator: " ")
            }
        }).joined(separator: " ")
        return quoted ? "`\(line)`" : line
    })
}

extension String {
    /// The text as the CLI prints it.
    var onCommandLine: String { DomainText.render(self, CommandLineSpelling.spelling) }
}

extension GatehouseError {
    /// The message as the CLI prints it.
    var commandLineMessage: String { message.onCommandLine }
}

/// An error as the CLI prints it (message and fix), or as Swift describes it when it is not a `GatehouseError`.
func onCommandLine(_ error: Error) -> String {
    (error as? GatehouseError)?.markedDescription.onCommandLine ?? "\(error)"
}
