import Foundation
import Gatehouse
import HTTPServer

/// `gatehouse google risc …`: Google's Cross-Account Protection — receive the security event tokens Google pushes,
/// ingest one another transport stored, and manage the event stream at Google.
enum GoogleCommands: CommandNoun {
    static let name = "google"
    static let summary = "Google's Cross-Account Protection (RISC): receive security events, manage the stream"

    static func make() -> CommandSpec {
        CommandSpec(name: name, summary: summary, subcommands: [
            CommandSpec(name: "risc", summary: "security event tokens: verify, record, act; the stream at Google",
                        discussion: """
                            Each token is verified as Google says: RS256 by the key its kid names in the key set that
                            {GATEHOUSE_GOOGLE_ACCOUNTS_BASE_URL or https://accounts.google.com}/.well-known/risc-configuration points to
                            (fetched again at most once a minute for an unknown kid), iss that document's issuer, aud one of the app's Google
                            client ids (`providers set google`); exp is not checked. It is recorded once by jti and acted on: sessions-revoked
                            ends the user's sessions; tokens-revoked also clears the Google account's tokens; token-revoked clears that
                            refresh token; account-disabled (hijacking) ends sessions and clears tokens;
                            account-disabled (bulk-account) or account-credential-change-required flag the user for review; account-disabled
                            without a reason flags it disabled (policy export's security section lists it); account-enabled lifts the flag.
                            See ops/runbooks/google-risc.md.
                            """,
                        subcommands: [
                            CommandSpec(name: "serve", summary: "the receiver for Google's pushes, to sit behind your TLS proxy",
                                        discussion: """
                                            Answers POST of a token on --path: 202 once recorded (a duplicate and an unknown subject too), 400 refused
                                            with RFC 8935's {"err", "description"}, 413 over 64 KB, 503 (Retry-After) while Google's keys or the store
                                            cannot be had in time (Google delivers again; the jti makes it act once). Verified events wait in a bounded
                                            queue for one writer, so a slow store never holds a connection long. Runs until SIGINT or SIGTERM.
                                            """,
                                        options: [Options.listen.spec, Options.path.spec, Options.quiet.spec],
                                        examples: ["gatehouse google risc serve --store auth.sqlite --listen 127.0.0.1:8789 --path /google/risc"],
                                        run: serve),
                            CommandSpec(name: "ingest", summary: "verify and record one token another transport stored (exit 1 if refused)",
                                        arguments: [Arguments.token.spec], options: [.json],
                                        examples: ["gatehouse google risc ingest set.jwt", "wrangler kv key get … | gatehouse google risc ingest -"],
                                        run: ingest),
                            CommandSpec(name: "stream", summary: "the event stream at Google (a service account's JSON key, mode 0600)",
                                        subcommands: [
                                            CommandSpec(name: "show", summary: "where Google pushes, and which events", options: [Options.serviceAccount.spec, .json], run: streamShow),
                                            CommandSpec(name: "update", summary: "push to URL, asking for the events Gatehouse acts on",
                                                        options: [Options.url.spec, Options.events.spec, Options.serviceAccount.spec, .json],
                                                        examples: ["gatehouse google risc stream update --url https://auth.example.com/google/risc"],
                                                        run: streamUpdate),
                                            CommandSpec(name: "enable", summary: "start the stream", options: [Options.serviceAccount.spec], run: { try streamStatus(true, $0) }),
                                            CommandSpec(name: "disable", summary: "pause the stream", options: [Options.serviceAccount.spec], run: { try streamStatus(false, $0) }),
                                            CommandSpec(name: "verify", summary: "ask Google to push a verification event carrying STATE to the receiver",
                                                        options: [Options.state.spec, Options.serviceAccount.spec], run: streamVerify),
                                        ],
                                        defaultSubcommand: "show"),
                        ]),
        ])
    }

    // MARK: receiving

    static func ingest(_ invocation: Invocation) throws -> Int32 {
        let file = try invocation[Arguments.token]
        let body: [UInt8]
        let limit = GoogleRISCVerifier.maxTokenBytes
        if file == "-" {
            body = [UInt8]((try? FileHandle.standardInput.read(upToCount: limit + 1)) ?? Data())
        } else {
            try InputFile.requireRegular(file, what: "the security event token")
            var folder: ObjCBool = false
            if FileManager.default.fileExists(atPath: file, isDirectory: &folder), folder.boolValue {
                throw GatehouseError.invalid("\(file) is a folder, not a security event token", fix: "pass the file that holds the token, or - to read it from stdin")
            }
            guard let handle = FileHandle(forReadingAtPath: file) else { throw GatehouseError.notFound("cannot read \(file)", fix: "check the path") }
            defer { try? handle.close() }
            body = [UInt8]((try? handle.read(upToCount: limit + 1)) ?? Data())
        }
        let inbox = GoogleSecurityInbox(store: try invocation.openStore(), keys: GoogleRISCKeys())
        let receipt: GoogleSecurityInbox.Receipt
        if body.count > limit {
            receipt = try inbox.refuse(GoogleRISCRefusal("the token is over \(limit / 1024) KB", reason: .tooLarge), transport: .ingest, source: nil, now: .now())
        } else {
            receipt = try inbox.receive(token: String(decoding: body, as: UTF8.self), transport: .ingest, now: .now())
        }
        if invocation.json { try invocation.output.json(receipt) } else {
            let what = [receipt.type, receipt.userID.map { "user \($0)" }, receipt.id.map { "event \($0)" }].compactMap { $0 }.joined(separator: ", ")
            invocation.output.line("\(receipt.outcome.rawValue)\(what.isEmpty ? "" : " (\(what))"): \(receipt.message)")
        }
        return receipt.acknowledged ? 0 : 1
    }

    static func serve(_ invocation: Invocation) throws -> Int32 {
        let (address, port) = try ServeCommand.parseListen(try invocation[Options.listen] ?? "127.0.0.1:8789", invocation: invocation)
        let path = try invocation[Options.path] ?? "/"
        guard path.hasPrefix("/"), !path.contains("?") else { throw invocation.usage("--path must start with / and hold no query, got \"\(path.prefix(60))\"") }
        let pool = try StorePool(path: try invocation.storePath(), configurationPath: GlobalOptions.configurationPath(invocation), size: 2)
        let keys = GoogleRISCKeys()
        let receiver = RISCReceiver(pool: pool, keys: keys, path: path)
        let log = try !invocation[Options.quiet]
        let server = HTTPServer(configuration: HTTPServerConfiguration(address: address, port: port, threadPoolSize: 8, connectionLimit: 256,
                                                                      connectionTimeoutSeconds: 15, maxBodyBytes: GoogleRISCVerifier.maxTokenBytes)) { request in
            let response = receiver.answer(request)
            if log { NotificationListener.log(request, response) }
            return response
        }
        let termination = TerminationSignals()
        try server.start()
        let shown = address.contains(":") ? "[\(address)]" : address
        invocation.output.line("Google RISC receiver on http://\(shown):\(server.port)\(path) (keys from \(keys.baseURL)); Ctrl-C stops it")
        let signal = termination.wait()
        invocation.output.error("gatehouse: stopping (signal \(signal))")
        server.stop()
        receiver.writer.stop()
        return 0
    }

    // MARK: the stream

    static func stream(_ invocation: Invocation) throws -> GoogleRISCStream {
        var stream = GoogleRISCStream(store: try invocation.openStore(), account: try GoogleServiceAccount.load(path: try invocation[Options.serviceAccount]))
        stream.actor = try invocation.actor
        return stream
    }

    static func streamShow(_ invocation: Invocation) throws -> Int32 {
        let configuration = try stream(invocation).show()
        if invocation.json { try invocation.output.json(configuration); return 0 }
        invocation.output.line("delivery: \(configuration.url ?? "not set")")
        invocation.output.line("status (as last set here): \(configuration.status ?? "unknown")")
        invocation.output.line("events requested: \(configuration.eventsRequested.isEmpty ? "none" : configuration.eventsRequested.map { $0.components(separatedBy: "/").last ?? $0 }.joined(separator: ", "))")
        return 0
    }

    static func streamUpdate(_ invocation: Invocation) throws -> Int32 {
        let url = try invocation[Options.url]
        let requested = try invocation[Options.events]
        let kinds: [GoogleSecurityEvent.Kind]
        if requested.isEmpty || requested == ["all"] {
            kinds = GoogleSecurityEvent.Kind.allCases
        } else {
            kinds = try requested.flatMap { $0.split(separator: ",").map(String.init) }.map { name in
                guard let kind = GoogleSecurityEvent.Kind(rawValue: name) else {
                    throw invocation.usage("--events: \"\(name.prefix(40))\" is not an event type (all, or any of \(GoogleSecurityEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                return kind
            }
        }
        try stream(invocation).update(url: url, events: kinds)
        invocation.output.line("the stream pushes \(kinds.count) event type(s) to \(url); next: gatehouse google risc stream enable, then stream verify")
        return 0
    }

    static func streamStatus(_ enabled: Bool, _ invocation: Invocation) throws -> Int32 {
        try stream(invocation).setEnabled(enabled)
        invocation.output.line("the stream is \(enabled ? "enabled" : "disabled") at Google")
        return 0
    }

    static func streamVerify(_ invocation: Invocation) throws -> Int32 {
        let state = try invocation[Options.state] ?? "gatehouse-\(Timestamp.now().iso8601)"
        guard state.count <= 200, state.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) else {
            throw invocation.usage("--state must be at most 200 printable ASCII characters")
        }
        try stream(invocation).verify(state: state)
        invocation.output.line("Google was asked to push a verification event with state \"\(state)\"; `gatehouse security events --provider google` shows it once it arrives")
        return 0
    }
}

/// The receiver's answers, off the main actor: libmicrohttpd calls the handler from its own threads.
final class RISCReceiver: Sendable {
    let pool: StorePool
    let keys: GoogleRISCKeys
    let path: String
    let writer: GoogleEventWriter
    /// How long a request waits for its event's write before it is told to deliver again.
    static let recordWait = 3.0

    init(pool: StorePool, keys: GoogleRISCKeys, path: String) {
        self.pool = pool
        self.keys = keys
        self.path = path
        writer = GoogleEventWriter(pool: pool, keys: keys)
    }

    /// RFC 8935 §2.3's error answer.
    static func error(_ status: Int, _ err: String, _ description: String, headers extra: HTTPHeaders = [:]) -> HTTPResponse {
        NotificationListener.json(status, ["err": err, "description": String(description.prefix(300))], headers: extra)
    }

    func answer(_ request: HTTPRequest) -> HTTPResponse {
        guard request.path == path else { return NotificationListener.json(404, ["error": "not_found"]) }
        guard request.method == "POST" else { return NotificationListener.json(405, ["error": "method_not_allowed"], headers: ["Allow": "POST"]) }
        guard request.body.count <= GoogleRISCVerifier.maxTokenBytes else { return Self.error(413, "invalid_request", "the body is over 64 KB") }
        let token = String(decoding: request.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let event: GoogleSecurityEvent
        do {
            // The audiences are read from the store per request: a short read, never behind the writer's queue.
            event = try pool.withStore { store in try GoogleSecurityInbox(store: store, keys: keys).verify(token, now: .now()) }
        } catch let refusal as GoogleRISCRefusal {
            writer.count(refusal, transport: .listener, source: request.remoteAddress)
            return Self.error(400, refusal.setError, refusal.description)
        } catch is GoogleRISCKeys.Unavailable {
            return Self.error(503, "temporarily_unavailable", "Google's RISC keys cannot be had now", headers: ["Retry-After": "60"])
        } catch {
            return Self.error(503, "temporarily_unavailable", "the store is busy", headers: ["Retry-After": "10"])
        }
        do {
            guard let receipt = try writer.record(event, fingerprint: GoogleSecurityInbox.fingerprint(of: token), transport: .listener, wait: Self.recordWait) else {
                return Self.error(503, "temporarily_unavailable", "the event could not be recorded in time; deliver it again", headers: ["Retry-After": "10"])
            }
            return HTTPResponse(status: 202, headers: ["Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store"],
                                body: Array("{\"status\":\"\(receipt.outcome.rawValue)\"}\n".utf8))
        } catch {
            return Self.error(503, "temporarily_unavailable", "the store is busy", headers: ["Retry-After": "10"])
        }
    }
}

extension GoogleCommands {
    enum Arguments {
        static let token: Argument<String> = .text("FILE", "the token as Google POSTed it (the body), or - for stdin", completion: .files)
    }

    enum Options {
        static let listen: Option<String?> = .text("listen", "ADDR:PORT", "where to listen (default 127.0.0.1:8789; port 0 picks a free one)")
        static let path: Option<String?> = .text("path", "PATH", "the request path Google's pushes come to (default /)")
        static let quiet: Option<Bool> = .flag("quiet", short: "q", "do not log requests")
        static let serviceAccount: Option<String?> = .text("service-account", "FILE", "the service account's JSON key (mode 0600; default GOOGLE_APPLICATION_CREDENTIALS)")
        static let url: Option<String> = .requiredText("url", "URL", "the https URL of the receiver, as Google reaches it", required: true)
        static let events: Option<[String]> = .texts("events", "TYPES", "all (the default), or event types separated by commas")
        static let state: Option<String?> = .text("state", "S", "the text the verification event carries back (default: gatehouse-<now>)")
    }
}
