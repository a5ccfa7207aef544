/// Text that operators type into the audit trail (actors, reasons, tickets, evidence), and text that goes back to
/// a terminal.
///
/// Two threats shape it. Control characters (ESC, BEL, CR, LF) in a stored value can rewrite an operator's terminal
/// or forge a line of `gatehouse audit` when it is printed. Bidi overrides and zero-width characters make a ticket
/// or reason read differently from what it holds ("SUP-1234" that is not the ticket SUP-1234). So input is refused
/// when it holds either, and everything printed to a terminal has its control characters made visible, because a
/// store may hold values that Gatehouse did not write.
///
///     let reason = try OperatorText.check(" rollback, SUP-12 ", field: "reason")   // "rollback, SUP-12"
///     OperatorText.visible("\u{1B}[2J")                                           // "\u{1B}[2J" as 8 plain characters
public enum OperatorText {
    /// Characters that change how the text around them is displayed without being seen: the bidi embeddings,
    /// overrides, isolates and marks, and the zero-width space, joiners, word joiner and byte-order mark.
    static func isInvisibleFormatting(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2064, 0x2066...0x2069, 0xFEFF: return true
        default: return false
        }
    }

    /// The bidi controls: embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069), the left-to-right and
    /// right-to-left marks (U+200E, U+200F) and the Arabic letter mark (U+061C). Printed as they are, they reorder
    /// the rest of the line on a terminal ("\u{202E}txt.exe" shows as "exe.txt"), so `visible` escapes them as it
    /// escapes control characters.
    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// Checks operator text (an actor, a ticket: one line; a reason, evidence: `multiline`, line breaks and tabs
    /// allowed): trimmed, refused when it holds any other control character, invisible formatting, or one of the
    /// characters `DomainText` marks references with (stored, it would read as a flag or a page name). `field` names the value in the error in the
    /// front end's neutral words ("the reason", "the ticket"). Returns the trimmed text.
    public static func check(_ text: String, field: String, multiline: Bool = false) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        for scalar in trimmed.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                if multiline && (scalar == "\n" || scalar == "\t") { continue }
                throw GatehouseError.invalid("\(field) contains control characters (U+\(hex(scalar))\(multiline ? "" : "; line breaks, tabs, escapes and bells are refused here"))",
                                             fix: multiline ? "use plain text" : "write it on one line of plain text")
            }
            if DomainText.isMarker(scalar) {
                throw GatehouseError.invalid("\(field) contains the private-use character U+\(hex(scalar)), which Gatehouse reserves to mark its own words",
                                             fix: "type it again as plain text instead of pasting it")
            }
            if isInvisibleFormatting(scalar) {
                throw GatehouseError.invalid("\(field) contains the invisible formatting character U+\(hex(scalar)) (a bidi override or a zero-width character), which would make it read as something it is not",
                                             fix: "type it again as plain text instead of pasting it")
            }
        }
        return trimmed
    }

    /// `text` with every control character other than line breaks and tabs (when `keepLineBreaks`), and every bidi
    /// control (`isBidiControl`), written as `\u{1B}`, `\u{202E}`, so a terminal shows it instead of obeying it, and
    /// `DomainText`'s marker characters (which a user may type) as U+FFFD, so echoed input never reads as a reference.
    /// Text without any is returned as it is, untouched.
    public static func visible(_ text: String, keepLineBreaks: Bool = true) -> String {
        // The lead bytes of every character changed below: C0 controls and DEL; C2 (C1 controls); D8 (U+061C);
        // E2 (U+200E…U+2069); EE (the markers).
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xD8 || $0 == 0xE2 || $0 == 0xEE }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let control = scalar.properties.generalCategory == .control || isBidiControl(scalar)
            if control && !(keepLineBreaks && (scalar == "\n" || scalar == "\t")) {
                out.append(contentsOf: "\\u{\(hex(scalar))}".unicodeScalars)
            } else if DomainText.isMarker(scalar) {
                out.append("\u{FFFD}")
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    private static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
