import Console
import Foundation
import Gatehouse
import HTTPServer

/// `gatehouse serve`: the console on 127.0.0.1.
enum ServeCommand: CommandNoun {
    static let name = "serve"
    static let summary = "serve the console on 127.0.0.1"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            discussion: """
                Serves the console's pages and JSON API until SIGINT or SIGTERM. Binds to 127.0.0.1 by default and
                answers only requests addressed to that address (DNS-rebinding protection).

                A Postgres URI that holds a password is read from GATEHOUSE_STORE or from a file of mode 0600
                (--store-file FILE or GATEHOUSE_STORE_FILE, e.g. a systemd credential): given with --store, it is
                hidden from the process's command line at start, with a warning, but `ps` may have shown it until then.
                The start line and the log show the URI with its password as ***.

                Passkeys are registered with the console's origin, which browsers check: on loopback it is
                http://localhost:PORT (open the console there; browsers refuse passkeys on an IP address). Behind a
                TLS proxy, give the address browsers open with --origin https://HOST[:PORT]; the console then also
                answers requests addressed to it.
                """,
            options: [
                Options.listen.spec,
                Options.allowRemote.spec,
                Options.threads.spec,
                Options.maxConnectionsPerAddress.spec,
                Options.stepUpWindow.spec,
                Options.origin.spec,
                Options.quiet.spec,
            ],
            examples: ["gatehouse serve --store auth.sqlite", "gatehouse serve --store auth.sqlite --listen 127.0.0.1:0",
                       "GATEHOUSE_STORE_FILE=/run/credentials/gatehouse.service/store gatehouse serve"],
            run: run
        )
    }

    static func run(_ invocation: Invocation) throws -> Int32 {
        let (address, port) = try parseListen(try invocation[Options.listen] ?? "127.0.0.1:8787", invocation: invocation)
        let storePath = try invocation.storePath()
        var auth = AuthSettings()
        if let window = try invocation[Options.stepUpWindow] {
            guard window.value >= 1 && window.value <= 86_400 else { throw invocation.usage("--step-up-window must be between 1s and 24h") }
            auth.stepUpWindow = window
        }
        let options = ConsoleServer.Options(
            storePath: storePath, configurationPath: GlobalOptions.configurationPath(invocation),
            publicDirectory: try ResourceLocator.publicDirectory(), address: address, port: port,
            allowRemote: try invocation[Options.allowRemote], threads: try invocation[Options.threads],
            logRequests: try !invocation[Options.quiet], auth: auth,
            maxConnectionsPerAddress: try invocation[Options.maxConnectionsPerAddress], origin: try invocation[Options.origin])
        let console: ConsoleServer
        do {
            console = try ConsoleServer(options: options)
        } catch let error as GatehouseError where error.code == .invalid && error.message.hasPrefix("the console's origin") {
            throw invocation.usage("--origin: \(error.message)")
        }
        // Caught before the address is printed: a script that reads the line may send SIGTERM at once.
        let termination = TerminationSignals()
        try console.start()
        // The start line goes to the journal under systemd: the store as every message names it, password as ***.
        let shownStore = (try? StoreLocation(storePath))?.description ?? "the store"
        // A store nobody can log in to says how to fix that on the same line, where the operator is looking.
        let setup = (try? console.firstAdminCommand()).flatMap { $0 }.map { "; no admin can log in yet: run `\($0)`" } ?? ""
        invocation.output.line("Gatehouse console on \(console.url) (store \(shownStore)); Ctrl-C stops it\(setup)")
        if console.relyingParty == nil {
            invocation.output.error("gatehouse: passkeys are off: the console's origin is not known off loopback; give --origin https://HOST")
        }
        let signal = termination.wait()
        invocation.output.error("gatehouse: stopping (signal \(signal))")
        console.stop()
        return 0
    }

    /// `127.0.0.1:8787`, `[::1]:8787`, `localhost:0`.
    static func parseListen(_ text: String, invocation: Invocation) throws -> (String, UInt16) {
        let invalid = invocation.usage("--listen must be ADDRESS:PORT, e.g. 127.0.0.1:8787 or [::1]:8787, got \"\(text.prefix(60))\"")
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { throw invalid }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw invalid }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = UInt16(portText) else { throw invalid }
        if host == "localhost" { host = "127.0.0.1" }
        return (String(host), port)
    }
}

extension ServeCommand {
    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let allowRemote: Option<Bool> = .flag("allow-remote", "allow a non-loopback --listen address")
        static let listen: Option<String?> = .text("listen", "ADDR:PORT", "where to listen (default 127.0.0.1:8787; port 0 picks a free one)")
        static let stepUpWindow: Option<Seconds?> = .duration("step-up-window", "DURATION",
                                                              "how long a second-factor check lets an admin make irreversible changes (default 5m)")
        static let origin: Option<String?> = .text("origin", "URL",
                                                   "the console's public origin behind a TLS proxy, for passkeys (default http://localhost:PORT on loopback)")
        static let quiet: Option<Bool> = .flag("quiet", short: "q", "do not log requests")
        static let threads: Option<Int> = .integer("threads", "N", "request threads (default 4)", default: 4, range: 1...64)
        static let maxConnectionsPerAddress: Option<Int> = .integer("max-connections-per-address", "N",
                                                                    "connections one client address may hold (default 64; 0: no limit)",
                                                                    default: 64, range: 0...65_536)
    }
}
