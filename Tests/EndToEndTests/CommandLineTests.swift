import XCTest

/// The CLI's conventions: help, version, usage errors, exit statuses.
final class CommandLineTests: XCTestCase {
    let cli = CLI()

    func testVersion() throws {
        let result = try cli.run(["--version"])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.stdout.hasPrefix("gatehouse "), result.stdout)
        XCTAssertEqual(result.stderr, "")
    }

    func testHelpAtEveryLevelGoesToStdoutWithStatusZero() throws {
        for words in [["--help"], ["-h"], [], ["audit", "--help"], ["audit", "verify", "-h"], ["demo"], ["demo", "seed", "--help"], ["init", "--help"]] {
            let result = try cli.run(words)
            XCTAssertEqual(result.status, 0, "\(words)")
            XCTAssertTrue(result.stdout.contains("usage: gatehouse"), "\(words): \(result.stdout)")
            XCTAssertEqual(result.stderr, "", "\(words)")
        }
        let seedHelp = try cli.run(["demo", "seed", "--help"]).stdout
        XCTAssertTrue(seedHelp.contains("--users N"), seedHelp)
        XCTAssertTrue(seedHelp.contains("(required)"), seedHelp)
    }

    func testUnknownCommandSuggestsAndExitsTwo() throws {
        let result = try cli.run(["audti"])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stdout, "")
        XCTAssertTrue(result.stderr.contains(#"unknown command "audti" for "gatehouse"; did you mean "audit"?"#), result.stderr)
        XCTAssertTrue(result.stderr.contains("usage: gatehouse"), result.stderr)
        let nested = try cli.run(["audit", "verfy"])
        XCTAssertEqual(nested.status, 2)
        XCTAssertTrue(nested.stderr.contains(#"did you mean "verify"?"#), nested.stderr)
    }

    func testUnknownOptionSuggestsAndExitsTwo() throws {
        let result = try cli.run(["status", "--jsno", "--store", "x.sqlite"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains(#"unknown option --jsno; did you mean "--json"?"#), result.stderr)
    }

    func testMissingValuesAndRequiredOptions() throws {
        XCTAssertEqual(try cli.run(["status", "--store"]).status, 2)
        let seed = try cli.run(["demo", "seed", "--store", "/tmp/none.sqlite"])
        XCTAssertEqual(seed.status, 2)
        XCTAssertTrue(seed.stderr.contains("missing --users"), seed.stderr)
        let noStore = try cli.run(["status"])
        XCTAssertEqual(noStore.status, 2)
        XCTAssertTrue(noStore.stderr.contains("--store FILE or set GATEHOUSE_STORE"), noStore.stderr)
    }

    func testBadNumbersAreUsageErrors() throws {
        for bad in ["-5", "0", "ten", "99999999999999999999", "1e6"] {
            let result = try cli.run(["demo", "seed", "--store", "/tmp/none.sqlite", "--users", bad])
            XCTAssertEqual(result.status, 2, bad)
            XCTAssertTrue(result.stderr.contains("--users must be a whole number"), result.stderr)
        }
    }

    func testOptionsAcceptEqualsFormAndDoubleDash() throws {
        let scratch = try Scratch()
        let store = scratch.path("s.sqlite")
        XCTAssertEqual(try cli.run(["init", "--store=\(store)"]).status, 0)
        XCTAssertEqual(try cli.run(["--store", store, "status"]).status, 0)
        XCTAssertEqual(try CLI(environment: ["GATEHOUSE_STORE": store]).run(["status", "--json"]).status, 0)
        XCTAssertEqual(try cli.run(["status", "--store", store, "--", "--json"]).status, 2, "after --, words are arguments")
    }

    func testHostileArgumentsDoNotCrash() throws {
        let long = String(repeating: "A", count: 100_000)
        for words in [[long], ["--" + long], ["audit", "list", "--action", long, "--store", "/nonexistent/x"], ["\u{0}"], ["status", "--store", "\u{1b}[31mred"]] {
            let result = try cli.run(words)
            XCTAssertTrue([1, 2].contains(result.status), "\(words.map { $0.prefix(20) }): \(result.status)")
            XCTAssertLessThan(result.stderr.count, 2_000, "errors quote inputs briefly")
        }
    }
}
