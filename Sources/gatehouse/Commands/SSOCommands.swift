import Foundation
import Gatehouse

/// `gatehouse sso`: single sign-on to the console through the company's OpenID Connect provider.
enum SSOCommands: CommandNoun {
    static let name = "sso"
    static let summary = "single sign-on to the console through an OpenID Connect provider: set, show, disable"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            discussion: """
                The console sends people to the provider (the authorization code flow with PKCE) and takes their role from
                the groups claim of their ID token: admin over support over viewer; someone in none of the groups is refused.
                An SSO admin is named by their email and has no password; each sign-in decides their role again, and a
                sign-in lasts one access token (15 minutes by default) before the console sends them through the provider
                again. The client secret is sealed under the store's master key and never printed. With --password-login
                off the console refuses passwords; these commands on the host stay the break-glass path. To keep out
                someone the provider still lets in, `gatehouse admins disable EMAIL`: a disabled SSO admin is refused
                (removing them would let their next sign-in make them again).
                """,
            subcommands: [
                CommandSpec(name: "set", summary: "set the provider, the client and the groups that give each role",
                            discussion: """
                                The issuer must be https (plain http only to this machine). The console's callback is
                                /api/auth/sso/callback at the address it is opened at, or --redirect-uri; register it with the
                                provider. Every option is set as given: one left out is cleared.
                                """,
                            options: [Options.issuer.spec, Options.clientID.spec, Options.clientSecretFile.spec, Options.redirectURI.spec,
                                      Options.adminGroup.spec, Options.supportGroup.spec, Options.viewerGroup.spec, Options.groupsClaim.spec,
                                      Options.allowedDomain.spec, Options.passwordLogin.spec, .json],
                            examples: ["gatehouse sso set --issuer https://login.example.com --client-id gatehouse --client-secret-file sso.secret --admin-group ops-admins --viewer-group staff"],
                            run: set),
                CommandSpec(name: "show", summary: "the provider and groups (never the client secret)", options: [.json], run: show),
                CommandSpec(name: "disable", summary: "turn single sign-on off (password login is then the console's way in)", options: [.json], run: disable),
            ],
            defaultSubcommand: "show",
            examples: ["gatehouse sso show", "gatehouse sso disable"]
        )
    }

    /// What `set` prints with --json.
    struct SetResult: Encodable {
        let sso: SSOSettings
        let replaced: Bool
    }

    /// What `show` prints with --json.
    struct ShowResult: Encodable {
        let enabled: Bool
        let sso: SSOSettings?
    }

    static func set(_ invocation: Invocation) throws -> Int32 {
        let passwordLogin: Bool
        switch try invocation[Options.passwordLogin] {
        case nil, "on": passwordLogin = true
        case "off": passwordLogin = false
        case let other?: throw invocation.usage("--password-login takes on or off, not \"\(AdminUsername.printable(String(other.prefix(20))))\"")
        }
        let settings = SSOSettings(issuer: try invocation[Options.issuer], clientID: try invocation[Options.clientID],
                                   redirectURI: try invocation[Options.redirectURI], adminGroup: try invocation[Options.adminGroup],
                                   supportGroup: try invocation[Options.supportGroup], viewerGroup: try invocation[Options.viewerGroup],
                                   groupsClaim: try invocation[Options.groupsClaim] ?? SSOSettings.standardGroupsClaim,
                                   allowedDomain: try invocation[Options.allowedDomain], passwordLogin: passwordLogin)
        // Checked before the secret file is read or the store opened: a mistyped URL is refused at once.
        _ = try settings.validated()
        let secret = try SSOClientSecret(readFrom: try invocation[Options.clientSecretFile], option: "--client-secret-file")
        let (stored, replaced) = try SSOConfiguration(store: invocation.openStore()).set(settings, secret: secret, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(SetResult(sso: stored, replaced: replaced)); return 0 }
        invocation.output.line("\(replaced ? "Replaced" : "Set") single sign-on through \(stored.issuer) (client \(stored.clientID)); the client secret is sealed under the master key")
        print(stored, invocation)
        return 0
    }

    static func show(_ invocation: Invocation) throws -> Int32 {
        let settings = try SSOConfiguration(store: invocation.openStore()).current()
        if invocation.json { try invocation.output.json(ShowResult(enabled: settings != nil, sso: settings)); return 0 }
        guard let settings else {
            invocation.output.line("Single sign-on is off: set it with `gatehouse sso set --issuer URL --client-id ID --client-secret-file FILE --admin-group G`")
            return 0
        }
        print(settings, invocation)
        return 0
    }

    static func disable(_ invocation: Invocation) throws -> Int32 {
        let removed = try SSOConfiguration(store: invocation.openStore()).disable(actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(["disabled": removed]); return 0 }
        invocation.output.line(removed ? "Single sign-on is off; the console accepts passwords again" : "Single sign-on was not set; nothing to do")
        return 0
    }

    private static func print(_ settings: SSOSettings, _ invocation: Invocation) {
        invocation.output.table(["SETTING", "VALUE"], [
            ["issuer", settings.issuer],
            ["client id", settings.clientID],
            ["client secret", "(sealed)"],
            ["redirect uri", settings.redirectURI ?? "(the console's own /api/auth/sso/callback)"],
            ["admin group", settings.adminGroup ?? "-"],
            ["support group", settings.supportGroup ?? "-"],
            ["viewer group", settings.viewerGroup ?? "-"],
            ["groups claim", settings.groupsClaim],
            ["allowed domain", settings.allowedDomain ?? "-"],
            ["password login", settings.passwordLogin ? "on" : "off"],
            ["updated", [settings.updatedAt?.iso8601, settings.updatedBy].compactMap { $0 }.joined(separator: " by ")],
        ].map { $0.map { OperatorText.visible($0, keepLineBreaks: false) } })
    }

    /// The options these commands read, each declared once.
    enum Options {
        static let issuer: Option<String> = .requiredText("issuer", "URL", "the provider's issuer (https; its /.well-known/openid-configuration is read)", required: true)
        static let clientID: Option<String> = .requiredText("client-id", "ID", "the console's client id at the provider", required: true)
        static let clientSecretFile: Option<String> = .requiredText("client-secret-file", "FILE", "read the client secret from the first line of FILE (- for stdin)", required: true)
        static let redirectURI: Option<String?> = .text("redirect-uri", "URI", "the callback registered with the provider (default: /api/auth/sso/callback where the console is opened)")
        static let adminGroup: Option<String?> = .text("admin-group", "G", "members of G get the admin role")
        static let supportGroup: Option<String?> = .text("support-group", "G", "members of G get the support role")
        static let viewerGroup: Option<String?> = .text("viewer-group", "G", "members of G get the viewer role")
        static let groupsClaim: Option<String?> = .text("groups-claim", "CLAIM", "the ID token claim listing the groups (default: groups)")
        static let allowedDomain: Option<String?> = .text("allowed-domain", "D", "only verified emails at domain D may sign in")
        static let passwordLogin: Option<String?> = .text("password-login", "on|off", "off: the console refuses passwords (default on)")
    }
}
