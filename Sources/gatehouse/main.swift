import Foundation
import Gatehouse

// The CLI: parse, run, map errors to exit statuses (0 success, 1 failure, 2 usage).
let output = Output()
let root = RootCommand.make()
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
do {
    switch try Parser(root: root).parse(arguments, environment: Environment(), output: output) {
    case .help(let spec, let path):
        output.write(Help.render(spec, path: path))
        status = 0
    case .run(let invocation):
        status = try invocation.spec.run?(invocation) ?? 0
    }
} catch let error as UsageError {
    output.error("gatehouse: \(error.message)")
    let spec = error.commandPath.reduce(root) { $0.subcommand(named: $1) ?? $0 }
    output.error(Help.usageLine(spec, path: error.commandPath))
    output.error("Run `gatehouse \((error.commandPath + ["--help"]).joined(separator: " "))` for more.")
    status = 2
} catch {
    // The one place the CLI puts failures into words: Gatehouse's own as they are, storage failures translated
    // (never SQL or bound values), anything else as Swift describes it.
    output.error("gatehouse: \(GatehouseError.operatorFacing(error)?.markedDescription ?? String(describing: error))")
    status = 1
}
exit(status)
