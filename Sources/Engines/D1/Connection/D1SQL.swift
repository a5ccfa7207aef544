import Storage

/// Statements as D1's API takes them: SQL text and parameters that are strings.
///
/// The API reference types `params` as strings, so a value is sent as the SQL literal of its type where the type
/// matters (integers, reals, NULL, blobs as `X'…'`) and text as a parameter — at most `maxParameters` per statement
/// (D1's limit), past which text is written as a literal too. Literals hold no SQL an input could break out of:
/// digits, `X'` and hex, or text with its quotes doubled. Gatehouse never prints the SQL it sends, so text written
/// as a literal (which may be a token) reaches no output.
struct D1Statement: Hashable {
    var sql: String
    var params: [String]
    /// Several statements joined by semicolons (a migration): D1 answers one result for each.
    var isScript = false

    /// D1's limit on bound parameters per statement.
    static let maxParameters = 100
    /// D1's limit on one statement's SQL, in bytes.
    static let maxBytes = 100_000

    init(sql: String, params: [String] = []) {
        self.sql = sql
        self.params = params
    }

    /// `sql` with its `?` and `?NNN` placeholders (outside literals, quoted names and comments) given `values`.
    init(_ sql: String, _ values: [SQLValue]) throws(D1Error) {
        var params: [String] = []
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var next = 0
        var failure: D1Error?
        SQLPlaceholders.scan(sql, sqliteQuotes: true, text: { out += $0 }, placeholder: { number in
            let index: Int
            if let number { index = number - 1 } else { index = next; next += 1 }
            guard index >= 0, index < values.count else {
                failure = D1Error(.statement, "a statement has more placeholders than the \(values.count) value(s) bound to it")
                return
            }
            let value = values[index]
            if case .text(let text) = value, params.count < Self.maxParameters {
                params.append(text)
                out += "?"
            } else {
                out += Self.literal(value)
            }
        })
        if let failure { throw failure }
        self.sql = out
        self.params = params
    }

    /// The SQL literal of `value`.
    static func literal(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let value):
            if value == .min { return "(-9223372036854775807-1)" }
            return value < 0 ? "(\(value))" : String(value)
        case .real(let value):
            if value.isNaN { return "NULL" }
            if value.isInfinite { return value < 0 ? "(-9e999)" : "9e999" }
            let text = "\(value)"
            return value < 0 ? "(\(text))" : text
        case .text(let text):
            // A NUL cannot stand in a literal: it is joined in with char(0).
            let pieces = text.split(separator: "\0", omittingEmptySubsequences: false).map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }
            return pieces.count == 1 ? pieces[0] : "(" + pieces.joined(separator: " || char(0) || ") + ")"
        case .blob(let bytes):
            let digits: [UInt8] = Array("0123456789ABCDEF".utf8)
            var hex = [UInt8](repeating: 0, count: bytes.count * 2)
            for (offset, byte) in bytes.enumerated() {
                hex[offset * 2] = digits[Int(byte >> 4)]
                hex[offset * 2 + 1] = digits[Int(byte & 0xF)]
            }
            return "X'" + String(decoding: hex, as: UTF8.self) + "'"
        }
    }

    /// Whether the statement only reads: it starts with SELECT, VALUES, EXPLAIN, a read-only PRAGMA, or WITH
    /// followed by no write.
    static func isRead(_ sql: String) -> Bool {
        let words = sql.split(whereSeparator: { $0.isWhitespace || $0 == "(" }).prefix(1).map { $0.uppercased() }
        switch words.first {
        case "SELECT", "VALUES", "EXPLAIN": return true
        case "PRAGMA": return !sql.contains("=")
        case "WITH":
            let upper = sql.uppercased()
            return !["INSERT ", "UPDATE ", "DELETE ", "REPLACE "].contains { upper.contains($0) }
        default: return false
        }
    }

    /// Whether a write statement gives rows back (`RETURNING`, outside literals and comments).
    static func returnsRows(_ sql: String) -> Bool {
        var code = ""
        SQLPlaceholders.scan(sql, sqliteQuotes: true, text: { code += $0 }, placeholder: { _ in code += "?" })
        return code.uppercased().contains("RETURNING")
    }

    /// The table a write statement changes (`INSERT INTO t`, `UPDATE t`, `DELETE FROM t`, `REPLACE INTO t`),
    /// unquoted and lowercased; nil for anything else.
    static func writtenTable(_ sql: String) -> String? {
        var words = sql.split(whereSeparator: { $0.isWhitespace || $0 == "(" }).prefix(6).map(String.init)[...]
        guard let verb = words.popFirst()?.uppercased() else { return nil }
        switch verb {
        case "INSERT", "REPLACE":
            while let word = words.popFirst() { if word.uppercased() == "INTO" { break } }
        case "UPDATE":
            if words.first?.uppercased() == "OR" { words = words.dropFirst(2) }
        case "DELETE":
            if words.first?.uppercased() == "FROM" { words = words.dropFirst() }
        default: return nil
        }
        return words.first.map(unquoted)
    }

    /// An identifier without its quotes, lowercased.
    static func unquoted(_ name: String) -> String {
        var name = Substring(name)
        if let first = name.first, first == "\"" || first == "`" || first == "[" { name = name.dropFirst() }
        if let last = name.last, last == "\"" || last == "`" || last == "]" { name = name.dropLast() }
        return name.replacingOccurrences(of: "\"\"", with: "\"").lowercased()
    }

    /// Whether `sql` names `table` (as a whole word, quoted or not, any case).
    static func mentions(_ sql: String, table: String) -> Bool {
        let lowered = sql.lowercased()
        var searchFrom = lowered.startIndex
        while let range = lowered.range(of: table, range: searchFrom..<lowered.endIndex) {
            let before = range.lowerBound == lowered.startIndex ? nil : lowered[lowered.index(before: range.lowerBound)]
            let after = range.upperBound == lowered.endIndex ? nil : lowered[range.upperBound]
            func boundary(_ char: Character?) -> Bool { char.map { !($0.isLetter || $0.isNumber || $0 == "_") } ?? true }
            if boundary(before) && boundary(after) { return true }
            searchFrom = range.upperBound
        }
        return false
    }
}

/// Guard statements: each makes the request it stands in fail — changing nothing, since a request is one atomic
/// batch — when what a write relied on no longer holds. A failing guard raises a JSON path error whose text names
/// it (`gatehouse guard N`), so the answer says which one failed; `changes()` and subqueries make the condition,
/// evaluated where it stands in the batch.
enum D1Guard {
    static let marker = "gatehouse guard "

    /// A guard that fails unless `condition` (SQL, with `params` for its `?`) holds.
    static func unless(_ condition: D1Statement, number: Int) -> D1Statement {
        D1Statement(sql: "SELECT json_extract('{}', '\(marker)\(number)' || (SELECT '' WHERE NOT (\(condition.sql))))", params: condition.params)
    }

    /// The guards that a read (`statement`, which gave `rows` of `width` columns) still gives exactly those rows: one
    /// for their count, then each row present, in chunks that keep each guard inside D1's statement limits.
    static func sameRows(_ statement: D1Statement, rows: [[SQLValue]], width: Int, firstNumber: Int) -> [D1Statement] {
        var guards = [unless(D1Statement(sql: "(SELECT count(*) FROM (\(statement.sql))) = \(rows.count)", params: statement.params), number: firstNumber)]
        guard width > 0, !rows.isEmpty else { return guards }
        var chunk: [String] = [], size = 0, number = firstNumber + 1
        func flush() {
            guard !chunk.isEmpty else { return }
            let values = "VALUES " + chunk.joined(separator: ", ")
            guards.append(unless(D1Statement(sql: "NOT EXISTS (\(values) EXCEPT SELECT * FROM (\(statement.sql)))", params: statement.params), number: number))
            number += 1
            chunk = []
            size = 0
        }
        let budget = D1Statement.maxBytes - 2 * statement.sql.utf8.count - 512
        for row in rows {
            let tuple = "(" + row.map(D1Statement.literal).joined(separator: ", ") + ")"
            if size + tuple.utf8.count > budget { flush() }
            chunk.append(tuple)
            size += tuple.utf8.count + 2
        }
        flush()
        return guards
    }

    /// A guard that the statement just before it changed exactly `count` rows.
    static func changed(_ count: Int, number: Int) -> D1Statement {
        unless(D1Statement(sql: "changes() = \(count)"), number: number)
    }

    /// The number of the guard a D1 error names, if it names one.
    static func failed(in message: String) -> Int? {
        guard let range = message.range(of: marker) else { return nil }
        return Int(message[range.upperBound...].prefix { $0.isNumber })
    }
}
