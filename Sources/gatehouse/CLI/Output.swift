import Foundation

/// Where a command writes: text to stdout, diagnostics to stderr. Commands never print directly,
/// so tests and the serve loop see one path.
final class Output {
    private let out = FileHandle.standardOutput
    private let err = FileHandle.standardError

    func line(_ text: String = "") { write(text + "\n") }
    func write(_ text: String) { out.write(Data(text.utf8)) }
    func error(_ text: String) { err.write(Data((text + "\n").utf8)) }

    /// Pretty, key-sorted JSON of an Encodable value.
    func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        line(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// A left-aligned table with a header row.
    func table(_ header: [String], _ rows: [[String]]) {
        let widths = header.indices.map { column in
            ([header[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.count).max() ?? 0
        }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        line(render(header))
        for row in rows { line(render(row)) }
    }
}
