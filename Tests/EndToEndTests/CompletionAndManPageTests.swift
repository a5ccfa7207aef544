import Foundation
import XCTest

/// `gatehouse completion bash|zsh|fish` and `gatehouse man` are generated from the spec that parses the command line:
/// every command and every option `--help` shows, at every level, appears in each of them.
final class CompletionAndManPageTests: XCTestCase {
    let cli = CLI()

    /// Every command path the help tree lists, with the options its help page shows (`--name`).
    func helpTree() throws -> [(path: [String], options: [String])] {
        var found: [(path: [String], options: [String])] = []
        var pending: [[String]] = [[]]
        while let path = pending.popLast() {
            let page = try cli.run(path + ["--help"])
            XCTAssertEqual(page.status, 0, path.joined(separator: " "))
            let sections = page.stdout.components(separatedBy: "\n\n")
            var options: [String] = []
            for section in sections {
                let lines = section.split(separator: "\n")
                guard let title = lines.first else { continue }
                if title.hasSuffix("commands:") {
                    for line in lines.dropFirst() where line.hasPrefix("  ") {
                        pending.append(path + [String(line.dropFirst(2).prefix { $0 != " " })])
                    }
                } else if title.hasSuffix("options:") {
                    for line in lines.dropFirst() {
                        if let range = line.range(of: #"--[a-z0-9-]+"#, options: .regularExpression) { options.append(String(line[range])) }
                    }
                }
            }
            found.append((path, options))
        }
        return found
    }

    func testEveryCommandAndOptionIsInTheManPageAndEachCompletion() throws {
        let tree = try helpTree()
        XCTAssertGreaterThan(tree.count, 40, "the walk reached every command")
        XCTAssertTrue(tree.contains { $0.path == ["completion", "zsh"] })
        XCTAssertTrue(tree.first { $0.path.isEmpty }?.options.contains("--version") == true)

        let man = try cli.run(["man"])
        XCTAssertEqual(man.status, 0, man.stderr)
        let bash = try cli.run(["completion", "bash"]).stdout
        let zsh = try cli.run(["completion", "zsh"]).stdout
        let fish = try cli.run(["completion", "fish"]).stdout

        // Each script keys a command by its words joined by spaces; the bash and zsh scripts list its options on the same line.
        func caseLine(_ script: String, _ path: [String]) -> String? {
            script.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("'\(path.joined(separator: " "))')") }.map(String.init)
        }
        for (path, options) in tree {
            let name = path.joined(separator: " ")
            if !path.isEmpty {
                XCTAssertTrue(man.stdout.contains(".SS \"gatehouse \(name.replacingOccurrences(of: "-", with: "\\-"))\""), "man: \(name)")
                XCTAssertTrue(fish.contains("-a '\(path.last!)'"), "fish: \(name)")
            }
            let bashLine = caseLine(bash, path), zshLine = caseLine(zsh, path)
            XCTAssertNotNil(bashLine, "bash: \(name)")
            XCTAssertNotNil(zshLine, "zsh: \(name)")
            for option in options {
                XCTAssertTrue(man.stdout.contains("\\-\\-" + option.dropFirst(2).replacingOccurrences(of: "-", with: "\\-")), "man: \(name) \(option)")
                XCTAssertTrue(bashLine?.contains(" \(option) ") == true || bashLine?.contains(" \(option)'") == true
                              || bashLine?.contains("'\(option) ") == true, "bash: \(name) \(option)")
                XCTAssertTrue(zshLine?.contains("'\(option):") == true, "zsh: \(name) \(option)")
                XCTAssertTrue(fish.contains("-l '\(option.dropFirst(2))'"), "fish: \(name) \(option)")
            }
        }
        // The hidden command stays out of listings and completions.
        XCTAssertFalse(try cli.run(["--help"]).stdout.contains("\n  man "))
        XCTAssertNil(caseLine(bash, ["man"]))
    }

    /// The bash script completes as bash runs it: sourced, then asked for a line's candidates.
    func testBashCompletesCommandsAndOptions() throws {
        let scratch = try Scratch()
        try cli.run(["completion", "bash"]).stdout.write(toFile: scratch.path("gatehouse.bash"), atomically: true, encoding: .utf8)
        let script = """
            source \(scratch.path("gatehouse.bash"))
            complete -p gatehouse
            ask() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _gatehouse; echo "${COMPREPLY[*]}"; }
            ask gatehouse us
            ask gatehouse users ""
            ask gatehouse --store x.sqlite users show --j
            ask gatehouse completion ""
            """
        let result = try Tool.run("/bin/bash", ["--norc", "-c", script])
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertEqual(result.stdout, """
            complete -o filenames -F _gatehouse gatehouse
            users
            search show duplicates delete
            --json
            bash zsh fish

            """)
    }

    func testManPageRendersWithoutWarnings() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") else { throw XCTSkip("groff is not installed") }
        let scratch = try Scratch()
        try cli.run(["man"]).stdout.write(toFile: scratch.path("gatehouse.1"), atomically: true, encoding: .utf8)
        let result = try Tool.run("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", scratch.path("gatehouse.1")])
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertEqual(result.stderr, "")
    }
}
