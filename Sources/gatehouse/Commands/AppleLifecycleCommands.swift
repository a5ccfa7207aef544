import Foundation
import Gatehouse
import HTTPServer

/// `gatehouse apple notifications …` and `gatehouse apple revoke`: the Apple account lifecycle after sign-in —
/// Apple's server-to-server notifications received and acted on, and a user's Apple tokens revoked.
enum AppleLifecycleCommands {
    /// The largest notification body accepted. Apple's `{"payload": "<JWT>"}` is about 1 KB.
    static let maxBodyBytes = 16 * 1024

    static func notificationsSpec() -> CommandSpec {
        CommandSpec(name: "notifications", summary: "Apple's server-to-server notifications: receive, ingest, list",
                    discussion: """
                        Apple POSTs {"payload": "<JWT>"} to the endpoint registered for the app. Each is verified (RS256 under Apple's
                        keys from {base}/auth/keys, cached for the answer's Cache-Control max-age, or --jwks FILE; iss, aud among the
                        configured Apple client ids, iat, exp; events as the JSON string Apple sends), recorded once by jti + sub + type,
                        and acted on with an audit entry: email-disabled/-enabled record the relay's forwarding state, consent-revoked
                        ends the user's sessions and marks the account revoked, account-delete opens a deletion request for support.
                        A refused notification changes nothing and is counted per reason and source, with the last one's words
                        (never the token). A token naming a key Apple's set lacks makes at most one fetch of the keys a minute.
                        """,
                    subcommands: [
                        CommandSpec(name: "serve", summary: "a small listener for Apple's POSTs, to sit behind your TLS proxy",
                                    discussion: """
                                        Answers only POST of Apple's body on --path: 200 once recorded (a duplicate too), 400 for a refused or
                                        malformed one, 503 (Retry-After) when Apple's keys or the store cannot be had now, so that Apple
                                        sends it again; 404 for another path, 405 for another method, 413 for a body over 16 KiB. It serves
                                        no console and no file. Runs until SIGINT or SIGTERM.
                                        """,
                                    options: [
                                        Options.listen.spec,
                                        Options.path.spec,
                                        Options.jwks.spec,
                                        Options.quiet.spec,
                                    ],
                                    examples: ["gatehouse apple notifications serve --store auth.sqlite --listen 127.0.0.1:8788"],
                                    run: serve),
                        CommandSpec(name: "ingest", summary: "verify and record one body another transport stored (exit 1 if refused)",
                                    arguments: [Arguments.body.spec],
                                    options: [Options.jwks.spec, .json],
                                    examples: ["gatehouse apple notifications ingest body.json", "wrangler kv key get … | gatehouse apple notifications ingest -"],
                                    run: ingest),
                        CommandSpec(name: "list", summary: "the latest notifications, newest first (no token is kept)",
                                    options: [Options.limit.spec, .json],
                                    run: list),
                    ],
                    defaultSubcommand: "list")
    }

    static func revokeSpec() -> CommandSpec {
        CommandSpec(name: "revoke", summary: "revoke every Apple token Better Auth holds for a user (Guideline 5.1.1(v), TN3194)",
                    discussion: """
                        For each Apple account of the user: its refresh token (else access token) is sent to {base}/auth/revoke
                        with a client secret freshly minted from the active key for the account's client id. The token is never
                        printed. Base URL https://appleid.apple.com unless GATEHOUSE_APPLE_BASE_URL is set; each call times out after
                        GATEHOUSE_APPLE_TIMEOUT_SECONDS (default 10). Exit status 1 when any account failed.
                        """,
                    options: [
                        Options.user.spec,
                        Options.dryRun.spec,
                        .json,
                    ],
                    examples: ["gatehouse apple revoke --user ana@example.com --dry-run", "gatehouse apple revoke --user u1AAAA…"],
                    run: revoke)
    }

    // MARK: notifications

    static func keySource(_ invocation: Invocation) throws -> AppleKeySource {
        if let file = try invocation[Options.jwks] { return try AppleKeySource(file: file) }
        return AppleKeySource()
    }

    static func ingest(_ invocation: Invocation) throws -> Int32 {
        let file = try invocation[Arguments.body]
        let body: [UInt8]
        if file == "-" {
            body = [UInt8]((try? FileHandle.standardInput.read(upToCount: maxBodyBytes + 1)) ?? Data())
        } else {
            try InputFile.requireRegular(file, what: "the notification body")
            guard let handle = FileHandle(forReadingAtPath: file) else {
                throw GatehouseError.notFound("cannot read the notification body \(file)", fix: "check the path")
            }
            defer { try? handle.close() }
            body = [UInt8]((try? handle.read(upToCount: maxBodyBytes + 1)) ?? Data())
        }
        guard body.count <= maxBodyBytes else {
            throw GatehouseError.invalid("the notification body is over \(maxBodyBytes / 1024) KiB; Apple's is about 1 KB", fix: "pass the body exactly as Apple POSTed it ({\"payload\": \"<JWT>\"})")
        }
        let keys = try keySource(invocation)
        let receipt = try AppleNotificationInbox(store: try invocation.openStore(), keys: keys).receive(body: body, transport: .ingest, now: .now())
        if invocation.json { try invocation.output.json(receipt) } else { invocation.output.line(describe(receipt)) }
        return receipt.acknowledged ? 0 : 1
    }

    static func describe(_ receipt: AppleNotificationInbox.Receipt) -> String {
        let what = [receipt.type, receipt.sub.map { "sub \($0)" }, receipt.userID.map { "user \($0)" }].compactMap { $0 }.joined(separator: ", ")
        if let refusal = receipt.refusal {
            return "\(receipt.outcome.rawValue): counted as \(refusal.rawValue) (\(receipt.refusals ?? 1) so far): \(receipt.message)"
        }
        let id = receipt.id.map { "notification \($0)" } ?? "not recorded"
        return "\(receipt.outcome.rawValue): \(id)\(what.isEmpty ? "" : " (\(what))"): \(receipt.message)"
    }

    static func list(_ invocation: Invocation) throws -> Int32 {
        let entries = try AppleNotificationInbox.list(store: try invocation.openStore(), limit: try invocation[Options.limit])
        if invocation.json { try invocation.output.json(entries); return 0 }
        if entries.isEmpty { invocation.output.line("no Apple notifications recorded"); return 0 }
        // A counter of refusals shows how many, why and from where, since when; its time is the last one's.
        invocation.output.table(["ID", "RECEIVED", "OUTCOME", "TYPE", "SUB", "USER", "WHAT"], entries.map {
            if let count = $0.count {
                return ["-", $0.receivedAt, "refused ×\(count)", "-", "-", "-",
                        "\($0.refusal ?? "?") from \($0.source ?? "?") since \($0.firstSeen ?? "?"); last: \($0.reason ?? "-")"]
            }
            return [String($0.id), $0.receivedAt, $0.outcome, $0.type ?? "-", $0.sub ?? "-", $0.userID ?? "-", $0.reason ?? $0.action ?? "-"]
        })
        return 0
    }

    static func serve(_ invocation: Invocation) throws -> Int32 {
        let (address, port) = try ServeCommand.parseListen(try invocation[Options.listen] ?? "127.0.0.1:8788", invocation: invocation)
        let path = try invocation[Options.path] ?? "/"
        guard path.hasPrefix("/"), !path.contains("?") else { throw invocation.usage("--path must start with / and hold no query, got \"\(path.prefix(60))\"") }
        let keys = try keySource(invocation)
        let pool = try StorePool(path: try invocation.storePath(), configurationPath: GlobalOptions.configurationPath(invocation), size: 2)
        let log = try !invocation[Options.quiet]
        let server = HTTPServer(configuration: HTTPServerConfiguration(address: address, port: port, threadPoolSize: 2, connectionLimit: 64,
                                                                      connectionTimeoutSeconds: 15, maxBodyBytes: maxBodyBytes)) { request in
            let response = NotificationListener.answer(request, path: path, pool: pool, keys: keys)
            if log { NotificationListener.log(request, response) }
            return response
        }
        let termination = TerminationSignals()
        try server.start()
        let shown = address.contains(":") ? "[\(address)]" : address
        invocation.output.line("Apple notifications listener on http://\(shown):\(server.port)\(path) (keys \(keys.description)); Ctrl-C stops it")
        let signal = termination.wait()
        invocation.output.error("gatehouse: stopping (signal \(signal))")
        server.stop()
        return 0
    }

    // MARK: revoke

    static func revoke(_ invocation: Invocation) throws -> Int32 {
        let reference = try invocation[Options.user]
        let store = try invocation.openStore()
        let user = try UserDirectory(store: store).show(reference, latestSessions: 0).user
        var revoker = AppleTokenRevoker(store: store, baseURL: nil, now: .now())
        revoker.actor = try invocation.actor
        let dryRun = try invocation[Options.dryRun]
        let outcomes = try revoker.revoke(userID: user.id.rawValue, dryRun: dryRun)
        let failed = outcomes.contains { !$0.succeeded }
        if invocation.json {
            struct Report: Encodable { let userId: String; let dryRun: Bool; let outcomes: [AppleRevocationOutcome] }
            try invocation.output.json(Report(userId: user.id.rawValue, dryRun: dryRun, outcomes: outcomes))
            return failed ? 1 : 0
        }
        if outcomes.isEmpty { invocation.output.line("user \(user.id) has no Apple account; nothing to revoke") }
        for outcome in outcomes {
            invocation.output.line("account \(outcome.accountID): \(outcome.outcome.rawValue): \(outcome.message)")
        }
        return failed ? 1 : 0
    }
}

/// The listener's answers, kept off the main actor: libmicrohttpd calls the handler from its own threads.
enum NotificationListener {
    static func json(_ status: Int, _ fields: [String: String], headers extra: HTTPHeaders = [:]) -> HTTPResponse {
        var headers: HTTPHeaders = ["Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store"]
        for (name, value) in extra { headers[name] = value }
        let body = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])).map { [UInt8]($0) } ?? []
        return HTTPResponse(status: status, headers: headers, body: body + [UInt8(ascii: "\n")])
    }

    static func answer(_ request: HTTPRequest, path: String, pool: StorePool, keys: AppleKeySource) -> HTTPResponse {
        guard request.path == path else { return json(404, ["error": "not_found"]) }
        guard request.method == "POST" else { return json(405, ["error": "method_not_allowed"], headers: ["Allow": "POST"]) }
        do {
            let receipt = try pool.withStore { store in
                try AppleNotificationInbox(store: store, keys: keys).receive(body: request.body, transport: .listener, source: request.remoteAddress, now: .now())
            }
            switch receipt.outcome {
            case .accepted, .unknownSub, .duplicate:
                return json(200, ["status": receipt.outcome.rawValue])
            case .keysUnavailable:
                return json(503, ["error": "keys_unavailable"], headers: ["Retry-After": "60"])
            case .refused, .malformed:
                return json(400, ["error": receipt.outcome.rawValue, "reason": receipt.message])
            }
        } catch {
            // The store is busy or unreachable: Apple sends the notification again until it gets a 200.
            return json(503, ["error": "unavailable"], headers: ["Retry-After": "30"])
        }
    }

    static func log(_ request: HTTPRequest, _ response: HTTPResponse) {
        let method = request.method.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.isAlphabetic } ? String(request.method.prefix(10)) : "?"
        let line = "\(Timestamp.now().iso8601) \(request.remoteAddress) \(method) \(response.status) \(request.body.count) bytes\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }
}

extension AppleLifecycleCommands {
    /// The positional arguments these commands read, each declared once.
    enum Arguments {
        static let body: Argument<String> = .text("FILE", "the raw body Apple sent ({\"payload\": \"<JWT>\"}), or - for stdin", completion: .files)
    }

    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let jwks: Option<String?> = .text("jwks", "FILE", "Apple's keys from this JWKS file instead of {base}/auth/keys")
        static let dryRun: Option<Bool> = .flag("dry-run", "say what would be sent; send nothing")
        static let limit: Option<Int> = .integer("limit", "N", "how many (default 50, at most 5000)", default: 50, range: 1...5000)
        static let listen: Option<String?> = .text("listen", "ADDR:PORT", "where to listen (default 127.0.0.1:8788; port 0 picks a free one)")
        static let path: Option<String?> = .text("path", "PATH", "the request path Apple's POSTs come to (default /)")
        static let quiet: Option<Bool> = .flag("quiet", short: "q", "do not log requests")
        static let user: Option<String> = .requiredText("user", "USER", "the user: id, email, sync sub or Apple account id", required: true)
    }
}
