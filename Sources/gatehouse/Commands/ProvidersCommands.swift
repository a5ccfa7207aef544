import Foundation
import Gatehouse

/// `gatehouse providers`: what the runtime passes to Better Auth's apple() and google() providers.
enum ProvidersCommands: CommandNoun {
    static let name = "providers"
    static let summary = "the Apple and Google provider configuration, and which ID-token audiences Better Auth accepts under it"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            discussion: """
                Better Auth 1.7 accepts an Apple ID token whose aud is in `audience` if set, else `appBundleIdentifier` if
                set, else `clientId` — either/or. Native iOS tokens carry aud = the bundle id; desktop/web tokens carry
                aud = the Services ID. To accept both, set --audience to both. Google accepts every configured client id.
                """,
            subcommands: [
                CommandSpec(name: "show", summary: "the settings, the accepted audiences, and what would be rejected",
                            options: [.json], run: show),
                CommandSpec(name: "set", summary: "change a provider's settings",
                            subcommands: [
                                CommandSpec(name: "apple", summary: "Team ID, Services ID (clientId), bundle id (appBundleIdentifier), audience",
                                            discussion: "Only the options given change. An empty value clears a setting; --clear-audience clears the list.",
                                            options: [
                                                Options.teamId.spec,
                                                Options.servicesId.spec,
                                                Options.bundleId.spec,
                                                Options.audience.spec,
                                                Options.clearAudience.spec,
                                                .json,
                                            ],
                                            examples: ["gatehouse providers set apple --team-id ABCDE12345 --services-id com.example.web --bundle-id com.example.app --audience com.example.web,com.example.app"],
                                            run: setApple),
                                CommandSpec(name: "google", summary: "OAuth client ids per platform (ios, desktop, web)",
                                            options: [
                                                Options.clientId.spec,
                                                .json,
                                            ],
                                            examples: ["gatehouse providers set google --client-id ios=123-abc.apps.googleusercontent.com --client-id desktop=123-def.apps.googleusercontent.com"],
                                            run: setGoogle),
                            ]),
            ],
            defaultSubcommand: "show",
            examples: ["gatehouse providers show", "gatehouse providers set apple --audience com.example.web --audience com.example.app"]
        )
    }

    static func show(_ invocation: Invocation) throws -> Int32 {
        let report = try ProviderConfiguration(store: invocation.openStore()).report()
        try render(report, invocation)
        return 0
    }

    static func setApple(_ invocation: Invocation) throws -> Int32 {
        var change = AppleProviderChange(teamID: try invocation[Options.teamId], servicesID: try invocation[Options.servicesId],
                                         bundleID: try invocation[Options.bundleId])
        let audience = try invocation[Options.audience].flatMap { $0.split(separator: ",").map { String($0) } }
        if try invocation[Options.clearAudience] {
            guard audience.isEmpty else { throw invocation.usage("--clear-audience and --audience together") }
            change.audience = []
        } else if try !invocation[Options.audience].isEmpty {
            change.audience = audience
            guard !audience.isEmpty else { throw invocation.usage("--audience needs a value (use --clear-audience to clear the list)") }
        }
        let report = try ProviderConfiguration(store: invocation.openStore()).setApple(change, actor: invocation.actor, now: .now())
        try render(report, invocation)
        return 0
    }

    static func setGoogle(_ invocation: Invocation) throws -> Int32 {
        var ids: [GoogleProviderSettings.Platform: String] = [:]
        for text in try invocation[Options.clientId] {
            let (platform, id) = try ProviderConfiguration.googleAssignment(text)
            guard ids[platform] == nil else { throw invocation.usage("--client-id \(platform.rawValue)= is given more than once") }
            ids[platform] = id
        }
        let report = try ProviderConfiguration(store: invocation.openStore()).setGoogle(ids, actor: invocation.actor, now: .now())
        try render(report, invocation)
        return 0
    }

    static func render(_ report: ProviderReport, _ invocation: Invocation) throws {
        if invocation.json { try invocation.output.json(report); return }
        let out = invocation.output
        let apple = report.apple.settings
        out.line("apple")
        out.line("  team id      \(apple.teamID?.rawValue ?? "-")")
        out.line("  services id  \(apple.servicesID ?? "-")   (clientId)")
        out.line("  bundle id    \(apple.bundleID ?? "-")   (appBundleIdentifier)")
        out.line("  audience     \(apple.audience.isEmpty ? "-" : apple.audience.joined(separator: ", "))")
        out.line("  Better Auth accepts aud: \(report.apple.acceptedAudiences.isEmpty ? "(nothing)" : report.apple.acceptedAudiences.joined(separator: ", ")) (from \(report.apple.audienceSource.rawValue))")
        TokenCommands.printFindings(report.apple.findings, out)
        if let config = report.apple.recommendedConfig { out.line("  accepts both native and desktop tokens: \(config)") }
        out.line("google")
        for platform in GoogleProviderSettings.Platform.allCases {
            out.line("  \(platform.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0))  \(report.google.settings.clientIDs[platform] ?? "-")")
        }
        out.line("  Better Auth accepts aud: \(report.google.acceptedAudiences.isEmpty ? "(nothing)" : report.google.acceptedAudiences.joined(separator: ", "))")
        TokenCommands.printFindings(report.google.findings, out)
    }
}

extension ProvidersCommands {
    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let audience: Option<[String]> = .texts("audience", "ID", "an accepted aud (repeatable or comma-separated); replaces the list")
        static let bundleId: Option<String?> = .text("bundle-id", "ID", "the app's bundle id: appBundleIdentifier, aud of native iOS tokens")
        static let clearAudience: Option<Bool> = .flag("clear-audience", "remove the audience list")
        static let clientId: Option<[String]> = .texts("client-id", "PLATFORM=ID", "a platform's client id; empty ID removes it", required: true)
        static let servicesId: Option<String?> = .text("services-id", "ID", "the Services ID: clientId, aud of desktop tokens, sub of the client secret")
        static let teamId: Option<String?> = .text("team-id", "ID", "the Team ID (10 upper-case letters or digits)")
    }
}
