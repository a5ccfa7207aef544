import Foundation
import XCTest

/// The simulator's decision table (Tests/Fixtures/simulator/cases.md), each row run through the built binary's `--json`:
/// both linking flows and the whole sign-in, with Better Auth 1.7.1's outcome, code, status and deciding source line.
final class SimulatorTableTests: InitialisedStoreTestCase {
    static let users: [String: (id: String, email: String, verified: Int)] = [
        "$RELAY": ("U1relayAAAAAAAAAAAAAAAAAAAAAAAAA", "k3x9@privaterelay.appleid.com", 1),
        "$BEN": ("U2benBBBBBBBBBBBBBBBBBBBBBBBBBBB", "ben@gmail.com", 1),
        "$CLEO": ("U3cleoCCCCCCCCCCCCCCCCCCCCCCCCCC", "cleo@example.com", 0),
        "$DORA": ("U4doraDDDDDDDDDDDDDDDDDDDDDDDDDD", "dora@example.com", 1),
        "$ERIN": ("U5erinEEEEEEEEEEEEEEEEEEEEEEEEEE", "erin@example.com", 0),
        "$JOSE": ("U6joseFFFFFFFFFFFFFFFFFFFFFFFFFF", "jos\u{E9}@example.com", 1),
        "$SIGMA": ("U7sigmaGGGGGGGGGGGGGGGGGGGGGGGGG", "\u{3BF}\u{3B4}\u{3BF}\u{3C2}@example.gr", 1),
        "$KATE": ("U8kateHHHHHHHHHHHHHHHHHHHHHHHHHH", "kate@example.com", 1),
        "$INCI": ("U9inciIIIIIIIIIIIIIIIIIIIIIIIIII", "inci@example.com", 1),
        "$SS": ("U10ssJJJJJJJJJJJJJJJJJJJJJJJJJJJ", "stra\u{DF}e@example.de", 1),
    ]

    struct Case {
        let name: String
        let arguments: [String]
        let outcome: String
        let code: String?
        let status: Int?
        let source: String
    }

    /// The rows of the table, with `$USER` placeholders and `\u{…}` escapes resolved.
    static func cases() throws -> [Case] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/simulator/cases.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line -> Case? in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 8, cells[1] != "case", !cells[1].hasPrefix("-") else { return nil }
            let arguments = cells[2].split(separator: " ").map { word -> String in
                let word = unescape(String(word))
                return users[word]?.id ?? word
            }
            return Case(name: cells[1], arguments: arguments, outcome: cells[3], code: cells[4] == "-" ? nil : cells[4],
                        status: cells[5] == "-" ? nil : Int(cells[5]), source: cells[6])
        }
    }

    static func unescape(_ word: String) -> String {
        var out = "", rest = Substring(word)
        while let start = rest.range(of: "\\u{") {
            out += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}"), let value = UInt32(rest[start.upperBound..<end], radix: 16),
                  let scalar = Unicode.Scalar(value) else { return word }
            out.unicodeScalars.append(scalar)
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        let at = "2026-01-01T00:00:00.000Z"
        var sql = ""
        for (_, user) in Self.users {
            sql += #"INSERT INTO "user" (id, name, email, emailVerified, createdAt, updatedAt) VALUES ('\#(user.id)', 'x', '\#(user.email)', \#(user.verified), '\#(at)', '\#(at)');"# + "\n"
        }
        let accounts: [(String, String, String, String)] = [
            ("apple", "https://appleid.apple.com", "001234.abc.0001", "$RELAY"),
            ("google", "https://accounts.google.com", "104857600000000000001", "$BEN"),
            ("microsoft", "https://login.microsoftonline.com/tenant-a/v2.0", "ms-oid-1", "$BEN"),
            ("github", "local:oauth:github", "4242", "$BEN"),
            ("credential", "local:credential", Self.users["$CLEO"]!.id, "$CLEO"),
            ("acme", "https://id.acme.test", "acme-1", "$DORA"),
            ("google", "https://accounts.google.com", "104857600000000000005", "$ERIN"),
        ]
        for (index, (provider, issuer, accountID, user)) in accounts.enumerated() {
            sql += "INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES ('A\(index)', '\(issuer)', '\(accountID)', '\(provider)', '\(Self.users[user]!.id)', '\(at)', '\(at)');\n"
        }
        sql += "PRAGMA foreign_keys = OFF; INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES ('Aorphan', 'https://accounts.google.com', '109999999999999999999', 'google', 'UgoneZZZZZZZZZZZZZZZZZZZZZZZZZZZ', '\(at)', '\(at)');\n"
        _ = try sqlite3(store, sql)
    }

    func testEveryRowOfTheTable() throws {
        let cases = try Self.cases()
        XCTAssertGreaterThanOrEqual(cases.count, 60)
        XCTAssertEqual(Set(cases.map(\.name)).count, cases.count, "case names are unique")
        for flow in ["link", "signin"] {
            for via in ["id-token", "redirect"] {
                XCTAssertTrue(cases.contains { $0.arguments.first == flow && ($0.arguments.contains("redirect") == (via == "redirect")) }, "\(flow) \(via)")
            }
        }
        for row in cases {
            let result = try cli.run(["policy", "simulate"] + row.arguments + ["--json", "--store", store])
            guard result.status == 0, let decision = try? json(result) as? [String: Any] else {
                XCTFail("\(row.name): exit \(result.status): \(result.all.prefix(500))")
                continue
            }
            let context = "\(row.name): \(decision["rule"] ?? "?") — \(decision["explanation"] ?? "")"
            XCTAssertEqual(decision["outcome"] as? String, row.outcome, context)
            XCTAssertEqual(decision["errorCode"] as? String, row.code, context)
            if let status = row.status { XCTAssertEqual(decision["httpStatus"] as? Int, status, context) }
            XCTAssertTrue((decision["source"] as? String ?? "").contains(row.source), "\(context): source \(decision["source"] ?? "-")")
            let checks = decision["checks"] as? [[String: Any]] ?? []
            XCTAssertEqual(checks.filter { $0["decisive"] as? Bool == true }.count, 1, "\(row.name): one decisive check")
            XCTAssertEqual(decision["via"] as? String, row.arguments.contains("redirect") ? "redirect" : "id-token", row.name)
        }
    }

    func testTheTextAnswerNamesTheSourceAndWhatItDependsOn() throws {
        let relay = Self.users["$RELAY"]!.id
        let text = try run(["policy", "simulate", "link", "--flow", "redirect", "--user", relay, "--provider", "google", "--email", "ana@gmail.com", "--email-verified"]).stdout
        XCTAssertTrue(text.hasPrefix("linkSocial: redirect ?error=email_does_not_match (HTTP 302)\n"), text)
        XCTAssertTrue(text.contains("source: better-auth@1.7.1 packages/better-auth/src/api/routes/callback.ts:297 callbackOAuth"), text)
        XCTAssertTrue(text.contains("flow: redirect, redirects to errorURL?error=email_does_not_match"), text)
        XCTAssertTrue(text.contains("depends on (outside the store and the policy; taken as stated):"), text)
        let builtIn = try run(["policy", "simulate", "signin", "--provider", "google", "--email", "new@gmail.com", "--email-verified", "--provider-option", "disableSignUp"]).stdout
        XCTAssertTrue(builtIn.contains("note: disableSignUp is set, but id-token sign-in reads provider.disableSignUp, which Better Auth never sets on built-in providers"), builtIn)
        let undetermined = try run(["policy", "simulate", "signin", "--provider", "acme", "--email", "a@acme.test"]).stdout
        XCTAssertTrue(undetermined.hasPrefix("signIn.social: undetermined: depends on whether the generic OAuth provider acme's discovery document gives an issuer and a jwks_uri"), undetermined)
        let usage = try cli.run(["policy", "simulate", "signin", "--provider", "google", "--store", store])
        XCTAssertEqual(usage.status, 2)
        XCTAssertTrue(usage.stderr.contains("missing --email (or --no-email when the provider reports none)"), usage.stderr)
        let badOption = try cli.run(["policy", "simulate", "signin", "--provider", "google", "--no-email", "--provider-option", "disableSignup", "--store", store])
        XCTAssertEqual(badOption.status, 2)
        XCTAssertTrue(badOption.stderr.contains("did you mean disableSignUp?"), badOption.stderr)
        let badFlow = try cli.run(["policy", "simulate", "signin", "--provider", "google", "--no-email", "--flow", "popup", "--store", store])
        XCTAssertEqual(badFlow.status, 2, badFlow.all)
    }
}
