import Foundation

/// Reads a transfer file (`AppleTransferFile`) without building its whole JSON tree: the header's fields at once, the
/// users in batches. A JSON decoder holds several times the file's size (134 MB for 300,000 users); this holds the
/// file, where each user's entry lies in it, and one batch.
///
///     let reader = try AppleTransferFileReader(data)
///     try reader.batches(of: 5_000) { users in … }
struct AppleTransferFileReader {
    /// Every field of the file but its users.
    struct Header: Decodable {
        let format: String
        let fromTeam: String
        let toTeam: String
        let clientId: String
        let transferredAt: String
    }

    /// What is wrong with the file's JSON, in a few words.
    struct Malformed: Error {
        let problem: String
    }

    let header: Header
    private let data: Data
    /// Where each entry of `users` lies in `data`.
    private let entries: [Range<Int>]

    var count: Int { entries.count }

    init(_ data: Data) throws {
        var headerParts: [Range<Int>] = []
        var users: [Range<Int>]?
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var scanner = Scanner(bytes: bytes)
            try scanner.expect(UInt8(ascii: "{"))
            if scanner.peek() == UInt8(ascii: "}") { scanner.index += 1 } else {
                while true {
                    let key = try scanner.string()
                    try scanner.expect(UInt8(ascii: ":"))
                    if bytes[key].elementsEqual("\"users\"".utf8) {
                        guard users == nil else { throw Malformed(problem: "\"users\" appears twice") }
                        users = try scanner.array()
                    } else {
                        let value = try scanner.value()
                        headerParts.append(key.lowerBound..<value.upperBound)
                    }
                    if scanner.peek() == UInt8(ascii: ",") { scanner.index += 1; continue }
                    try scanner.expect(UInt8(ascii: "}"))
                    break
                }
            }
            scanner.skipSpace()
            guard scanner.index == bytes.count else { throw Malformed(problem: "text follows the JSON object") }
        }
        guard let users else { throw Malformed(problem: "no \"users\" array") }
        var object = Data("{".utf8)
        for (index, part) in headerParts.enumerated() {
            if index > 0 { object.append(UInt8(ascii: ",")) }
            object.append(data[data.startIndex + part.lowerBound..<data.startIndex + part.upperBound])
        }
        object.append(UInt8(ascii: "}"))
        do { header = try JSONDecoder().decode(Header.self, from: object) } catch { throw Malformed(problem: "a header field is missing or not text") }
        self.data = data
        entries = users
    }

    /// Decodes the users `size` at a time, in the file's order, handing each batch to `body`.
    func batches(of size: Int, _ body: ([AppleTransferFile.User]) throws -> Void) throws {
        var start = 0
        while start < entries.count {
            let end = min(start + size, entries.count)
            let slice = entries[start..<end]
            var array = Data("[".utf8)
            for (index, entry) in slice.enumerated() {
                if index > 0 { array.append(UInt8(ascii: ",")) }
                array.append(data[data.startIndex + entry.lowerBound..<data.startIndex + entry.upperBound])
            }
            array.append(UInt8(ascii: "]"))
            let users: [AppleTransferFile.User]
            do { users = try JSONDecoder().decode([AppleTransferFile.User].self, from: array) } catch {
                throw Malformed(problem: "an entry of \"users\" (among entries \(start + 1) to \(end)) is not {\"userId\", \"transferSub\"} with text values")
            }
            try body(users)
            start += size
        }
    }

    /// A walk over JSON text that finds where values lie and checks their nesting; the values it is asked for are
    /// decoded by `JSONDecoder` afterwards, which checks the rest.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        }

        mutating func peek() -> UInt8? {
            skipSpace()
            return index < bytes.count ? bytes[index] : nil
        }

        mutating func expect(_ byte: UInt8) throws {
            guard peek() == byte else { throw Malformed(problem: "expected '\(Character(Unicode.Scalar(byte)))' at byte \(index)") }
            index += 1
        }

        /// A string, quotes included.
        mutating func string() throws -> Range<Int> {
            try expect(UInt8(ascii: "\""))
            let start = index - 1
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { return start..<index } else if byte < 0x20 {
                    throw Malformed(problem: "a control character inside a string at byte \(index - 1)")
                }
            }
            throw Malformed(problem: "a string is not closed")
        }

        /// An array's elements.
        mutating func array() throws -> [Range<Int>] {
            try expect(UInt8(ascii: "["))
            var elements: [Range<Int>] = []
            if peek() == UInt8(ascii: "]") { index += 1; return elements }
            while true {
                elements.append(try value())
                if peek() == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "]"))
                return elements
            }
        }

        /// Any value: a string, an object or array (its brackets matched), or a bare literal.
        mutating func value() throws -> Range<Int> {
            guard let first = peek() else { throw Malformed(problem: "a value is missing at the end") }
            let start = index
            switch first {
            case UInt8(ascii: "\""):
                return try string()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var open: [UInt8] = []
                repeat {
                    guard index < bytes.count else { throw Malformed(problem: "an object or array is not closed") }
                    let byte = bytes[index]
                    switch byte {
                    case UInt8(ascii: "\""): _ = try string(); continue
                    case UInt8(ascii: "{"): open.append(UInt8(ascii: "}"))
                    case UInt8(ascii: "["): open.append(UInt8(ascii: "]"))
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        guard open.popLast() == byte else { throw Malformed(problem: "a bracket that does not match at byte \(index)") }
                    default: break
                    }
                    index += 1
                } while !open.isEmpty
                return start..<index
            default:
                while index < bytes.count, !",}] \n\r\t".utf8.contains(bytes[index]) { index += 1 }
                guard index > start else { throw Malformed(problem: "a value is missing at byte \(start)") }
                return start..<index
            }
        }
    }
}
