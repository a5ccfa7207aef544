import Storage

/// The JSON of Cloudflare's API, parsed without Foundation: numbers are kept as their text, so that an integer is
/// read exactly (or refused when JavaScript could not have sent it exactly) and never passes through a `Double`
/// by accident; depth and size are bounded, so a hostile answer ends in an error, never a trap.
enum D1JSON: Equatable {
    case null
    case bool(Bool)
    /// The number as it was written.
    case number(String)
    case string(String)
    case array([D1JSON])
    /// A non-empty array of integers 0 to 255 each written plainly (`[0,171,255]`: a BLOB, as D1 sends one), kept as
    /// its bytes: a byte each, not a value each. `array` gives it as numbers.
    case bytes([UInt8])
    case object([(String, D1JSON)])

    static func == (lhs: D1JSON, rhs: D1JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.bytes(a), .bytes(b)): a == b
        case (.bytes, .array), (.array, .bytes): lhs.array == rhs.array
        case let (.object(a), .object(b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    subscript(key: String) -> D1JSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    var array: [D1JSON]? {
        switch self {
        case .array(let items): items
        case .bytes(let bytes): bytes.map { .number(String($0)) }
        default: nil
        }
    }
    var string: String? { if case .string(let text) = self { text } else { nil } }
    var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    var int: Int? { if case .number(let text) = self { Int(text) ?? Double(text).flatMap { $0.isFinite && abs($0) < 1e15 ? Int($0) : nil } } else { nil } }

    struct SyntaxError: Error { let offset: Int }

    static let maxDepth = 64

    static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> D1JSON {
        var parser = Parser(bytes: bytes, sizes: containerSizes(bytes))
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == bytes.count else { throw SyntaxError(offset: parser.index) }
        return value
    }

    /// How many items each array and object holds, in the order their opening brackets come: one pass that only
    /// counts (it checks nothing; the parser does), so the parser reserves each array at its final size. An answer
    /// parsed into arrays grown by doubling takes over twenty times its size; reserved, the values take what they need.
    static func containerSizes(_ bytes: [UInt8]) -> [Int32] {
        var sizes: [Int32] = []
        var open: [(slot: Int, empty: Bool)] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                if !open.isEmpty { open[open.count - 1].empty = false }
                guard open.count < D1JSON.maxDepth else { return sizes }
                open.append((sizes.count, true))
                sizes.append(0)
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                guard let last = open.popLast() else { return sizes }
                if !last.empty { sizes[last.slot] += 1 }
            case UInt8(ascii: ","):
                if let last = open.last { sizes[last.slot] += 1 }
            case 0x20, 0x0A, 0x0D, 0x09:
                break
            default:
                if !open.isEmpty { open[open.count - 1].empty = false }
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\"") { index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1 }
                }
            }
            index += 1
        }
        return sizes
    }

    private struct Parser {
        let bytes: [UInt8]
        /// `containerSizes`, consumed in order: a hint, never trusted past the bytes left.
        let sizes: [Int32]
        var nextSize = 0
        var index = 0

        init(bytes: [UInt8], sizes: [Int32]) {
            self.bytes = bytes
            self.sizes = sizes
        }

        /// The item count of the container opening at `index`, bounded by what the bytes left could hold.
        mutating func reservation() -> Int {
            defer { nextSize += 1 }
            guard nextSize < sizes.count else { return 0 }
            return min(Int(sizes[nextSize]), (bytes.count - index) / 2 + 1)
        }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
        }

        mutating func value(depth: Int) throws(SyntaxError) -> D1JSON {
            guard depth < D1JSON.maxDepth, index < bytes.count else { throw SyntaxError(offset: index) }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                var members: [(String, D1JSON)] = []
                members.reserveCapacity(reservation())
                index += 1
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                while true {
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw SyntaxError(offset: index) }
                    let key = try string()
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw SyntaxError(offset: index) }
                    index += 1
                    skipSpace()
                    members.append((key, try value(depth: depth + 1)))
                    skipSpace()
                    guard index < bytes.count else { throw SyntaxError(offset: index) }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                    throw SyntaxError(offset: index)
                }
            case UInt8(ascii: "["):
                let reserved = reservation()
                if let bytes = byteArray(reserving: reserved) { return .bytes(bytes) }
                var items: [D1JSON] = []
                items.reserveCapacity(reserved)
                index += 1
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                while true {
                    skipSpace()
                    items.append(try value(depth: depth + 1))
                    skipSpace()
                    guard index < bytes.count else { throw SyntaxError(offset: index) }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                    throw SyntaxError(offset: index)
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            default:
                return .number(try number())
            }
        }

        /// The array at `index` as bytes when it is a non-empty array of plain integers 0 to 255 (no sign, fraction,
        /// exponent or leading zero), past its `]`; else nil, with `index` where it was.
        mutating func byteArray(reserving capacity: Int) -> [UInt8]? {
            let start = index
            var out: [UInt8] = []
            index += 1
            while true {
                skipSpace()
                let digitsStart = index
                var value = 0
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, index - digitsStart < 3 {
                    value = value * 10 + Int(bytes[index] - 0x30)
                    index += 1
                }
                let digits = index - digitsStart
                guard digits > 0, value <= 255, !(digits > 1 && bytes[digitsStart] == 0x30) else { index = start; return nil }
                if out.isEmpty { out.reserveCapacity(capacity) }
                out.append(UInt8(value))
                skipSpace()
                guard index < bytes.count else { index = start; return nil }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return out }
                index = start
                return nil
            }
        }

        mutating func literal(_ word: String) throws(SyntaxError) {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<(index + expected.count)]) == expected else { throw SyntaxError(offset: index) }
            index += expected.count
        }

        mutating func number() throws(SyntaxError) -> String {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            // At least one digit, and no leading zero before another.
            guard index > digitsStart, !(bytes[digitsStart] == 0x30 && index - digitsStart > 1) else { throw SyntaxError(offset: start) }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                let fraction = index
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
                guard index > fraction else { throw SyntaxError(offset: start) }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                let exponent = index
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
                guard index > exponent else { throw SyntaxError(offset: start) }
            }
            guard index - start <= 400 else { throw SyntaxError(offset: start) }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func string() throws(SyntaxError) -> String {
            index += 1
            let start = index
            var out: [UInt8] = []
            var runStart = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    defer { index += 1 }
                    // No escape seen: the text straight from the answer's bytes, copied once.
                    if out.isEmpty && runStart == start { return String(decoding: bytes[runStart..<index], as: UTF8.self) }
                    out.append(contentsOf: bytes[runStart..<index])
                    return String(decoding: out, as: UTF8.self)
                }
                if byte < 0x20 { throw SyntaxError(offset: index) }
                if byte != UInt8(ascii: "\\") { index += 1; continue }
                out.append(contentsOf: bytes[runStart..<index])
                index += 1
                guard index < bytes.count else { throw SyntaxError(offset: index) }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        // A surrogate pair; a lone half becomes U+FFFD, as JavaScript's would print it replaced.
                        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                            index += 2
                            let low = try hex4()
                            scalar = low >= 0xDC00 && low < 0xE000 ? 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD
                        } else {
                            scalar = 0xFFFD
                        }
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        scalar = 0xFFFD
                    }
                    out.append(contentsOf: Array(String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8))
                default:
                    throw SyntaxError(offset: index - 1)
                }
                runStart = index
            }
            throw SyntaxError(offset: index)
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw SyntaxError(offset: index) }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case 0x30...0x39: digit = UInt32(byte - 0x30)
                case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
                case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
                default: throw SyntaxError(offset: index)
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }
    }

    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
