import CProcess
import D1Engine
import Foundation
import Gatehouse
import PostgresEngine
import SQLiteEngine

// No core file, and no other process of this user may read this one's memory or environment: it may hold the master
// key, a store password or an API token. Before anything is read.
_ = gatehouse_process_set_undumpable()

// The engines a `--store` value may name, asked in this order (servers first; a SQLite file takes any other path).
StoreEngines.register(PostgresEngines.all + D1Engines.all + SQLiteEngines.all)

// The CLI: parse, run, map errors to exit statuses (0 success, 1 failure, 2 usage).
let output = Output()
let root = RootCommand.make()
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
do {
    try EnvironmentFile.apply()
    switch try Parser(root: root).parse(arguments, environment: Environment(), output: output) {
    case .help(let spec, let path):
        output.write(Help.render(spec, path: path))
        status = 0
    case .run(let invocation):
        // A password on the command line is readable by every user in `ps` for as long as the process runs (weeks,
        // for `serve`): hidden now, and the operator told where it belongs.
        if CommandLinePassword.hide() {
            output.error("gatehouse: warning: the store URI on the command line holds a password, which other users can read in `ps`; it is hidden from this process's command line now, but pass it in GATEHOUSE_STORE or a file of mode 0600 (--store-file FILE or GATEHOUSE_STORE_FILE) instead")
        }
        status = try ApprovalBypass.run(invocation)
    }
} catch let error as EnvironmentFile.Failure {
    output.error("gatehouse: \(error.message)")
    status = 1
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
