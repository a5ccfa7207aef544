import XCTest

/// The help tree as a user walks it. The root lists each noun from a name and summary without building
/// the noun's commands (they are built only when the command line selects the noun), so these tests
/// check that every listing agrees with the help page it points to, at every level.
final class CLIHelpTests: XCTestCase {
    let cli = CLI()

    static let nouns = ["init", "status", "audit", "demo", "users", "accounts", "policy", "gates", "admins", "approvals", "sso",
                        "apple", "google", "security", "providers", "token", "serve", "health", "merge", "completion"]

    /// The `commands:` section of a help page: (name, summary without the "(default)" marker).
    func listing(_ help: String) -> [(name: String, summary: String)] {
        guard let start = help.range(of: "\ncommands:\n") else { return [] }
        var entries: [(String, String)] = []
        for line in help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("  ") else { break }
            let words = line.dropFirst(2)
            guard let gap = words.range(of: "  ") else { continue }
            var summary = words[gap.upperBound...].trimmingCharacters(in: .whitespaces)
            if summary.hasSuffix(" (default)") { summary = String(summary.dropLast(" (default)".count)) }
            entries.append((String(words[..<gap.lowerBound]), summary))
        }
        return entries
    }

    func testRootHelpListsEveryNounWithTheSummaryItsHelpShows() throws {
        let root = try cli.run(["--help"])
        XCTAssertEqual(root.status, 0)
        let listed = listing(root.stdout)
        XCTAssertEqual(listed.map(\.name), Self.nouns, root.stdout)
        for (name, summary) in listed {
            let page = try cli.run([name, "--help"])
            XCTAssertEqual(page.status, 0, name)
            XCTAssertEqual(page.stderr, "", name)
            XCTAssertEqual(page.stdout.split(separator: "\n").first.map(String.init), summary, "gatehouse \(name) --help")
            XCTAssertTrue(page.stdout.contains("usage: gatehouse \(name)"), page.stdout)
        }
    }

    func testEveryCommandHasAHelpPageMatchingItsListing() throws {
        var pending: [[String]] = Self.nouns.map { [$0] }
        var visited = 0
        while let path = pending.popLast() {
            let page = try cli.run(path + ["--help"])
            XCTAssertEqual(page.status, 0, path.joined(separator: " "))
            XCTAssertTrue(page.stdout.contains("usage: gatehouse \(path.joined(separator: " "))"), page.stdout)
            for (name, summary) in listing(page.stdout) {
                let sub = try cli.run(path + [name, "--help"])
                XCTAssertEqual(sub.stdout.split(separator: "\n").first.map(String.init), summary, (path + [name]).joined(separator: " "))
                pending.append(path + [name])
            }
            visited += 1
        }
        XCTAssertGreaterThan(visited, 40, "the walk reached every command")
    }

    func testHelpTextComputedFromTheDomainIsShown() throws {
        // The policy keys' defaults and the gate requirements are rendered only when the page is shown.
        let policy = try cli.run(["policy", "--help"]).stdout
        XCTAssertTrue(policy.contains(#"accountLinking.trustedProviders (provider list, default ["google","apple"])"#), policy)
        let gates = try cli.run(["gates", "--help"]).stdout
        XCTAssertTrue(gates.contains("Requirements:\n  apple membership"), gates)
    }

    func testMistypedNounStillSuggestsWithoutBuildingIt() throws {
        let result = try cli.run(["polcy", "show"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains(#"did you mean "policy"?"#), result.stderr)
        let nested = try cli.run(["policy", "simulate", "lnk"])
        XCTAssertEqual(nested.status, 2)
        XCTAssertTrue(nested.stderr.contains(#"did you mean "link"?"#), nested.stderr)
        XCTAssertTrue(nested.stderr.contains("usage: gatehouse policy simulate <command>"), nested.stderr)
    }
}
