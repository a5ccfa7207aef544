import Foundation
import XCTest

/// The CLI's spelling of the domain's references names what the CLI accepts: every command the domain refers to
/// (`OperatorCommand`) is a command of the built binary, and every field it names (`InputField`), spelled as the CLI
/// spells it (`--` and kebab case), is an option of some command. Both lists are read from the domain's source, so a
/// new case cannot drift from the CLI unnoticed.
final class CLIWordingTests: XCTestCase {
    let cli = CLI()

    func source(_ path: String) throws -> String {
        try String(contentsOf: CLI.packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// `rawValue`s of `OperatorCommand`: `case mergeList = "merge list"`, or the case name when it has none.
    func commands() throws -> [String] {
        let text = try source("Sources/Gatehouse/Support/OperatorCommand.swift")
        let body = text.components(separatedBy: "public enum CommandArgument")[0]
        return body.split(separator: "\n").compactMap { line -> String? in
            let line = line.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("case ") else { return nil }
            let rest = line.dropFirst(5)
            if let quote = rest.firstIndex(of: "\"") { return String(rest[rest.index(after: quote)...].dropLast()) }
            return rest.replacingOccurrences(of: "`", with: "")
        }
    }

    /// The CLI's flags for `InputField`'s cases: `keepEmail` → `--keep-email`, `teamID` → `--team-id`.
    func flags() throws -> [String] {
        let text = try source("Sources/Gatehouse/Support/InputField.swift")
        let names = text.split(separator: "\n").flatMap { line -> [String] in
            let line = line.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("case ") else { return [] }
            return line.dropFirst(5).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "") }
        }
        return names.map { name in
            var flag = "--"
            var previous: Character?
            for character in name {
                if character.isUppercase, let previous, previous.isLowercase { flag += "-" }
                flag += character.lowercased()
                previous = character
            }
            return flag
        }
    }

    /// The help of `path` and of every command under it.
    func helps(_ path: [String]) throws -> [String] {
        let result = try cli.run(path + ["--help"])
        XCTAssertEqual(result.status, 0, "gatehouse \(path.joined(separator: " ")) --help: \(result.all)")
        var texts = [result.stdout]
        guard let section = result.stdout.components(separatedBy: "\ncommands:\n").dropFirst().first else { return texts }
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("  "), let word = line.split(separator: " ").first else { break }
            texts += try helps(path + [String(word)])
        }
        return texts
    }

    /// Health text the CLI prints, records and writes for node_exporter is in its words, with no raw mark.
    func testHealthOutputsAreInTheCommandLinesWords() throws {
        let scratch = try Scratch()
        let store = scratch.path("store.sqlite"), prom = scratch.path("gatehouse.prom")
        XCTAssertEqual(try cli.run(["init", "--store", store]).status, 0)
        let marks = CharacterSet(charactersIn: "\u{E000}\u{E001}\u{E002}")
        let first = try cli.run(["health", "--store", store, "--json", "--prometheus", prom])
        XCTAssertTrue(first.stdout.contains("no recorded run yet (the timer records with --record)"), first.stdout)
        let recorded = try cli.run(["health", "--store", store, "--record"])
        let history = try cli.run(["health", "history", "--store", store, "--json"])
        for (what, text) in [("health --json", first.all), ("health --record", recorded.all), ("health history", history.all),
                             ("the textfile", try String(contentsOfFile: prom, encoding: .utf8))] {
            XCTAssertNil(text.rangeOfCharacter(from: marks), "\(what) shows a raw mark: \(text)")
        }
    }

    func testEveryReferencedCommandAndFieldIsWhatTheCLIAccepts() throws {
        let commands = try commands()
        XCTAssertGreaterThan(commands.count, 20)
        for command in commands {
            let words = command.split(separator: " ").map(String.init)
            let help = try cli.run(words + ["--help"])
            XCTAssertEqual(help.status, 0, "`gatehouse \(command)` is not a command: \(help.all)")
            XCTAssertTrue(help.stdout.contains("usage: gatehouse \(command)"), "`gatehouse \(command) --help`: \(help.stdout.prefix(200))")
        }
        let everyHelp = try helps([]).joined(separator: "\n")
        let flags = try flags()
        XCTAssertGreaterThan(flags.count, 30)
        for flag in flags {
            XCTAssertNotNil(everyHelp.range(of: "\(flag)( |,|$|\n)", options: .regularExpression), "no command accepts \(flag)")
        }
    }
}
