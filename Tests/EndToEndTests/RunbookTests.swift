import Foundation
import XCTest

/// The runbooks in ops/runbooks are executable documentation: every ```sh block of a runbook runs, in order, in one
/// `bash -euo pipefail` script against a fresh demo store, and every `gatehouse …` line in any shell block (```sh and
/// the not-run ```sh-manual) must name a real command with real options. A runbook that drifts from the CLI fails here.
final class RunbookTests: XCTestCase {
    static let runbookFolder = CLI.packageRoot.appendingPathComponent("ops/runbooks")

    /// Every runbook but the index, by file name.
    static func runbooks() throws -> [(name: String, text: String)] {
        let names = try FileManager.default.contentsOfDirectory(atPath: runbookFolder.path)
            .filter { $0.hasSuffix(".md") && $0 != "README.md" }.sorted()
        return try names.map { ($0, try String(contentsOf: runbookFolder.appendingPathComponent($0), encoding: .utf8)) }
    }

    // MARK: running the runbooks

    func testEveryRunbookRunsAgainstADemoStore() throws {
        let runbooks = try Self.runbooks()
        XCTAssertGreaterThanOrEqual(runbooks.count, 5, "ops/runbooks should hold the five runbooks")
        for runbook in runbooks {
            let blocks = RunbookText.blocks(runbook.text).filter { $0.runs }
            XCTAssertFalse(blocks.isEmpty, "\(runbook.name) has no ```sh block to run")
            let outcome = try RunbookRunner.run(runbook.text, name: runbook.name, users: 2000)
            XCTAssertTrue(outcome.passed, outcome.report)
            XCTAssertEqual(outcome.leakedSecrets, [], "\(runbook.name) printed a secret:\n\(outcome.report)")
            XCTAssertEqual(outcome.exposedKeyFiles, [], "\(runbook.name) left private key material in a file others can read")
        }
    }

    /// The runner itself: a failing block is named, with its line in the runbook and its output.
    func testRunnerNamesTheFailingBlock() throws {
        let markdown = """
            # A runbook that breaks in its second block

            ```sh
            COUNT=1
            gatehouse status
            ```

            ```text
            this is not run
            ```

            ```sh
            echo "count is $COUNT"
            gatehouse apple key activate NOSUCHKEY1
            echo never printed
            ```
            """
        let outcome = try RunbookRunner.run(markdown, name: "broken.md", users: 10)
        XCTAssertFalse(outcome.passed, outcome.report)
        XCTAssertEqual(outcome.failedBlock?.index, 2, outcome.report)
        XCTAssertEqual(outcome.failedBlock?.line, 12, outcome.report)
        XCTAssertTrue(outcome.report.contains("count is 1"), "variables carry across blocks:\n\(outcome.report)")
        XCTAssertTrue(outcome.report.contains("NOSUCHKEY1"), outcome.report)
        let printed = outcome.report.components(separatedBy: "--- its output:").last ?? ""
        XCTAssertFalse(printed.contains("never printed"), "the script stops at the failing command:\n\(outcome.report)")
    }

    func testRunnerFlagsPrintedSecrets() throws {
        let markdown = """
            ```sh
            gatehouse providers set apple --team-id TEAMID1234 --services-id com.example.app.web
            openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out AuthKey_LEAKYKEY01.p8
            gatehouse apple key import AuthKey_LEAKYKEY01.p8
            gatehouse apple key activate LEAKYKEY01
            gatehouse apple secret mint --ttl 5m
            chmod 644 AuthKey_LEAKYKEY01.p8
            ```
            """
        let outcome = try RunbookRunner.run(markdown, name: "leaky.md", users: 10)
        XCTAssertTrue(outcome.passed, outcome.report)
        XCTAssertFalse(outcome.leakedSecrets.isEmpty, "a minted client secret on stdout must be caught")
        XCTAssertEqual(outcome.exposedKeyFiles, ["AuthKey_LEAKYKEY01.p8"])
    }

    // MARK: every gatehouse line is a real command

    func testEveryGatehouseLineNamesARealCommandAndRealOptions() throws {
        for runbook in try Self.runbooks() {
            let invocations = RunbookText.blocks(runbook.text).filter(\.isShell).flatMap { block in
                ShellWords.commands(in: block.body).compactMap(ShellWords.gatehouseArguments).map { (block, $0) }
            }
            XCTAssertFalse(invocations.isEmpty, "\(runbook.name) runs no gatehouse command")
            for (block, arguments) in invocations {
                let problem = try CommandCheck.problem(arguments)
                XCTAssertNil(problem, "\(runbook.name), block at line \(block.line): gatehouse \(arguments.joined(separator: " ")): \(problem ?? "")")
            }
        }
    }

    /// The check must catch a runbook that names a command or an option the CLI does not have.
    func testCommandCheckCatchesADriftedSnippet() throws {
        let markdown = """
            ```sh
            gatehouse apple key list --json
            KEY=$(gatehouse apple keys list --json | python3 -c 'import sys; print(1)')
            ```

            ```sh-manual
            gatehouse policy set linkSocial.allowDifferentEmails true --for 2h --reason "SUP-1" \\
              --until tomorrow
            ! gatehouse merge apply mp_x --ticket SUP-1 --yes 2>&1 | tail -1
            gatehouse users serach ana@
            echo "$(gatehouse health --jsn || true)"
            ```
            """
        let blocks = RunbookText.blocks(markdown)
        XCTAssertEqual(blocks.map(\.info), ["sh", "sh-manual"])
        XCTAssertEqual(blocks.map(\.runs), [true, false])
        let invocations = blocks.flatMap { ShellWords.commands(in: $0.body).compactMap(ShellWords.gatehouseArguments) }
        XCTAssertEqual(invocations, [
            ["apple", "key", "list", "--json"],
            ["apple", "keys", "list", "--json"],
            ["policy", "set", "linkSocial.allowDifferentEmails", "true", "--for", "2h", "--reason", "SUP-1", "--until", "tomorrow"],
            ["merge", "apply", "mp_x", "--ticket", "SUP-1", "--yes"],
            ["users", "serach", "ana@"],
            ["health", "--jsn"],
        ])
        let problems = try invocations.map(CommandCheck.problem)
        XCTAssertNil(problems[0])
        XCTAssertNil(problems[3])
        for index in [1, 2, 4, 5] {
            XCTAssertNotNil(problems[index], "gatehouse \(invocations[index].joined(separator: " ")) should be refused")
        }
        XCTAssertTrue(problems[2]?.contains("--until") == true, problems[2] ?? "")
    }

    // MARK: the index and the alert rules

    func testTheIndexLinksEveryRunbook() throws {
        let index = try String(contentsOf: Self.runbookFolder.appendingPathComponent("README.md"), encoding: .utf8)
        for runbook in try Self.runbooks() {
            XCTAssertTrue(index.contains("(\(runbook.name))"), "README.md does not link \(runbook.name)")
        }
    }

    func testEveryAlertAndCheckFamilyHasASection() throws {
        let rules = try String(contentsOf: CLI.packageRoot.appendingPathComponent("ops/prometheus/gatehouse-alerts.yml"), encoding: .utf8)
        let alerts = rules.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("- alert:") else { return nil }
            return trimmed.dropFirst("- alert:".count).trimmingCharacters(in: .whitespaces)
        }
        XCTAssertFalse(alerts.isEmpty)
        let runbook = try String(contentsOf: Self.runbookFolder.appendingPathComponent("health-alerts.md"), encoding: .utf8)
        let headings = runbook.split(separator: "\n").filter { $0.hasPrefix("#") }.joined(separator: "\n")
        for alert in alerts {
            XCTAssertTrue(headings.contains(alert), "health-alerts.md has no section for the alert \(alert)")
        }
        for family in ["store.integrity", "store.audit_chain", "accounts.", "policy.", "apple.", "gates.", "health.last_run"] {
            XCTAssertTrue(headings.contains(family), "health-alerts.md has no section for \(family)")
        }
    }
}

// MARK: - Markdown

/// A fenced code block of a runbook.
struct RunbookBlock {
    /// The info string's first word: `sh`, `sh-manual`, `text`, …
    let info: String
    /// The 1-based line of the opening fence.
    let line: Int
    let body: String

    /// Only ```sh blocks run.
    var runs: Bool { info == "sh" }
    /// Blocks whose gatehouse lines are checked against the CLI.
    var isShell: Bool { ["sh", "sh-manual", "bash", "shell"].contains(info) }
}

enum RunbookText {
    /// The fenced blocks (``` or ~~~, up to three spaces of indent) in order.
    static func blocks(_ markdown: String) -> [RunbookBlock] {
        var blocks: [RunbookBlock] = []
        var open: (fence: String, info: String, line: Int, body: [String])?
        for (offset, rawLine) in markdown.components(separatedBy: "\n").enumerated() {
            let line = rawLine.hasSuffix("\r") ? String(rawLine.dropLast()) : rawLine
            let indent = line.prefix { $0 == " " }.count
            let trimmed = line.drop { $0 == " " }
            if var current = open {
                if indent <= 3, trimmed.hasPrefix(current.fence),
                   trimmed.trimmingCharacters(in: .whitespaces).allSatisfy({ $0 == current.fence.first }) {
                    blocks.append(RunbookBlock(info: current.info, line: current.line, body: current.body.joined(separator: "\n")))
                    open = nil
                } else {
                    current.body.append(line)
                    open = current
                }
                continue
            }
            guard indent <= 3, let mark = trimmed.first, mark == "`" || mark == "~" else { continue }
            let fence = String(trimmed.prefix { $0 == mark })
            guard fence.count >= 3 else { continue }
            let info = trimmed.dropFirst(fence.count).trimmingCharacters(in: .whitespaces)
                .split(separator: " ").first.map(String.init) ?? ""
            open = (fence, info, offset + 1, [])
        }
        return blocks
    }
}

// MARK: - Shell words

/// Just enough of the shell's grammar to find each simple command and its words: quotes, backslashes, line
/// continuations, comments, pipes and lists, redirections, and `$( … )` (whose commands are found too; the
/// substitution itself becomes the placeholder word X).
enum ShellWords {
    static func commands(in script: String) -> [[String]] {
        var lexer = Lexer(chars: Array(script))
        lexer.list(untilParen: false)
        return lexer.commands
    }

    /// The arguments after `gatehouse` when the command runs gatehouse (after `!`, assignments or `command`).
    static func gatehouseArguments(_ words: [String]) -> [String]? {
        var rest = words[...]
        while let first = rest.first, first == "!" || first == "command" || first == "time" || first == "exec"
                || ["if", "then", "else", "elif", "while", "until", "do", "{"].contains(first) || isAssignment(first) {
            rest = rest.dropFirst()
        }
        guard let program = rest.first, program == "gatehouse" || program.hasSuffix("/gatehouse") else { return nil }
        return Array(rest.dropFirst())
    }

    static func isAssignment(_ word: String) -> Bool {
        guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { return false }
        return word[..<equals].allSatisfy { $0 == "_" || $0.isLetter || $0.isNumber }
    }

    struct Lexer {
        let chars: [Character]
        var index = 0
        var commands: [[String]] = []

        var next: Character? { index + 1 < chars.count ? chars[index + 1] : nil }

        mutating func list(untilParen: Bool) {
            var words: [String] = []
            func flush() { if !words.isEmpty { commands.append(words); words = [] } }
            while index < chars.count {
                let char = chars[index]
                switch char {
                case " ", "\t":
                    index += 1
                case "\\" where next == "\n":
                    index += 2
                case "\n", ";", "|", "&", "(":
                    index += 1
                    flush()
                case ")":
                    index += 1
                    flush()
                    if untilParen { return }
                case "#":
                    while index < chars.count && chars[index] != "\n" { index += 1 }
                case "<", ">":
                    // A redirection: drop a file-descriptor number written against it, its operator and its target.
                    if index > 0, chars[index - 1].isNumber, let last = words.last, last.allSatisfy(\.isNumber) { words.removeLast() }
                    while index < chars.count && "<>&".contains(chars[index]) { index += 1 }
                    while index < chars.count && (chars[index] == " " || chars[index] == "\t") { index += 1 }
                    _ = word()
                default:
                    words.append(word())
                }
            }
            flush()
        }

        mutating func word() -> String {
            var word = ""
            while index < chars.count {
                let char = chars[index]
                if " \t\n;|&()<>".contains(char) { break }
                switch char {
                case "\\":
                    if next == "\n" { index += 2 } else if let escaped = next { word.append(escaped); index += 2 } else { index += 1 }
                case "'":
                    index += 1
                    while index < chars.count && chars[index] != "'" { word.append(chars[index]); index += 1 }
                    index += 1
                case "\"":
                    index += 1
                    while index < chars.count && chars[index] != "\"" {
                        if chars[index] == "\\", let escaped = next { word.append(escaped); index += 2; continue }
                        if chars[index] == "$", next == "(" { index += 2; list(untilParen: true); word += "X"; continue }
                        word.append(chars[index])
                        index += 1
                    }
                    index += 1
                case "$" where next == "(":
                    index += 2
                    list(untilParen: true)
                    word += "X"
                default:
                    word.append(char)
                    index += 1
                }
            }
            return word
        }
    }
}

// MARK: - Checking a command line against the CLI

enum CommandCheck {
    /// nil when `gatehouse ARGS --help` is accepted: every command word exists and every option belongs to it.
    /// The parser checks words and option names before it honours --help, so this reads no store.
    static func problem(_ arguments: [String]) throws -> String? {
        let result = try CLI().run(arguments + ["--help"])
        if result.status == 0 && result.stdout.contains("usage: gatehouse") { return nil }
        return "exit \(result.status): " + result.all.split(separator: "\n").prefix(3).joined(separator: " / ")
    }
}

// MARK: - Running a runbook

enum RunbookRunner {
    struct Outcome {
        let passed: Bool
        let failedBlock: (index: Int, line: Int)?
        let report: String
        let leakedSecrets: [String]
        let exposedKeyFiles: [String]
    }

    static let marker = "::runbook-block::"

    /// Seeds a demo store, then runs the ```sh blocks of `markdown` in one `bash -euo pipefail` script in a
    /// fresh working folder, with the built gatehouse first on PATH and GATEHOUSE_STORE exported.
    static func run(_ markdown: String, name: String, users: Int, timeout: Int = 300) throws -> Outcome {
        let scratch = try Scratch()
        let work = scratch.url.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let store = scratch.path("store/demo.sqlite")
        try FileManager.default.createDirectory(atPath: scratch.path("store"), withIntermediateDirectories: true)
        let seeded = try CLI().run(["demo", "seed", "--store", store, "--users", String(users), "--seed", "7", "-q"])
        guard seeded.status == 0 else {
            return Outcome(passed: false, failedBlock: nil, report: "\(name): demo seed failed: \(seeded.all)", leakedSecrets: [], exposedKeyFiles: [])
        }

        let blocks = RunbookText.blocks(markdown).filter(\.runs)
        var script = "# \(name), generated by RunbookTests\n"
        for (number, block) in blocks.enumerated() {
            script += "printf '%s %d %d\\n' '\(marker)' \(number + 1) \(block.line)\n"
            script += block.body + "\n"
        }
        script += "printf '%s done\\n' '\(marker)'\n"
        let scriptURL = scratch.url.appendingPathComponent("runbook.sh")
        try Data(script.utf8).write(to: scriptURL)

        let logURL = scratch.url.appendingPathComponent("runbook.log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["--kill-after=10", String(timeout), "/bin/bash", "-euo", "pipefail", scriptURL.path]
        process.currentDirectoryURL = work
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "GATEHOUSE_MASTER_KEY")
        environment.removeValue(forKey: "GATEHOUSE_CONFIG")
        let binDirectory = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
        environment["PATH"] = binDirectory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["GATEHOUSE_STORE"] = store
        environment["RUNBOOK_REHEARSAL"] = "1"
        // A runbook that talks to Apple's migration endpoints gets the local stand-in, which verifies client secrets
        // with the public halves of the .p8 files the runbook makes in its working folder.
        var apple: AppleServerFixture?
        if markdown.contains("apple transfer") {
            apple = try AppleServerFixture(arguments: ["--keys-dir", work.path])
            environment["GATEHOUSE_APPLE_BASE_URL"] = apple?.baseURL
        }
        var google: GoogleServerFixture?
        if markdown.contains("google risc") {
            google = try GoogleServerFixture()
            environment["GATEHOUSE_GOOGLE_ACCOUNTS_BASE_URL"] = google?.baseURL
            environment["GATEHOUSE_GOOGLE_RISC_BASE_URL"] = google?.baseURL
        }
        defer { _ = apple; _ = google }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        process.waitUntilExit()
        try log.close()
        let output = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""

        // Which block was running: the last marker printed.
        var current: (index: Int, line: Int)?
        var sinceMarker: [Substring] = []
        var finished = false
        for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(marker) {
                let fields = line.split(separator: " ")
                if fields.count == 2 && fields[1] == "done" { finished = true; continue }
                if fields.count == 3, let index = Int(fields[1]), let at = Int(fields[2]) { current = (index, at); sinceMarker = [] }
                continue
            }
            sinceMarker.append(line)
        }
        let status = process.terminationStatus
        let passed = status == 0 && finished
        var report = "\(name): "
        if passed {
            report += "all \(blocks.count) sh blocks ran"
        } else {
            let reason = status == 124 || status == 137 ? "timed out after \(timeout) s" : "exit status \(status)"
            if let current {
                report += "block \(current.index) of \(blocks.count) (the ```sh block at line \(current.line)) failed: \(reason)\n"
                report += "--- the block:\n\(blocks[current.index - 1].body)\n--- its output:\n" + sinceMarker.joined(separator: "\n")
            } else {
                report += "failed before the first block: \(reason)\n\(output)"
            }
        }
        return Outcome(passed: passed, failedBlock: passed ? nil : current, report: report,
                       leakedSecrets: secrets(in: output), exposedKeyFiles: try exposedKeyFiles(in: work))
    }

    /// Private key material or a signed JWT (a client secret) in what the runbook printed.
    static func secrets(in output: String) -> [String] {
        var found: [String] = []
        if output.contains("PRIVATE KEY") { found.append("a PEM private key") }
        if output.contains("MIGHAgEAMBMGByqGSM49") { found.append("a PKCS#8 P-256 key body") }
        if let match = output.range(of: #"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}"#, options: .regularExpression) {
            found.append("a signed JWT: \(output[match].prefix(24))…")
        }
        return found
    }

    /// Files left in the working folder that hold a private key and are readable by group or others.
    static func exposedKeyFiles(in folder: URL) throws -> [String] {
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []
        return try names.sorted().filter { name in
            let path = folder.appendingPathComponent(name).path
            guard let data = FileManager.default.contents(atPath: path),
                  String(decoding: data, as: UTF8.self).contains("PRIVATE KEY") else { return false }
            let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
            return mode & 0o077 != 0
        }
    }
}
