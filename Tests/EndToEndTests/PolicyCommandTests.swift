import Foundation
import XCTest

/// `gatehouse policy` as an operator meets it: the built binary, its output and exit status.
final class PolicyCommandTests: InitialisedStoreTestCase {
    @discardableResult
    func policy(_ arguments: [String], status expected: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> CLI.Result {
        try run(["policy"] + arguments, status: expected, file: file, line: line)
    }


    func testShowSetHistoryAndExport() throws {
        let fresh = try policy(["show"])
        XCTAssertTrue(fresh.stdout.hasPrefix("policy version 0\n"), fresh.stdout)
        XCTAssertTrue(fresh.stdout.contains("linkSocial.allowDifferentEmails           false               (default)"), fresh.stdout)
        let set = try policy(["set", "linkSocial.allowDifferentEmails", "true", "--reason", "D3 ratified: Connect account", "--actor", "ops-alice"])
        XCTAssertEqual(set.stdout, "linkSocial.allowDifferentEmails: false → true (policy version 1)\n")
        try policy(["set", "accountLinking.trustedProviders", #"["google"]"#, "--reason", "apple not live yet", "--if-version", "1"])
        let shown = try json(try policy(["show", "--json"])) as! [String: Any]
        XCTAssertEqual(shown["version"] as? Int, 2)
        let entries = shown["entries"] as! [[String: Any]]
        let link = entries.first { $0["key"] as? String == "linkSocial.allowDifferentEmails" }!
        XCTAssertEqual(link["value"] as? Bool, true)
        XCTAssertEqual(link["setBy"] as? String, "ops-alice")
        XCTAssertEqual(link["reason"] as? String, "D3 ratified: Connect account")
        let history = try json(try policy(["history", "--json"])) as! [[String: Any]]
        XCTAssertEqual(history.map { $0["version"] as? Int }, [2, 1])
        let keyHistory = try policy(["history", "linkSocial.allowDifferentEmails"])
        XCTAssertTrue(keyHistory.stdout.contains("false → true"), keyHistory.stdout)
        XCTAssertFalse(keyHistory.stdout.contains("trustedProviders"), keyHistory.stdout)
        let export = try json(try policy(["export"])) as! [String: Any]
        XCTAssertEqual(export["version"] as? Int, 2)
        let linking = (export["account"] as! [String: Any])["accountLinking"] as! [String: Any]
        XCTAssertEqual(linking["trustedProviders"] as? [String], ["google"])
        XCTAssertEqual(linking["allowDifferentEmails"] as? Bool, false)
        XCTAssertEqual((export["linkSocial"] as! [String: Any])["allowDifferentEmails"] as? Bool, true)
        let env = try policy(["export", "--format", "env"]).stdout
        XCTAssertTrue(env.hasPrefix("GATEHOUSE_POLICY_VERSION=2\nGATEHOUSE_POLICY_VALID_UNTIL=\nGATEHOUSE_POLICY_JSON='{\"account\":"), env)
        // The env file is readable by a shell as it is.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        let envFile = scratch.path("policy.env")
        try env.write(toFile: envFile, atomically: true, encoding: .utf8)
        shell.arguments = ["-c", ". \(envFile); printf %s \"$GATEHOUSE_POLICY_JSON\""]
        let pipe = Pipe()
        shell.standardOutput = pipe
        try shell.run()
        let sourced = pipe.fileHandleForReading.readDataToEndOfFile()
        shell.waitUntilExit()
        let parsed = try JSONSerialization.jsonObject(with: sourced) as? [String: Any]
        XCTAssertEqual(parsed?["version"] as? Int, 2)
        try policy(["export", "--format", "xml"], status: 2)
        let audit = try cli.run(["audit", "list", "--store", store, "--action", "policy.*"])
        XCTAssertTrue(audit.stdout.contains("ops-alice  policy.set  linkSocial.allowDifferentEmails"), audit.stdout)
    }

    func testHostileInputIsRefusedAndWritesNothing() throws {
        let unknown = try policy(["set", "linkSocial.allowDiferentEmails", "true", "--reason", "x"], status: 1)
        XCTAssertTrue(unknown.stderr.contains(#"unknown policy key "linkSocial.allowDiferentEmails"; did you mean "linkSocial.allowDifferentEmails"?"#), unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("valid keys: accountLinking.enabled (boolean), accountLinking.trustedProviders (provider list)"), unknown.stderr)
        let badBool = try policy(["set", "accountLinking.enabled", "yes", "--reason", "x"], status: 1)
        XCTAssertTrue(badBool.stderr.contains(#""yes" is not a valid value for accountLinking.enabled: it takes true or false"#), badBool.stderr)
        let huge = try policy(["set", "accountLinking.enabled", "false", "--reason", String(repeating: "r", count: 2001)], status: 1)
        XCTAssertTrue(huge.stderr.contains("the reason is 2001 characters; at most 2000 are kept"), huge.stderr)
        XCTAssertLessThan(huge.stderr.count, 1000, "the reason is not echoed back")
        let zero = try policy(["set", "linkSocial.allowDifferentEmails", "true", "--reason", "x", "--for", "0s"], status: 1)
        XCTAssertTrue(zero.stderr.contains("--for 0s is outside 1m to 30d"), zero.stderr)
        let long = try policy(["set", "linkSocial.allowDifferentEmails", "true", "--reason", "x", "--for", "400d"], status: 1)
        XCTAssertTrue(long.stderr.contains("is outside 1m to 30d"), long.stderr)
        let garbled = try policy(["set", "linkSocial.allowDifferentEmails", "true", "--reason", "x", "--for", "soon"], status: 2)
        XCTAssertTrue(garbled.stderr.contains("--for: \"soon\" is not a duration"), garbled.stderr)
        let takeover = try policy(["set", "autoLink.allowDifferentEmails", "true", "--reason", "x"], status: 1)
        XCTAssertTrue(takeover.stderr.contains("--accept-takeover-risk"), takeover.stderr)
        // Any text is a provider id to Better Auth (matched exactly); a control character is not.
        let providers = try policy(["set", "accountLinking.trustedProviders", "google,ok\u{1B}[2Jta", "--reason", "x"], status: 1)
        XCTAssertTrue(providers.stderr.contains("is not a provider id"), providers.stderr)
        let noReason = try policy(["set", "accountLinking.enabled", "false"], status: 2)
        XCTAssertTrue(noReason.stderr.contains("missing --reason"), noReason.stderr)
        try policy(["set", "accountLinking.enabled", "false", "--reason", "x", "--if-version", "one"], status: 2)
        try policy(["set", "accountLinking.enabled", "--reason", "x"], status: 2)
        try policy(["history", "nope.key"], status: 1)
        try policy(["simulate", "signin", "--provider", "google", "--email", "a@b.c", "--with", "accountLinking.enabled=maybe"], status: 1)
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_policy_history; SELECT count(*) FROM gatehouse_policy; SELECT version FROM gatehouse_policy_version;"), "0\n0\n0")
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_audit WHERE action LIKE 'policy.%'"), "0")
        // Accepted with the explicit flag, and flagged critical.
        try policy(["set", "autoLink.allowDifferentEmails", "true", "--reason", "incident drill", "--accept-takeover-risk"])
        XCTAssertTrue(try policy(["show"]).stdout.contains("CRITICAL: autoLink.allowDifferentEmails is true"))
    }

    func testIfVersionConflictNamesTheCurrentVersion() throws {
        try policy(["set", "accountLinking.allowUnlinkingAll", "true", "--reason", "a", "--if-version", "0"])
        let stale = try policy(["set", "accountLinking.allowUnlinkingAll", "false", "--reason", "b", "--if-version", "0"], status: 1)
        XCTAssertTrue(stale.stderr.contains("the policy is at version 1, not 0 (--if-version 0)"), stale.stderr)
        XCTAssertTrue(stale.stderr.contains("retry with --if-version 1"), stale.stderr)
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_policy_history"), "1")
    }

    func testATimedValueRevertsWithNothingRunning() throws {
        let set = try policy(["set", "linkSocial.allowDifferentEmails", "true", "--for", "2h", "--reason", "SUP-1234 window"])
        XCTAssertTrue(set.stdout.contains("reverts to false at "), set.stdout)
        XCTAssertTrue(try policy(["show"]).stdout.contains("→ false"))
        // Time passes: move the expiry into the past, as another tool would see the store an hour later.
        _ = try sqlite3(store, "UPDATE gatehouse_policy SET reverts_at = '2020-01-01T00:00:00.000Z'")
        let shown = try policy(["show"]).stdout
        XCTAssertTrue(shown.hasPrefix("policy version 2\n"), shown)
        XCTAssertTrue(shown.contains("linkSocial.allowDifferentEmails           false               gatehouse (timer)  2020-01-01T00:00:00.000Z"), shown)
        XCTAssertTrue(try policy(["history"]).stdout.contains("(revert, due; recorded by the next change)"))
        XCTAssertEqual(try sqlite3(store, "SELECT count(*) FROM gatehouse_policy_history"), "1", "reads write nothing")
        let next = try policy(["set", "accountLinking.allowUnlinkingAll", "true", "--reason", "next change", "--if-version", "2"])
        XCTAssertTrue(next.stdout.contains("recorded revert: linkSocial.allowDifferentEmails true → false (expired 2020-01-01T00:00:00.000Z, version 2)"), next.stdout)
        XCTAssertEqual(try sqlite3(store, "SELECT version || ' ' || kind || ' ' || actor FROM gatehouse_policy_history ORDER BY version"),
                       "1 set \(NSUserName())\n2 revert gatehouse (timer)\n3 set \(NSUserName())")
        let audit = try cli.run(["audit", "list", "--store", store, "--action", "policy.revert"])
        XCTAssertTrue(audit.stdout.contains("gatehouse (timer)"), audit.stdout)
        XCTAssertEqual(try cli.run(["audit", "verify", "--store", store]).status, 0)
    }

    func testSimulateLinkAndSignIn() throws {
        let relay = "U1relayAAAAAAAAAAAAAAAAAAAAAAAAA"
        _ = try sqlite3(store, """
            INSERT INTO "user" VALUES ('\(relay)', 'Ana', 'k3x9@privaterelay.appleid.com', 1, NULL, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
            INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt)
              VALUES ('A1', 'https://appleid.apple.com', '001234.abc.0001', 'apple', '\(relay)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
            """)
        let refused = try policy(["simulate", "link", "--user", relay, "--provider", "google", "--email", "ana@gmail.com", "--email-verified"])
        XCTAssertTrue(refused.stdout.hasPrefix("linkSocial: error LINKING_DIFFERENT_EMAILS_NOT_ALLOWED \"Account not linked - different emails not allowed\" (HTTP 401)\n"), refused.stdout)
        XCTAssertTrue(refused.stdout.contains("rule: linkSocial.differentEmails"), refused.stdout)
        XCTAssertTrue(refused.stdout.contains("Hide My Email: flipping linkSocial.allowDifferentEmails to true WOULD change this (→ linked (HTTP 200))"), refused.stdout)
        let hypothetical = try policy(["simulate", "link", "--user", relay, "--provider", "google", "--email", "ana@gmail.com", "--email-verified",
                                       "--with", "linkSocial.allowDifferentEmails=true", "--json"])
        let decision = try json(hypothetical) as! [String: Any]
        XCTAssertEqual(decision["outcome"] as? String, "linked")
        XCTAssertEqual(decision["httpStatus"] as? Int, 200)
        XCTAssertEqual(decision["hypothetical"] as? [String], ["linkSocial.allowDifferentEmails=true"])
        let signIn = try policy(["simulate", "signin", "--provider", "apple", "--email", "other@privaterelay.appleid.com", "--account-id", "001234.abc.0001"])
        XCTAssertTrue(signIn.stdout.hasPrefix("signIn.social: signed in (HTTP 200)\nrule: signIn.accountOwner"), signIn.stdout)
        let split = try policy(["simulate", "signin", "--provider", "google", "--email", "ana@gmail.com", "--email-verified"])
        XCTAssertTrue(split.stdout.hasPrefix("signIn.social: new user (HTTP 200)"), split.stdout)
        XCTAssertTrue(split.stdout.contains("would not change this"), split.stdout)
        let missing = try policy(["simulate", "link", "--user", "nobody", "--provider", "google", "--email", "a@b.c"], status: 1)
        XCTAssertTrue(missing.stderr.contains("no user nobody"), missing.stderr)
        try policy(["simulate", "link", "--provider", "google", "--email", "a@b.c"], status: 2)
    }

    func testHelpListsKeysAndCommands() throws {
        let help = try cli.run(["policy", "--help"])
        XCTAssertEqual(help.status, 0)
        for word in ["show", "set", "history", "export", "simulate", "linkSocial.allowDifferentEmails (boolean, default false)"] {
            XCTAssertTrue(help.stdout.contains(word), help.stdout)
        }
        XCTAssertTrue(try cli.run(["policy", "set", "--help"]).stdout.contains("--accept-takeover-risk"))
    }
}
