import Foundation
import Gatehouse

/// `gatehouse apple`: the Sign in with Apple key ring, client secrets, and the export for the runtime.
enum AppleCommands: CommandNoun {
    static let name = "apple"
    static let summary = "Apple signing inputs: the .p8 key ring, client secrets, export"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            discussion: """
                A key goes staged → active → retired, and revoked (final). Keys are sealed at rest under the master key;
                the private key is printed only by `apple export --reveal`. Apple allows two keys per primary App ID.
                """,
            subcommands: [
                CommandSpec(name: "key", summary: "the .p8 key ring",
                            subcommands: [
                                CommandSpec(name: "list", summary: "every key: id, team, state, fingerprint, and when it changed state",
                                            options: [.json], run: list),
                                CommandSpec(name: "import", summary: "seal a .p8 into the ring as staged",
                                            discussion: "The Key ID comes from Apple's file name AuthKey_<KEYID>.p8 unless --key-id is given; the Team ID from --team-id, else `providers set apple --team-id`.",
                                            arguments: [Arguments.p8File.spec],
                                            options: [
                                                Options.keyId.spec,
                                                Options.teamId.spec,
                                                .json,
                                            ],
                                            examples: ["gatehouse apple key import ~/Downloads/AuthKey_ABCDEFGHIJ.p8 --team-id TEAM123456"],
                                            run: importKey),
                                CommandSpec(name: "activate", summary: "self-test a key, then make it active (the active one becomes retired)",
                                            arguments: [Arguments.keyID.spec], options: [.json], run: activate),
                                CommandSpec(name: "rollback", summary: "re-activate the most recently retired key that is not revoked",
                                            options: [.json], run: rollback),
                                CommandSpec(name: "revoke", summary: "record that a key was revoked in Apple's portal (it can never be activated again)",
                                            arguments: [Arguments.keyID.spec],
                                            options: [Options.force.spec, .json], run: revoke),
                                CommandSpec(name: "selftest", summary: "open a sealed key, mint a client secret and verify it",
                                            arguments: [Arguments.selfTestKeyID.spec],
                                            options: [.json], run: selftest),
                            ],
                            defaultSubcommand: "list"),
                CommandSpec(name: "secret", summary: "client secrets: mint, track a deployed one, inspect",
                            subcommands: [
                                CommandSpec(name: "mint", summary: "print a client secret minted from the active key",
                                            discussion: "Header alg ES256, kid; claims iss (Team ID), iat, exp, aud https://appleid.apple.com, sub (client id). Lifetimes over Apple's cap of 15,777,000 s are refused.",
                                            options: [
                                                Options.ttl.spec,
                                                Options.clientId.spec,
                                                .json,
                                            ],
                                            examples: ["gatehouse apple secret mint --ttl 1h", "gatehouse apple secret mint --ttl 90d | gatehouse apple secret track -"],
                                            run: mint),
                                CommandSpec(name: "track", summary: "watch the expiry of a secret deployed as a static value (stores its expiry and SHA-256, never the token)",
                                            arguments: [Arguments.secret.spec],
                                            options: [.json], run: track),
                                CommandSpec(name: "inspect", summary: "decode a client secret and name every fault that makes Apple answer invalid_client",
                                            discussion: "Exit status 1 when a fault is found.",
                                            arguments: [Arguments.secret.spec],
                                            options: [.json], run: inspect),
                                CommandSpec(name: "list", summary: "tracked secrets, soonest expiry first", options: [.json], run: tracked),
                                CommandSpec(name: "untrack", summary: "stop watching a deployed secret (replaced, or the runtime now mints per request)",
                                            arguments: [Arguments.fingerprint.spec],
                                            options: [.json], run: untrack),
                                CommandSpec(name: "bench", summary: "benchmark: mint client secrets from a throwaway key on one thread for N seconds",
                                            discussion: "A benchmark for ops/bench, comparable with `openssl speed ecdsap256` (one thread). Touches no store.",
                                            options: [Options.seconds.spec, .json],
                                            run: bench),
                            ]),
                CommandSpec(name: "export", summary: "print the inputs for a runtime that mints per request (needs --reveal)",
                            discussion: """
                                Prints APPLE_TEAM_ID, APPLE_KEY_ID, APPLE_CLIENT_ID, APPLE_APP_BUNDLE_IDENTIFIER (when configured) and
                                APPLE_PRIVATE_KEY from the active key. The only command that prints the private key: refused without
                                --reveal, and every reveal is recorded in the audit log. Pipe it straight into a secrets store.
                                """,
                            options: [
                                Options.format.spec,
                                Options.reveal.spec,
                            ],
                            examples: ["gatehouse apple export --format env --reveal > .dev.vars"],
                            run: export),
                AppleLifecycleCommands.notificationsSpec(),
                AppleLifecycleCommands.revokeSpec(),
                AppleTransferCommands.spec(),
            ],
            examples: [
                "gatehouse apple key import AuthKey_ABCDEFGHIJ.p8 --team-id TEAM123456",
                "gatehouse apple key activate ABCDEFGHIJ",
                "gatehouse apple secret inspect - < deployed-secret.txt",
            ]
        )
    }

    // MARK: key

    static func list(_ invocation: Invocation) throws -> Int32 {
        let ring = AppleKeyRing(store: try invocation.openStore())
        let keys = try ring.list()
        let warnings = ring.warnings(keys)
        struct Listing: Encodable { let keys: [AppleKey]; let warnings: [AppleFinding] }
        if invocation.json { try invocation.output.json(Listing(keys: keys, warnings: warnings)); return 0 }
        if keys.isEmpty { invocation.output.line("the key ring is empty: gatehouse apple key import AuthKey_<KEYID>.p8 --team-id <TEAMID>"); return 0 }
        invocation.output.table(["KEY ID", "TEAM ID", "STATE", "FINGERPRINT", "IMPORTED", "ACTIVATED", "RETIRED", "REVOKED"], keys.map { key in
            [key.keyID.rawValue, key.teamID.rawValue, key.state.rawValue, String(key.fingerprint.prefix(16)) + "…", key.importedAt.iso8601,
             key.activatedAt?.iso8601 ?? "-", key.retiredAt?.iso8601 ?? "-", key.revokedAt?.iso8601 ?? "-"]
        })
        TokenCommands.printFindings(warnings, invocation.output)
        return 0
    }

    static func importKey(_ invocation: Invocation) throws -> Int32 {
        let file = try invocation[Arguments.p8File]
        let result = try AppleKeyRing(store: try invocation.openStore())
            .importKey(file: file, keyID: try invocation[Options.keyId].map { try KeyID($0) }, teamID: try invocation[Options.teamId].map { try TeamID($0) },
                       actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(result); return 0 }
        invocation.output.line("imported \(result.key.keyID) (team \(result.key.teamID)) as staged; fingerprint \(result.key.fingerprint)")
        invocation.output.line("next: gatehouse apple key activate \(result.key.keyID)")
        TokenCommands.printFindings(result.warnings, invocation.output)
        return 0
    }

    static func activate(_ invocation: Invocation) throws -> Int32 {
        let result = try AppleKeyRing(store: try invocation.openStore()).activate(try invocation[Arguments.keyID], actor: invocation.actor, now: .now())
        return try report(result, verb: "activated", invocation)
    }

    static func rollback(_ invocation: Invocation) throws -> Int32 {
        let result = try AppleKeyRing(store: try invocation.openStore()).rollback(actor: invocation.actor, now: .now())
        return try report(result, verb: "rolled back to", invocation)
    }

    static func revoke(_ invocation: Invocation) throws -> Int32 {
        let result = try AppleKeyRing(store: try invocation.openStore()).revoke(try invocation[Arguments.keyID], force: try invocation[Options.force], actor: invocation.actor, now: .now())
        return try report(result, verb: "recorded as revoked:", invocation)
    }

    static func report(_ result: AppleKeyRing.Transition, verb: String, _ invocation: Invocation) throws -> Int32 {
        if invocation.json { try invocation.output.json(result); return 0 }
        if !result.changed {
            invocation.output.line("\(result.key.keyID) is already \(result.key.state.rawValue); nothing changed")
        } else {
            if let test = result.selfTest { invocation.output.line("self-test of \(test.keyID) passed") }
            invocation.output.line("\(verb) \(result.key.keyID) (now \(result.key.state.rawValue))" + (result.retired.map { "; \($0) is now retired" } ?? ""))
        }
        TokenCommands.printFindings(result.warnings, invocation.output)
        return 0
    }

    static func selftest(_ invocation: Invocation) throws -> Int32 {
        let id = try invocation[Arguments.selfTestKeyID]
        let test = try AppleKeyRing(store: try invocation.openStore()).selfTest(id, now: .now())
        if invocation.json { try invocation.output.json(test) } else {
            invocation.output.line("self-test of \(test.keyID) (fingerprint \(test.fingerprint.prefix(16))…): \(test.passed ? "passed" : "FAILED")")
            TokenCommands.printFindings(test.checks, invocation.output)
        }
        return test.passed ? 0 : 1
    }

    // MARK: secret

    static func mint(_ invocation: Invocation) throws -> Int32 {
        var lifetime = ClientSecretMinter.defaultLifetime
        if let duration = try invocation[Options.ttl] { lifetime = duration }
        let minted = try ClientSecretService(store: try invocation.openStore())
            .mint(clientID: try invocation[Options.clientId], lifetime: lifetime, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(minted) } else { invocation.output.line(minted.token) }
        return 0
    }

    static func track(_ invocation: Invocation) throws -> Int32 {
        let result = try ClientSecretService(store: try invocation.openStore()).track(try TokenCommands.readToken(invocation, Arguments.secret), actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(result); return 0 }
        let tracked = result.tracked
        invocation.output.line("tracking the client secret for \(tracked.clientID) (key \(tracked.keyID)): expires \(tracked.expiresAt.iso8601); fingerprint \(tracked.fingerprint.prefix(16))…")
        TokenCommands.printFindings(result.inspection.findings.filter { $0.severity >= .warning }, invocation.output)
        return 0
    }

    static func inspect(_ invocation: Invocation) throws -> Int32 {
        let inspection = try ClientSecretInspector(store: try invocation.openStore()).inspect(try TokenCommands.readToken(invocation, Arguments.secret), now: .now())
        if invocation.json { try invocation.output.json(inspection) } else {
            invocation.output.line(inspection.verdict)
            if let claims = inspection.claims {
                invocation.output.line("  kid \(claims.keyID ?? "-")  iss \(claims.issuer ?? "-")  sub \(claims.subject ?? "-")  alg \(claims.algorithm)  signature \(claims.signatureLength) bytes")
            }
            TokenCommands.printFindings(inspection.findings, invocation.output)
        }
        return inspection.acceptable ? 0 : 1
    }

    static func tracked(_ invocation: Invocation) throws -> Int32 {
        let secrets = try ClientSecretService(store: try invocation.openStore()).tracked()
        if invocation.json { try invocation.output.json(secrets); return 0 }
        if secrets.isEmpty { invocation.output.line("no tracked client secrets"); return 0 }
        invocation.output.table(["KEY ID", "CLIENT ID", "ISSUED", "EXPIRES", "FINGERPRINT", "TRACKED BY"], secrets.map {
            [$0.keyID, $0.clientID, $0.issuedAt.iso8601, $0.expiresAt.iso8601, String($0.fingerprint.prefix(16)) + "…", $0.trackedBy]
        })
        return 0
    }

    static func untrack(_ invocation: Invocation) throws -> Int32 {
        let secret = try ClientSecretService(store: try invocation.openStore())
            .untrack(fingerprint: try invocation[Arguments.fingerprint], actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(secret); return 0 }
        invocation.output.line("no longer tracking the secret for \(secret.clientID) (key \(secret.keyID), expires \(secret.expiresAt.iso8601))")
        return 0
    }

    static func bench(_ invocation: Invocation) throws -> Int32 {
        let seconds = try invocation[Options.seconds]
        let result = try ClientSecretBenchmark.run(seconds: Double(seconds))
        if invocation.json { try invocation.output.json(result) } else {
            invocation.output.line(String(format: "%.0f tokens/s (%d tokens in %.2f s, one thread)", result.tokensPerSecond, result.tokens, result.seconds))
        }
        return 0
    }

    // MARK: export

    static func export(_ invocation: Invocation) throws -> Int32 {
        let format = try invocation[Options.format] ?? .env
        let values = try AppleExport(store: try invocation.openStore()).export(format: format, reveal: try invocation[Options.reveal], actor: invocation.actor, now: .now())
        invocation.output.write(try AppleExport.render(values, format: format))
        return 0
    }
}

extension AppleCommands {
    /// The positional arguments these commands read, each declared once.
    enum Arguments {
        static let p8File: Argument<String> = .text("FILE", "the AuthKey_<KEYID>.p8 downloaded from Apple", completion: .files)
        static let keyID: Argument<KeyID> = .parsed("ID", "the Key ID") { try KeyID($0) }
        static let selfTestKeyID: Argument<KeyID?> = .optionalParsed("ID", "the Key ID (default: the active key)") { try KeyID($0) }
        static let secret: Argument<String> = .text("JWT", "the client secret, or - to read it from stdin")
        static let fingerprint: Argument<String> = .text("FINGERPRINT", "the secret's fingerprint from `apple secret list` (at least 8 characters)")
    }

    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let clientId: Option<String?> = .text("client-id", "ID", "the sub (default: the configured Services ID)")
        static let force: Option<Bool> = .flag("force", "revoke even the active key (it leaked, or Apple already revoked it)")
        static let format: Option<AppleExport.Format?> = .choice("format", "FORMAT", "env (default) or json", as: AppleExport.Format.self)
        static let keyId: Option<String?> = .text("key-id", "ID", "the Key ID (10 upper-case letters or digits)")
        static let reveal: Option<Bool> = .flag("reveal", "print the private key (audited)")
        static let seconds: Option<Int> = .integer("seconds", "N", "how long to mint (default 3, at most 60)", default: 3, range: 1...60)
        static let teamId: Option<String?> = .text("team-id", "ID", "the Team ID (10 upper-case letters or digits)")
        static let ttl: Option<Seconds?> = .duration("ttl", "DURATION", "lifetime (default 1h; at most 15777000 s, about 182d)")
    }
}
