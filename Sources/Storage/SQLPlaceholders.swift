/// The placeholders of a statement written with `?` (and SQLite's `?NNN`), found where SQL has them: outside string
/// literals, quoted identifiers (`"…"`; with `sqliteQuotes` also SQLite's `` `…` `` and `[…]`, which Postgres reads as
/// an array subscript) and comments. Each engine that binds differently from
/// SQLite rewrites them through this one scanner: Postgres numbers them (`$1`…), D1 writes values as literals or
/// string parameters.
package enum SQLPlaceholders {
    /// Walks `sql`, handing over runs of text in order and each placeholder between them (`?` as nil, `?NNN` as its
    /// number).
    package static func scan(_ sql: String, sqliteQuotes: Bool, text: (String) -> Void, placeholder: (Int?) -> Void) {
        let bytes = Array(sql.utf8)
        var index = 0, runStart = 0
        func flush(_ end: Int) { if end > runStart { text(String(decoding: bytes[runStart..<end], as: UTF8.self)) } }
        // A literal or identifier runs to its closing quote; a doubled quote inside it is an escaped one.
        func closingQuote(_ quote: UInt8) -> Int {
            var end = index + 1
            while end < bytes.count {
                if bytes[end] == quote {
                    if end + 1 < bytes.count && bytes[end + 1] == quote { end += 2; continue }
                    break
                }
                end += 1
            }
            return min(end + 1, bytes.count)
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                index = closingQuote(byte)
            case UInt8(ascii: "`") where sqliteQuotes:
                index = closingQuote(byte)
            case UInt8(ascii: "[") where sqliteQuotes:
                var end = index + 1
                while end < bytes.count && bytes[end] != UInt8(ascii: "]") { end += 1 }
                index = min(end + 1, bytes.count)
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                var end = index + 2
                while end + 1 < bytes.count && !(bytes[end] == UInt8(ascii: "*") && bytes[end + 1] == UInt8(ascii: "/")) { end += 1 }
                index = min(end + 2, bytes.count)
            case UInt8(ascii: "?"):
                flush(index)
                var end = index + 1
                while end < bytes.count && bytes[end] >= UInt8(ascii: "0") && bytes[end] <= UInt8(ascii: "9") { end += 1 }
                placeholder(end > index + 1 ? Int(String(decoding: bytes[(index + 1)..<end], as: UTF8.self)) ?? 0 : nil)
                index = end
                runStart = end
            default:
                index += 1
            }
        }
        flush(bytes.count)
    }
}
