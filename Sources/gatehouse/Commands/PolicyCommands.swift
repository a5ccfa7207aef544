import Foundation
import Gatehouse

/// `gatehouse policy`: the account-linking policy and the linkSocial `allowDifferentEmails` switch.
enum PolicyCommands: CommandNoun {
    static let name = "policy"
    static let summary = "the account-linking policy and the linkSocial allowDifferentEmails switch"

    static func make() -> CommandSpec {
        let simulateOptions: [OptionSpec] = [
            Options.provider.spec,
            Options.flow.spec,
            Options.email.spec,
            Options.noEmail.spec,
            Options.emailVerified.spec,
            Options.accountId.spec,
            Options.issuer.spec,
            Options.providerOption.spec,
            Options.generic.spec,
            Options.genericIdTokens.spec,
            Options.updateUserInfoOnLink.spec,
            Options.with.spec,
            .json,
        ]
        return CommandSpec(
            name: name,
            summary: summary,
            discussion: """
                Better Auth has one instance-wide allowDifferentEmails, which 1.7.1 reads only where a signed-in user links an
                account: POST /link-social (id token) and the redirect callback of a link. This policy scopes it:
                linkSocial.allowDifferentEmails is what the runtime applies to those requests (policy export's
                linkSocial.appliesTo), so a Hide My Email user can connect a provider that reports their real email, by id
                token or by redirect; autoLink.allowDifferentEmails (the instance-wide value everywhere else) stays false.
                The runtime reads the policy on every request. Keys:
                \(PolicyKey.allCases.map { "  \($0.rawValue) (\($0.kind.rawValue), default \($0.defaultValue.json)): \($0.summary)" }.joined(separator: "\n"))
                """,
            subcommands: [
                CommandSpec(name: "show", summary: "every key, its value, who set it, when, why, and when a timed value reverts",
                            options: [.json], run: show),
                CommandSpec(name: "set", summary: "change a key (a reason is required; optionally for a bounded time)",
                            discussion: """
                                With --for, the value reverts by itself to the value before it when the time is up (\(PolicyStore.durationRange);
                                nothing has to be running: the revert is computed on read and recorded by
                                the next change). --if-version applies the change only if nobody changed the policy since you read
                                that version. Setting autoLink.allowDifferentEmails to true lets links outside linkSocial's scope accept a
                                different email (email-based takeover wherever a link is made without the user's session) and
                                needs --accept-takeover-risk. Provider lists: ["google","apple"] or google,apple.
                                """,
                            arguments: [Arguments.key.spec, Arguments.value.spec],
                            options: [
                                Options.reason.spec,
                                Options.forDuration.spec,
                                Options.ifVersion.spec,
                                Options.acceptTakeoverRisk.spec,
                                .json,
                            ],
                            examples: [
                                "gatehouse policy set linkSocial.allowDifferentEmails true --reason \"D3 ratified: Connect account for Hide My Email users\"",
                                "gatehouse policy set linkSocial.allowDifferentEmails true --for 2h --if-version 4 --reason \"SUP-1234\"",
                                "gatehouse policy set accountLinking.trustedProviders google,apple --reason \"restore D3\"",
                            ],
                            run: set),
                CommandSpec(name: "history", summary: "every change and every automatic revert, newest first",
                            arguments: [Arguments.historyKey.spec],
                            options: [Options.limit.spec, .json],
                            run: history),
                CommandSpec(name: "export", summary: "the effective policy for the runtime's createBetterAuth(env)",
                            discussion: """
                                json: {"version", "generatedAt", "validUntil", "account": {"accountLinking": {...}}, "linkSocial":
                                {"allowDifferentEmails", "appliesTo"}}. account.accountLinking is Better Auth's option object; its
                                allowDifferentEmails is the instance-wide (autoLink) value; the runtime uses linkSocial.allowDifferentEmails
                                instead for every request in linkSocial.appliesTo: POST /link-social (the id-token link) and
                                GET|POST /callback/:providerId (where a link started by redirect compares emails; Better Auth 1.7.1 reads
                                allowDifferentEmails nowhere else). A runtime that scopes it to POST /link-social only leaves web users who
                                link by redirect with ?error=email_does_not_match. validUntil (absent when nothing is timed) is the next
                                automatic revert: re-read after it.
                                env: GATEHOUSE_POLICY_VERSION, GATEHOUSE_POLICY_VALID_UNTIL and GATEHOUSE_POLICY_JSON (the json
                                export on one line, single-quoted), for a shell, a dotenv file or a secrets upload.
                                """,
                            options: [Options.format.spec],
                            run: export),
                CommandSpec(name: "simulate", summary: "what Better Auth 1.7 would answer to a link or sign-in attempt",
                            subcommands: [
                                CommandSpec(name: "link", summary: "an authenticated linkSocial by a signed-in user, by id token or by redirect",
                                            discussion: """
                                                --flow id-token follows POST /link-social with an idToken (account.ts); --flow redirect follows the
                                                provider's redirect back to /callback/:provider (callback.ts), which checks in another order, answers
                                                with ?error= codes and reads the allowDifferentEmails of the instance serving the callback: the
                                                linkSocial switch reaches it only where the runtime applies it to /callback/* (policy export's
                                                linkSocial.appliesTo). The answer names the source line that decides it.
                                                """,
                                            options: [Options.user.spec] + simulateOptions,
                                            examples: [
                                                "gatehouse policy simulate link --user U1 --provider google --email ana@gmail.com --email-verified --with linkSocial.allowDifferentEmails=true",
                                                "gatehouse policy simulate link --flow redirect --user U1 --provider google --email ana@gmail.com --email-verified",
                                            ],
                                            run: simulateLink),
                                CommandSpec(name: "signin", summary: "a sign-in (implicit linking by email), by id token or by redirect",
                                            discussion: """
                                                Follows signIn.social with an idToken (sign-in.ts; errors as 401 OAUTH_LINK_ERROR with the reason, 403
                                                EMAIL_NOT_VERIFIED, 404 ID_TOKEN_NOT_SUPPORTED) or the redirect callback (callback.ts; ?error=account_not_linked,
                                                signup_disabled, email_not_verified, email_not_found, unable_to_link_account), then handleOAuthUserInfo
                                                (link-account.ts). Provider options the app sets: --provider-option disableSignUp, disableImplicitSignUp (with
                                                --request-sign-up), requireEmailVerification, disableIdTokenSignIn, verifyIdToken, overrideUserInfoOnSignIn;
                                                and --update-user-info-on-link for accountLinking.updateUserInfoOnLink, which decides whether an email the
                                                provider has just verified passes requireEmailVerification on an implicit link. Provider ids are matched
                                                exactly, as Better Auth matches them: a generic provider's id may have capitals, and Google is not google.
                                                """,
                                            options: simulateOptions + [Options.requestSignUp.spec],
                                            examples: [
                                                "gatehouse policy simulate signin --provider google --email ana@gmail.com --email-verified --account-id 1048576",
                                                "gatehouse policy simulate signin --provider apple --no-email --account-id 001234.abc.0001",
                                                "gatehouse policy simulate signin --flow redirect --provider github --email ana@gmail.com --provider-option disableSignUp",
                                            ],
                                            run: simulateSignIn),
                            ]),
            ],
            defaultSubcommand: "show",
            examples: [
                "gatehouse policy show",
                "gatehouse policy set linkSocial.allowDifferentEmails true --for 2h --reason \"SUP-1234\"",
                "gatehouse policy export --format env",
            ]
        )
    }

    static func show(_ invocation: Invocation) throws -> Int32 {
        let snapshot = try PolicyStore.open(path: invocation.storePath(), configurationPath: invocation.configurationPath).snapshot(now: .now())
        if invocation.json { try invocation.output.json(snapshot); return 0 }
        invocation.output.line("policy version \(snapshot.version)")
        invocation.output.table(["KEY", "VALUE", "SET BY", "SET AT", "REVERTS", "REASON"], snapshot.entries.map { entry in
            [entry.key, entry.value.json, entry.setBy ?? "(default)", entry.setAt?.iso8601 ?? "-",
             entry.revertsAt.map { "\($0.iso8601) → \(entry.revertsTo?.json ?? "?")" } ?? "-", oneLine(entry.reason ?? "-")]
        })
        invocation.output.line("linkSocial.allowDifferentEmails applies to \(snapshot.linkSocialAppliesTo.joined(separator: ", ")) (policy export's linkSocial.appliesTo)")
        for risk in snapshot.risks { invocation.output.line("\(risk.severity.rawValue.uppercased()): \(risk.message)") }
        return 0
    }

    static func set(_ invocation: Invocation) throws -> Int32 {
        let key = try invocation[Arguments.key]
        let value = try key.parse(try invocation[Arguments.value])
        var change = PolicyChange(key: key, value: value, reason: try invocation[Options.reason],
                                  acceptTakeoverRisk: try invocation[Options.acceptTakeoverRisk])
        if let duration = try invocation[Options.forDuration] { change.duration = duration }
        if let text = try invocation[Options.ifVersion] {
            guard let version = Int(text), version >= 0 else { throw invocation.usage("--if-version must be a whole number ≥ 0, got \"\(text.prefix(40))\"") }
            change.ifVersion = version
        }
        let result = try PolicyStore.open(path: invocation.storePath(), configurationPath: invocation.configurationPath, toChange: true)
            .set(change, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(result); return 0 }
        for revert in result.revertsRecorded {
            invocation.output.line("recorded revert: \(revert.key) \(revert.from.json) → \(revert.to.json) (expired \(revert.effectiveAt.iso8601), version \(revert.version))")
        }
        var text = "\(result.key): \(result.from.json) → \(result.to.json) (policy version \(result.version))"
        if let at = result.revertsAt, let to = result.revertsTo { text += "; reverts to \(to.json) at \(at.iso8601)" }
        invocation.output.line(text)
        return 0
    }

    static func history(_ invocation: Invocation) throws -> Int32 {
        let key = try invocation[Arguments.historyKey]
        let limit = try invocation[Options.limit]
        let entries = try PolicyStore(store: invocation.openStore()).history(key: key, limit: limit, now: .now())
        if invocation.json { try invocation.output.json(entries); return 0 }
        if entries.isEmpty { invocation.output.line("no policy changes yet: every key holds its default"); return 0 }
        invocation.output.table(["VERSION", "AT", "KEY", "CHANGE", "ACTOR", "REASON"], entries.map { entry in
            var change = "\(entry.from.json) → \(entry.to.json)"
            if entry.kind == .revert { change += entry.pending ? " (revert, due; recorded by the next change)" : " (revert)" }
            if let at = entry.revertsAt { change += " until \(at.iso8601)" }
            return [String(entry.version), entry.effectiveAt.iso8601, entry.key, change, entry.actor, oneLine(entry.reason)]
        })
        return 0
    }

    /// `policy export --format`: the JSON document, or `NAME=value` lines for the app's environment.
    enum ExportFormat: String, CaseIterable { case json, env }

    static func export(_ invocation: Invocation) throws -> Int32 {
        let format = try invocation[Options.format] ?? .json
        let export = try PolicyStore(store: invocation.openStore()).export(now: .now())
        if format == .env { invocation.output.write(export.environment) } else { try invocation.output.json(export) }
        return 0
    }

    static func simulateLink(_ invocation: Invocation) throws -> Int32 {
        let user = BetterAuthUserID(try invocation[Options.user])
        let decision = try LinkSimulator(store: invocation.openStore())
            .simulateLink(user: user, attempt: try attempt(invocation), overrides: try overrides(invocation), now: .now())
        return try report(decision, invocation)
    }

    static func simulateSignIn(_ invocation: Invocation) throws -> Int32 {
        let decision = try LinkSimulator(store: invocation.openStore())
            .simulateSignIn(attempt: try attempt(invocation), overrides: try overrides(invocation), now: .now())
        return try report(decision, invocation)
    }

    /// The provider options `--provider-option` takes, as Better Auth names them.
    static let providerOptionNames = ProviderSettings.Option.allCases.map(\.rawValue)

    static func attempt(_ invocation: Invocation) throws -> LinkAttempt {
        let email = try invocation[Options.email]
        switch (email, try invocation[Options.noEmail]) {
        case (nil, false): throw invocation.usage("missing --email (or --no-email when the provider reports none)")
        case (.some, true): throw invocation.usage("--email and --no-email are exclusive")
        default: break
        }
        var settings = ProviderSettings()
        for name in try invocation[Options.providerOption] {
            do { settings.set(try NamedChoice.parse(name, as: ProviderSettings.Option.self, caseSensitive: true)) } catch {
                throw invocation.usage(error.message(field: "--provider-option", echo: true))
            }
        }
        if try invocation[Options.generic] { settings.generic = true }
        if let text = try invocation[Options.genericIdTokens] {
            guard text == "yes" || text == "no" else { throw invocation.usage("--generic-id-tokens takes yes or no, got \"\(text.prefix(20))\"") }
            settings.genericIDTokens = text == "yes"
        }
        let flow = try invocation[Options.flow] ?? .idToken
        return LinkAttempt(provider: try invocation[Options.provider], email: email, emailVerified: try invocation[Options.emailVerified],
                           accountID: try invocation[Options.accountId], issuer: try invocation[Options.issuer], flow: flow,
                           requestSignUp: try invocation.ifDeclared(Options.requestSignUp) ?? false, settings: settings,
                           updateUserInfoOnLink: try invocation[Options.updateUserInfoOnLink])
    }

    static func overrides(_ invocation: Invocation) throws -> [PolicyKey: PolicyValue] {
        var overrides: [PolicyKey: PolicyValue] = [:]
        for text in try invocation[Options.with] {
            let (key, value) = try PolicyKey.assignment(text)
            guard overrides[key] == nil else { throw invocation.usage("--with \(key.rawValue) is given more than once") }
            overrides[key] = value
        }
        return overrides
    }

    /// Prints a decision. A simulated refusal is still a successful simulation: exit 0.
    static func report(_ decision: LinkDecision, _ invocation: Invocation) throws -> Int32 {
        if invocation.json { try invocation.output.json(decision); return 0 }
        let out = invocation.output
        out.line("\(decision.flow.rawValue): \(decision.headline)")
        out.line("rule: \(decision.rule) — \(decision.explanation)")
        out.line("flow: \(decision.via.rawValue)" + (decision.redirectTo.map { ", redirects to \($0)" } ?? ""))
        out.line("source: better-auth@1.7.1 \(decision.source)")
        if let user = decision.userID { out.line("user: \(user)") }
        out.line("policy: version \(decision.policyVersion)" + (decision.hypothetical.isEmpty ? "" : " with " + decision.hypothetical.joined(separator: ", ")))
        out.line("lookup: \(decision.accountLookup)")
        out.line("checks, in Better Auth's order:")
        for check in decision.checks { out.line("  \(check.decisive ? "→" : " ") \(check.rule): \(check.answer)") }
        if !decision.dependsOn.isEmpty {
            out.line("depends on (outside the store and the policy; taken as stated):")
            for item in decision.dependsOn { out.line("  - \(item)") }
        }
        if let note = decision.hideMyEmail {
            out.line("Hide My Email: flipping linkSocial.allowDifferentEmails to \(note.switchFlippedTo) \(note.switchWouldChange ? "WOULD change" : "would not change") this (→ \(note.outcomeWithSwitchFlipped))")
            out.line("  \(note.advice)")
        }
        for note in decision.notes { out.line("note: \(note)") }
        return 0
    }

    static func oneLine(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " ")
        return flat.count > 80 ? String(flat.prefix(79)) + "…" : flat
    }
}

extension PolicyCommands {
    /// The positional arguments these commands read, each declared once. The value is judged with its key.
    enum Arguments {
        static let key: Argument<PolicyKey> = .parsed("KEY", "a policy key, e.g. linkSocial.allowDifferentEmails", completion: keys, PolicyKey.named)
        static let value: Argument<String> = .text("VALUE", "true|false, or a provider list")
        static let historyKey: Argument<PolicyKey?> = .optionalParsed("KEY", "only this key's history", completion: keys, PolicyKey.named)
        private static let keys = ArgumentCompletion.words { PolicyKey.allCases.map(\.rawValue) }
    }

    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let acceptTakeoverRisk: Option<Bool> = .flag("accept-takeover-risk", "required to set autoLink.allowDifferentEmails to true")
        static let accountId: Option<String?> = .text("account-id", "A", "the provider's account id (sub); without it the account is taken to be new")
        static let email: Option<String?> = .text("email", "E", "the email the provider reports")
        static let emailVerified: Option<Bool> = .flag("email-verified", "the provider reports the email verified")
        static let flow: Option<AuthFlow?> = .choice("flow", "FLOW", "id-token (default: the app posts the provider's id token) or redirect (the web: /callback/:provider)", as: AuthFlow.self)
        static let forDuration: Option<Seconds?> = .duration("for", "DURATION", "revert to the previous value after this long (e.g. 2h, 7d)")
        static let format: Option<ExportFormat?> = .choice("format", "FORMAT", "json (default) or env", as: ExportFormat.self)
        static let generic: Option<Bool> = .flag("generic", "the provider is a generic OAuth (plugin) provider (the default for ids Better Auth has no provider for)")
        static let genericIdTokens: Option<String?> = .text("generic-id-tokens", "yes|no", "a generic provider's discovery gave an issuer and jwks_uri (id tokens verifiable)")
        static let ifVersion: Option<String?> = .text("if-version", "N", "refuse unless the policy is at version N")
        static let issuer: Option<String?> = .text("issuer", "URL", "the issuer Better Auth writes for this account, where the provider's depends on configuration or the token (microsoft, cognito, generic OAuth)")
        static let limit: Option<Int> = .integer("limit", "N", "at most N entries (default 200, at most 100000)", default: 200, range: 1...100_000)
        static let noEmail: Option<Bool> = .flag("no-email", "the provider reports no email (e.g. a returning Apple user's token)")
        static let provider: Option<String> = .requiredText("provider", "P", "the provider id (google, apple, or a generic provider's id exactly as the app spells it)", required: true)
        static let providerOption: Option<[String]> = .texts("provider-option", "NAME", "an option the app sets on the provider: \(providerOptionNames.joined(separator: ", "))")
        static let reason: Option<String> = .requiredText("reason", "TEXT", "why (kept in the history and the audit log; at most \(PolicyStore.maxReasonLength) characters)", required: true)
        static let requestSignUp: Option<Bool> = .flag("request-sign-up", "the client sends requestSignUp: true")
        static let updateUserInfoOnLink: Option<Bool> = .flag("update-user-info-on-link", "the app sets accountLinking.updateUserInfoOnLink (in code; not a policy key): an implicit link then checks the user row as updated")
        static let user: Option<String> = .requiredText("user", "ID", "the signed-in user's Better Auth id", required: true)
        static let with: Option<[String]> = .texts("with", "KEY=VALUE", "simulate under a hypothetical value instead of the stored one")
    }
}
