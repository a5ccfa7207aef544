@testable import D1Engine
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// Domain text names fields and commands; each front end spells them. These check the marks, the neutral words,
/// a flag-style spelling like the CLI's, and that marker characters from users render harmlessly.
final class DomainTextTests: XCTestCase {
    /// A spelling like the command line's, to check the marks carry everything a front end needs.
    let commandLine = CommandLineSpelling.spelling

    func testKebabNamesAreTheCommandLinesFlags() {
        XCTAssertEqual(InputField.keepEmail.kebabName, "keep-email")
        XCTAssertEqual(InputField.teamID.kebabName, "team-id")
        XCTAssertEqual(InputField.servicesID.kebabName, "services-id")
        XCTAssertEqual(InputField.clearAudience.kebabName, "clear-audience")
        XCTAssertEqual(InputField.ttl.kebabName, "ttl")
        XCTAssertEqual(InputField.for.kebabName, "for")
    }

    func testFieldsRenderInEachSpelling() {
        let text = "refusing to print the key without \(field: .reveal); \(field: .keepEmail) decides"
        XCTAssertEqual(DomainText.render(text, commandLine), "refusing to print the key without --reveal; --keep-email decides")
        XCTAssertEqual(DomainText.render(text, .neutral), "refusing to print the key without reveal; keepEmail decides")
        XCTAssertFalse(text.contains("--"))
    }

    func testCommandsRenderWithTheirArguments() {
        let named = "list merges with \(command: .mergeList)"
        XCTAssertEqual(DomainText.render(named, commandLine), "list merges with `gatehouse merge list`")
        XCTAssertEqual(DomainText.render(named, .neutral), "list merges with merge list")
        let line = "then: \(run: .gatesDisable, "google", .option(.platform, "ios"), .option(.reason, "\"...\""), .flag(.force))"
        XCTAssertEqual(DomainText.render(line, commandLine), #"then: gatehouse gates disable google --platform ios --reason "..." --force"#)
        XCTAssertEqual(DomainText.render(line, .neutral), #"then: gates disable google platform ios reason "..." force"#)
        let withEquals = "\(run: .providersSet, "google", .option(.clientID, "ios=<id>"))"
        XCTAssertEqual(DomainText.render(withEquals, commandLine), "gatehouse providers set google --client-id ios=<id>")
    }

    func testGatehouseErrorDescriptionIsNeutralAndMarkedDescriptionKeepsTheMarks() {
        let error = GatehouseError.invalid("\(field: .ticket) is empty", fix: "see \(command: .mergeShow, "3")")
        XCTAssertEqual(error.description, "ticket is empty\n  fix: see merge show 3")
        XCTAssertEqual(DomainText.render(error.markedDescription, commandLine), "--ticket is empty\n  fix: see `gatehouse merge show 3`")
    }

    /// A user may type the marker characters into a reason, a search or a path: they never forge a reference
    /// that was not written by the domain, and never reach a reader raw.
    func testHostileMarkerCharactersRenderHarmlessly() {
        let hostile = [
            "\u{E000}", "\u{E001}", "\u{E002}", "a\u{E000}b", "a\u{E001}b\u{E000}", "\u{E000}fnoSuchField\u{E001}",
            "\u{E000}cno such command\u{E001}", "\u{E000}x\u{E001}", "\u{E000}\u{E001}", "\u{E000}cmerge list\u{E002}zbad\u{E001}",
            "\u{E000}\u{E000}freveal\u{E001}", "\u{E000}freveal\u{E002}wextra\u{E001}", "\u{E000}cmerge plan\u{E002}onoSuch=1\u{E001}",
        ]
        for text in hostile {
            for spelling in [commandLine, .neutral] {
                let rendered = DomainText.render(text, spelling)
                XCTAssertFalse(rendered.unicodeScalars.contains(where: DomainText.isMarker), "\(text.debugDescription) → \(rendered.debugDescription)")
            }
        }
        // A well-formed reference typed by a user is neutralized wherever user text is echoed or passed as an argument.
        let typed = "\u{E000}freveal\u{E001}"
        XCTAssertEqual(OperatorText.visible("reason: " + typed), "reason: \u{FFFD}freveal\u{FFFD}")
        let echoed = "no user \(command: .usersSearch, "\(typed)")"
        XCTAssertEqual(DomainText.render(echoed, commandLine), "no user `gatehouse users search \u{FFFD}freveal\u{FFFD}`")
        // Operator text that would be stored refuses them.
        XCTAssertThrowsError(try OperatorText.check("SUP-1 \(typed)", field: "the ticket")) {
            XCTAssertTrue("\($0)".contains("private-use character U+E000"), "\($0)")
        }
        // Unknown names keep their text, flagged.
        XCTAssertEqual(DomainText.render("x\u{E000}fnoSuchField\u{E001}y", .neutral), "x\u{FFFD}fnoSuchFieldy")
        XCTAssertEqual(DomainText.render("open \u{E000}freveal", .neutral), "open \u{FFFD}freveal")
    }

    func testEveryCommandAndFieldSurvivesTheRoundTrip() {
        for field in InputField.allCases {
            XCTAssertEqual(DomainText.render("\(field: field)", .neutral), field.rawValue)
        }
        for command in OperatorCommand.allCases {
            XCTAssertEqual(DomainText.render("\(command: command)", commandLine), "`gatehouse \(command.rawValue)`")
        }
    }

    /// Bidi controls in stored or received text (a forged `kid`, a user's name) would reorder the terminal's line:
    /// `visible` escapes them as it escapes control characters, and leaves other non-ASCII text as it is.
    func testVisibleEscapesBidiControls() {
        XCTAssertEqual(OperatorText.visible("kid FORGED\u{202E}gpj.exe"), "kid FORGED\\u{202E}gpj.exe")
        for scalar: UInt32 in [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C] {
            let text = "a" + String(Character(Unicode.Scalar(scalar)!)) + "b"
            XCTAssertEqual(OperatorText.visible(text, keepLineBreaks: false), "a\\u{\(String(scalar, radix: 16, uppercase: true).leftPadded(4))}b", "U+\(String(scalar, radix: 16))")
        }
        for kept in ["naïve — café … → ✓", "تطبيق", "日本語", "Ana\u{200D}Costa"] {
            XCTAssertEqual(OperatorText.visible(kept), kept)
        }
        XCTAssertEqual(OperatorText.visible("\u{1B}[2J\u{202E}"), "\\u{001B}[2J\\u{202E}")
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
