/// JSON text written straight into bytes, for the few responses served so often that `JSONEncoder`'s
/// generic machinery costs more than the queries behind them (the user detail).
///
/// It writes what `JSONBody.encoder` would: no whitespace, `/` unescaped, non-ASCII as UTF-8. Keys are
/// written in the order given, so a caller lists them sorted, as `.sortedKeys` would, and skips a nil
/// optional as a synthesized `Encodable` does (`field(_:_:)` skips nil strings).
///
///     var json = JSONWriter()
///     json.beginObject()
///     json.field("id", "abc")
///     json.field("image", nil as String?)   // omitted
///     json.endObject()
///     json.bytes  // {"id":"abc"}
struct JSONWriter {
    /// The text so far.
    private(set) var bytes: [UInt8] = []
    /// Whether the next value or key needs a comma before it.
    private var needsComma = false

    init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
    }

    mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// An object key; the next call writes its value.
    mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// A string value; the domain's references in it are put into the console's words (`ConsoleSpelling`).
    mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var value = ConsoleSpelling.render(value)
        value.withUTF8 { utf8 in
            var plainStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart..<index]))
                plainStart = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    mutating func int<T: BinaryInteger>(_ value: T) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
        needsComma = true
    }

    /// `"name":"value"`, or nothing when `value` is nil.
    mutating func field(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    mutating func field(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }

    mutating func field<T: BinaryInteger>(_ name: String, _ value: T) {
        key(name)
        int(value)
    }

    /// `"name":[…]` of strings.
    mutating func field(_ name: String, strings: [String]) {
        key(name)
        beginArray()
        for value in strings { string(value) }
        endArray()
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }
}
