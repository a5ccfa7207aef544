import Foundation
import Gatehouse

/// Where a command writes: text to stdout, diagnostics to stderr. Commands never print directly,
/// so tests and the serve loop see one path.
final class Output {
    // The domain's references to fields and commands are put into the command line's words here (`CLISpelling`).
    // Control characters a value carries (an ESC from a dirty store, a BEL in a forged audit entry) are shown,
    // never sent to the terminal as such.
    func line(_ text: String = "") { write(text + "\n") }
    func write(_ text: String) { Self.write(OperatorText.visible(CLISpelling.render(text)), to: STDOUT_FILENO) }
    func error(_ text: String) { Self.write(OperatorText.visible(CLISpelling.render(text + "\n")), to: STDERR_FILENO) }

    /// Writes the text's UTF-8 bytes with write(2), unbuffered, as FileHandle did. (FileHandle wants a Data,
    /// and building one from a string's bytes costs a runtime type check that is slow on first use.)
    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// Pretty, key-sorted JSON of an Encodable value.
    func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        line(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// A left-aligned table with a header row.
    func table(_ header: [String], _ rows: [[String]]) {
        // A cell is one line: a line break stored in a value is shown as \u{000A}, not let out to forge a row.
        let rows = rows.map { $0.map { OperatorText.visible(CLISpelling.render($0), keepLineBreaks: false) } }
        let widths = header.indices.map { column in
            ([header[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.count).max() ?? 0
        }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padded(to: widths[index])
            }.joined(separator: "  ")
        }
        line(render(header))
        for row in rows { line(render(row)) }
    }
}
