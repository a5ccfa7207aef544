import Foundation
import XCTest

/// Every option a command reads is declared in a spec, so `--help`, completions and the man page list it and the
/// parser accepts it. Commands read options through typed declarations (`static let x: Option<…>`, read as
/// `invocation[Options.x]`), which cannot be misspelt where they are read; this walks the command sources for what
/// still could go wrong: a by-name read (`invocation.value("name")`), and a typed declaration left out of
/// every spec's `options:`. (A debug build also stops at any read of an option the running command does not declare.)
final class CLIOptionDeclarationTests: XCTestCase {
    static let globalOptions: Set<String> = ["store", "store-file", "config", "actor", "help", "json"]

    func matches(_ pattern: String, in text: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    func testEveryOptionACommandReadsIsDeclaredInItsSpec() throws {
        let folder = CLI.packageRoot.appendingPathComponent("Sources/gatehouse/Commands")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
        XCTAssertGreaterThan(files.count, 10)
        var typedReads = 0, namedReads = 0
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            // Declared by name in a spec (`.value("x", …)`, `.flag("x", …)`) or as a typed Option (`.required("x", …)` …).
            let declared = Set(try matches(#"\.(?:value|flag|text|texts|required|integer|duration|choice)\(\s*"([a-z0-9-]+)""#, in: text))
                .union(Self.globalOptions)
            for name in try matches(#"\binvocation\.(?:flag|value|values|required|choice|integer|duration)\(\s*"([a-z0-9-]+)""#, in: text) {
                namedReads += 1
                XCTAssertTrue(declared.contains(name), "\(file) reads --\(name), which no spec in it declares")
                XCTFail("\(file) reads --\(name) by name; declare it as an Option and read it through the declaration")
            }
            for option in try matches(#"static let (\w+): Option<"#, in: text) {
                XCTAssertFalse(try matches(#"\b(\#(option))\.spec\b"#, in: text).isEmpty, "\(file) declares \(option) but no spec lists \(option).spec")
                typedReads += try matches(#"invocation\[(?:Self\.|Options\.)?(\#(option))\]"#, in: text).count
            }
        }
        // The walk found what it walks (a changed spelling of reads would otherwise pass silently).
        XCTAssertEqual(namedReads, 0)
        XCTAssertGreaterThan(typedReads, 90)
    }

    /// A typed option parses a bad value with the by-name read's words and exit status.
    func testTypedOptionsRefuseBadValuesAsBefore() throws {
        let result = try CLI().run(["merge", "plan", "--from", "a", "--into", "b", "--keep-email", "neither", "--store", "/nonexistent/x.sqlite"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertEqual(result.stderr, """
            gatehouse: --keep-email must be target or source, got "neither"
            usage: gatehouse merge plan --from U2 --into U1 [options]
            Run `gatehouse merge plan --help` for more.

            """)
        let limit = try CLI().run(["merge", "list", "--limit", "0", "--store", "/nonexistent/x.sqlite"])
        XCTAssertEqual(limit.status, 1, "the store is opened before --limit is read, as before: \(limit.stderr)")
    }
}
