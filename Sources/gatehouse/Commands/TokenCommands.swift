import Foundation
import Gatehouse

/// `gatehouse token`: why was this user's Apple or Google sign-in rejected?
enum TokenCommands: CommandNoun {
    static let name = "token"
    static let summary = "diagnose Apple and Google ID tokens the way Better Auth 1.7 checks them"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name,
            summary: summary,
            subcommands: [
                CommandSpec(name: "inspect", summary: "decode an ID token and name every check Better Auth would fail",
                            discussion: """
                                Checks, in Better Auth's order: the signature against a JWKS file you saved (by kid, RS256), iss, aud
                                against the audiences the provider configuration makes Better Auth accept (`gatehouse providers show`),
                                exp, iat no older than 1 h, the nonce (Apple: the raw nonce or its lowercase hex SHA-256; Google:
                                exact), then email and email_verified (Apple sends "true" or true) and private-relay addresses.
                                Each failure is named as Better Auth's verifier reports it, with the change that fixes it. The client
                                always sees 401 INVALID_TOKEN. The token is never stored. Exit status 1 when Better Auth would reject it.
                                """,
                            arguments: [Arguments.token.spec],
                            options: [
                                Options.provider.spec,
                                Options.nonce.spec,
                                Options.jwks.spec,
                                .json,
                            ],
                            examples: [
                                "pbpaste | gatehouse token inspect - --nonce \"$RAW_NONCE\" --jwks apple-keys.json",
                                "gatehouse token inspect eyJhbGciOi... --provider google --json",
                            ],
                            run: inspect),
            ],
            examples: ["gatehouse token inspect - --jwks apple-keys.json < token.txt"]
        )
    }

    static func inspect(_ invocation: Invocation) throws -> Int32 {
        let token = try readToken(invocation, Arguments.token)
        let provider = try invocation[Options.provider]
        let jwks = try invocation[Options.jwks].map(IDTokenDiagnosis.loadJWKS(file:))
        let report = try IDTokenDiagnosis(store: invocation.openStore())
            .diagnose(token, provider: provider, nonce: try invocation[Options.nonce], jwks: jwks, now: .now())
        if invocation.json {
            try invocation.output.json(report)
        } else {
            let out = invocation.output
            out.line("\(report.provider.rawValue) ID token: \(report.verdict)")
            if let claims = report.claims {
                out.line("  iss \(claims.issuer ?? "-")  aud \(claims.audience?.joined(separator: ",") ?? "-")  sub \(claims.subject ?? "-")  kid \(claims.keyID ?? "-")  alg \(claims.algorithm)")
                out.line("  email \(claims.email ?? "-")  email_verified \(claims.emailVerifiedAsSent ?? "absent") → \(claims.emailVerified)\(claims.privateRelay ? "  (private relay)" : "")")
            }
            out.line("  Better Auth accepts aud: \(report.acceptedAudiences.isEmpty ? "(nothing configured)" : report.acceptedAudiences.joined(separator: ", "))")
            printFindings(report.findings, out)
        }
        return report.accepted ? 0 : 1
    }

    /// The token `argument` holds, or stdin for `-`. Stdin is read up to 2 MiB; the service refuses anything that long.
    static func readToken(_ invocation: Invocation, _ argument: Argument<String>) throws -> String {
        let given = try invocation[argument]
        guard given == "-" else { return given }
        let data = (try? FileHandle.standardInput.read(upToCount: 2 << 20)) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Findings as text: one line each, with what the other side reports and the fix indented below.
    static func printFindings(_ findings: [AppleFinding], _ out: Output) {
        for finding in findings {
            let mark: String
            switch finding.severity {
            case .ok: mark = "ok     "
            case .note: mark = "note   "
            case .warning: mark = "WARNING"
            case .error: mark = "ERROR  "
            }
            out.line("  \(mark) \(finding.message)")
            if finding.severity >= .warning, let reported = finding.reported { out.line("          reported as: \(reported)") }
            if let fix = finding.fix { out.line("          fix: \(fix)") }
        }
    }
}

extension TokenCommands {
    /// The positional arguments these commands read, each declared once.
    enum Arguments {
        static let token: Argument<String> = .text("JWT", "the ID token, or - to read it from stdin")
    }

    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let jwks: Option<String?> = .text("jwks", "FILE", "the provider's keys, saved from https://appleid.apple.com/auth/keys or https://www.googleapis.com/oauth2/v3/certs")
        static let nonce: Option<String?> = .text("nonce", "RAW", "the raw nonce the client sent as idToken.nonce")
        static let provider: Option<IDTokenProvider?> = .choice("provider", "P", "apple or google (default: from the token's iss)", as: IDTokenProvider.self)
    }
}
