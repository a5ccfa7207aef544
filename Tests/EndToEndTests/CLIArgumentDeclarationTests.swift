import Foundation
import XCTest

/// Positional arguments are declared like options (`static let x: Argument<…>`, listed as `x.spec`, read as
/// `invocation[Arguments.x]`): the parser refuses a missing or malformed one before the command runs, in one wording
/// that names it and says what to pass, and `--help`, the man page and the completions come from the declaration.
final class CLIArgumentDeclarationTests: XCTestCase {
    let cli = CLI()
    /// A store that does not exist: a refusal that names it came from a command that got as far as opening it.
    static let noStore = ["--store", "/nonexistent/gatehouse-arguments.sqlite"]

    func testAMissingPositionalIsRefusedNamingItAndWhatToPass() throws {
        let undo = try cli.run(["merge", "undo", "--reason", "wrong person"] + Self.noStore)
        XCTAssertEqual(undo.status, 2, undo.all)
        XCTAssertEqual(undo.stderr, """
            gatehouse: missing MERGE_ID: pass the merge's number (see `merge list`)
            usage: gatehouse merge undo --reason TEXT [options] MERGE_ID
            Run `gatehouse merge undo --help` for more.

            """)
        // Every kind of argument, the same wording; the store is never opened.
        for (words, expected) in [(["users", "show"], "missing USER: pass a user id, an email, or a sub better_auth|<id>"),
                                  (["admins", "add"], "missing USER: pass the new admin's username"),
                                  (["apple", "key", "activate"], "missing ID: pass the Key ID"),
                                  (["token", "inspect"], "missing JWT: pass the ID token, or - to read it from stdin"),
                                  (["policy", "set", "linkSocial.allowDifferentEmails", "--reason", "r"], "missing VALUE: pass true|false, or a provider list")] {
            let result = try cli.run(words + Self.noStore)
            XCTAssertEqual(result.status, 2, "\(words): \(result.all)")
            XCTAssertTrue(result.stderr.hasPrefix("gatehouse: \(expected)"), "\(words): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("nonexistent"), "\(words) opened the store: \(result.stderr)")
        }
    }

    func testAMalformedPositionalIsRefusedBeforeTheCommandRuns() throws {
        let show = try cli.run(["merge", "show", "abc"] + Self.noStore)
        XCTAssertEqual(show.status, 2, show.all)
        XCTAssertEqual(show.stderr, """
            gatehouse: ID must be a whole number ≥ 1, got "abc"; pass the merge's number
            usage: gatehouse merge show [options] ID
            Run `gatehouse merge show --help` for more.

            """)
        for words in [["merge", "undo", "--reason", "r", "--", "-3"], ["merge", "undo", "1.5", "--reason", "r"],
                      ["merge", "undo", "0", "--reason", "r"], ["merge", "show", "99999999999999999999"], ["merge", "show", " 7"]] {
            let result = try cli.run(Self.noStore + words)
            XCTAssertEqual(result.status, 2, "\(words): \(result.all)")
            XCTAssertTrue(result.stderr.contains("ID must be a whole number ≥ 1, got \""), "\(words): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("nonexistent"), "\(words) opened the store: \(result.stderr)")
        }
        // The word is echoed cut short, with invisible characters shown.
        let hostile = try cli.run(["merge", "show", "1\u{202E}2" + String(repeating: "9", count: 100)] + Self.noStore)
        XCTAssertEqual(hostile.status, 2, hostile.all)
        XCTAssertTrue(hostile.stderr.contains(#"got "1\u{202E}2"# + String(repeating: "9", count: 37) + "…\""), hostile.stderr)
        XCTAssertFalse(hostile.stderr.contains("\u{202E}"), hostile.stderr)
        // A number that is well formed reaches the command, which opens the store.
        let wellFormed = try cli.run(["merge", "show", "7"] + Self.noStore)
        XCTAssertEqual(wellFormed.status, 1, wellFormed.all)
        XCTAssertTrue(wellFormed.stderr.contains("nonexistent"), wellFormed.stderr)
    }

    /// Each help page's `arguments:` section and usage line, and the man page's entry, list the same positionals, in
    /// the declared order, with the declared help.
    func testHelpAndTheManPageListPositionalsFromTheDeclaration() throws {
        let gates = try cli.run(["gates", "set", "--help"])
        XCTAssertEqual(gates.status, 0, gates.all)
        XCTAssertTrue(gates.stdout.contains("usage: gatehouse gates set --evidence TEXT [options] PROVIDER REQUIREMENT STATE\n"), gates.stdout)
        XCTAssertTrue(gates.stdout.contains("""
            arguments:
              PROVIDER     apple or google
              REQUIREMENT  membership, app_id, services_id, return_urls
              STATE        met or unmet

            """), gates.stdout)
        let selftest = try cli.run(["apple", "key", "selftest", "--help"]).stdout
        XCTAssertTrue(selftest.contains("usage: gatehouse apple key selftest [options] [ID]\n"), selftest)
        XCTAssertTrue(selftest.contains("arguments:\n  ID  the Key ID (default: the active key)\n"), selftest)

        let man = try cli.run(["man"]).stdout
        var checked = 0
        var pending: [[String]] = [[]]
        while let path = pending.popLast() {
            let page = try cli.run(path + ["--help"]).stdout
            if let start = page.range(of: "\ncommands:\n") {
                for line in page[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
                    guard line.hasPrefix("  ") else { break }
                    pending.append(path + [String(line.dropFirst(2).prefix { $0 != " " })])
                }
            }
            var listed: [(name: String, help: String)] = []
            if let start = page.range(of: "\narguments:\n") {
                for line in page[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
                    guard line.hasPrefix("  "), let gap = line.dropFirst(2).range(of: "  ") else { break }
                    listed.append((String(line.dropFirst(2)[..<gap.lowerBound]), line[gap.upperBound...].trimmingCharacters(in: .whitespaces)))
                }
            }
            // The usage line: `usage: gatehouse PATH [<command>] --option VALUE [options] POSITIONAL [OPTIONAL]`.
            let usage = page.split(separator: "\n").first { $0.hasPrefix("usage: ") }.map(String.init) ?? ""
            var words = usage.split(separator: " ").dropFirst(2 + path.count).map(String.init)
            var positionals: [String] = []
            while let word = words.first {
                words.removeFirst()
                if word.hasPrefix("--") { words = Array(words.dropFirst()); continue }
                if ["[options]", "<command>", "[<command>]"].contains(word) { continue }
                positionals.append(word.trimmingCharacters(in: CharacterSet(charactersIn: "[].")))
            }
            XCTAssertEqual(positionals, listed.map(\.name), "gatehouse \(path.joined(separator: " ")): \(usage)")
            if !listed.isEmpty {
                let name = path.joined(separator: " ").replacingOccurrences(of: "-", with: "\\-")
                guard let entry = man.range(of: ".SS \"gatehouse \(name)\"\n") else { XCTFail("man: \(name)"); continue }
                let section = String(man[entry.upperBound...]).components(separatedBy: ".SS ").first ?? ""
                for argument in listed {
                    XCTAssertTrue(section.contains(".TP\n\\fI\(argument.name.replacingOccurrences(of: "-", with: "\\-"))\\fR\n"), "man: \(name) \(argument.name)")
                }
                checked += listed.count
            }
        }
        XCTAssertGreaterThan(checked, 25, "the walk reached every declared positional")
    }

    /// The completion scripts offer what each positional declares at its place: words, files, or nothing.
    func testBashCompletesEachPositionalAsDeclared() throws {
        let scratch = try Scratch()
        try cli.run(["completion", "bash"]).stdout.write(toFile: scratch.path("gatehouse.bash"), atomically: true, encoding: .utf8)
        let script = """
            source \(scratch.path("gatehouse.bash"))
            ask() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _gatehouse; echo "[${COMPREPLY[*]}]"; }
            ask gatehouse gates set ""
            ask gatehouse gates set apple ""
            ask gatehouse --store x.sqlite gates set apple membership --platform ios ""
            ask gatehouse gates set apple membership met ""
            ask gatehouse policy history linkSocial.
            ask gatehouse users show ""
            ask gatehouse apple key import \(scratch.url.path)/gatehouse.ba
            """
        let result = try Tool.run("/bin/bash", ["--norc", "-c", script])
        XCTAssertEqual(result.status, 0, result.all)
        XCTAssertEqual(result.stdout, """
            [apple google]
            [membership app_id services_id return_urls]
            [met unmet]
            []
            [linkSocial.allowDifferentEmails]
            []
            [\(scratch.url.path)/gatehouse.bash]

            """)
    }

    /// Commands read positionals only through their declarations: no by-name read is left, and every declared
    /// argument is listed in a spec and read.
    func testEveryPositionalIsReadThroughItsDeclaration() throws {
        let folder = CLI.packageRoot.appendingPathComponent("Sources/gatehouse/Commands")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
        XCTAssertGreaterThan(files.count, 10)
        var declared = 0
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            XCTAssertFalse(text.contains("invocation.argument("), "\(file) reads a positional by name")
            XCTAssertFalse(text.contains("ArgumentSpec("), "\(file) declares a positional without its type")
            let regex = try NSRegularExpression(pattern: #"static let (\w+): Argument<"#)
            for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let name = String(text[Range(match.range(at: 1), in: text)!])
                declared += 1
                XCTAssertTrue(text.contains("Arguments.\(name).spec"), "\(file) declares \(name) but no spec lists it")
                XCTAssertTrue(text.contains("invocation[Arguments.\(name)]") || text.contains("Arguments.\(name))"), "\(file) never reads \(name)")
            }
        }
        XCTAssertGreaterThanOrEqual(declared, 25)
    }
}
