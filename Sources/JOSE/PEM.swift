/// A minimal PEM reader (RFC 7468) that keeps what an error message needs: the labels it found and how the file is
/// broken. It never puts body text in an error.
struct PEMDocument {
    /// One `-----BEGIN label-----` … `-----END label-----` block.
    struct Block {
        var label: String
        /// The body's base64 lines, joined, with RFC 1421 headers (`Proc-Type: …`) left out.
        var base64: String
        /// Whether the block had RFC 1421 headers, which only legacy encrypted keys have.
        var hasHeaders: Bool
        /// Whether the END line was found.
        var isComplete: Bool
    }

    var blocks: [Block]

    enum Failure: Error {
        case empty
        case noPEMBlock
    }

    /// Splits `text` into blocks, tolerating a UTF-8 byte order mark, CRLF or CR line ends and surrounding whitespace.
    /// Parses a key file for import: an empty file and anything that is not PEM are the importer's own errors.
    static func keyFile(_ text: String) throws -> PEMDocument {
        do {
            return try PEMDocument(parsing: text)
        } catch .empty {
            throw KeyImportError.emptyFile
        } catch {
            throw KeyImportError.notPEM
        }
    }

    init(parsing text: String) throws(Failure) {
        var scalars = Substring(text).unicodeScalars[...]
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        let lines = String(scalars)
            .split(omittingEmptySubsequences: true, whereSeparator: { $0.isNewline })
            .map { $0.trimmingASCIIWhitespace() }
            .filter { !$0.isEmpty }
        guard !lines.isEmpty else { throw .empty }

        var blocks: [Block] = []
        var current: Block?
        for line in lines {
            if var open = current {
                if let label = PEMDocument.label(of: line, marker: "END") {
                    open.isComplete = label == open.label
                    blocks.append(open)
                    current = nil
                } else if line.contains(":") {
                    open.hasHeaders = true
                } else if PEMDocument.label(of: line, marker: "BEGIN") != nil {
                    // A new block before this one ended: this one was cut short.
                    blocks.append(open)
                    current = Block(label: PEMDocument.label(of: line, marker: "BEGIN")!, base64: "",
                                    hasHeaders: false, isComplete: false)
                } else {
                    open.base64 += line
                    current = open
                }
            } else if let label = PEMDocument.label(of: line, marker: "BEGIN") {
                current = Block(label: label, base64: "", hasHeaders: false, isComplete: false)
            }
        }
        if let open = current { blocks.append(open) }
        guard !blocks.isEmpty else { throw .noPEMBlock }
        self.blocks = blocks
    }

    /// The label of a `-----BEGIN X-----` / `-----END X-----` line, nil for any other line.
    private static func label(of line: String, marker: String) -> String? {
        let prefix = "-----\(marker) "
        guard line.hasPrefix(prefix), line.hasSuffix("-----"), line.count >= prefix.count + 5 else { return nil }
        let label = String(line.dropFirst(prefix.count).dropLast(5))
        // Labels are short upper-case words; anything else is not echoed back in messages.
        guard !label.isEmpty, label.count <= 40,
              label.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == " " })
        else { return "(unrecognised label)" }
        return label
    }

    /// Wraps DER in a PEM block with 64-character lines.
    static func encode(_ der: [UInt8], label: String) -> String {
        let body = Base64.encode(der)
        var text = "-----BEGIN \(label)-----\n"
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            text += body[index..<end]
            text += "\n"
            index = end
        }
        text += "-----END \(label)-----\n"
        return text
    }
}

/// What a DER buffer's outer length says about it.
enum DERLength {
    /// Whether `der` starts with a SEQUENCE whose declared length runs past the end of the buffer: the classic sign of
    /// a file that was cut short (copied from a terminal, say).
    static func isTruncated(_ der: [UInt8]) -> Bool {
        guard der.count >= 2, der[0] == 0x30 else { return der.count < 2 }
        let first = Int(der[1])
        if first < 0x80 { return 2 + first > der.count }
        let lengthBytes = first & 0x7F
        guard lengthBytes >= 1, lengthBytes <= 4 else { return false }
        guard der.count >= 2 + lengthBytes else { return true }
        var length = 0
        for byte in der[2..<(2 + lengthBytes)] { length = length << 8 | Int(byte) }
        return 2 + lengthBytes + length > der.count
    }
}

extension Substring {
    func trimmingASCIIWhitespace() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" || first == "\r" || first == "\n" {
            slice = slice.dropFirst()
        }
        while let last = slice.last, last == " " || last == "\t" || last == "\r" || last == "\n" {
            slice = slice.dropLast()
        }
        return String(slice)
    }
}
