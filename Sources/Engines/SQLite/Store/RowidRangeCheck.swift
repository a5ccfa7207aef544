import Foundation
import Gatehouse
import Storage

/// One table of a SQLite store as `IntegritySweep` checks it: whole with `PRAGMA quick_check(table)` when it is small
/// (or has no rowids, or is virtual), else one rowid range at a time.
///
/// SQLite has no quick_check of part of a table, so a range is checked by reading it the ways the store is read:
///
/// - every row of the range with every column decoded (`CAST(column AS BLOB)`), on a connection with
///   `cell_size_check` on: the table's leaf pages holding the range, their cells and records and any overflow pages
///   are read, and SQLite reports a malformed one as corruption; NOT NULL columns are checked as quick_check does;
/// - for each index, every row of the range is looked up in it by its own key and rowid (`INDEXED BY`, a covering
///   seek): an entry that is missing or holds other values is reported as `integrity_check` words it ("row R missing
///   from index I"). quick_check itself does not compare indexes with their table at all; this does, in one direction.
///
/// What a range check does not verify, against `quick_check(table)`: the b-tree pages no seek passes through are not
/// read (interior pages off the path, index entries that no row of the table has — an extra entry, found only by
/// `integrity_check`), the order of keys across pages and the free space inside pages are not checked page by page,
/// and CHECK constraints are not evaluated. An index on an expression is probed with the expression its definition
/// writes (one whose key list cannot be read is not: `unprobed`); a partial index is probed for the rows its WHERE
/// clause admits.
/// A row changed behind the sweep within a cycle is checked in the next cycle. `--deep`'s `integrity_check` checks all
/// of it, and the free-list, at once.
struct RowidRangeCheck: Sendable {
    let table: String
    /// The table's smallest rowid (nil: empty, or without rowids).
    let lowest: Int64?
    /// About how many rows it holds: `max(rowid) - min(rowid) + 1`, thinned by the density of rowids over its first
    /// 1,024 rows (an FTS5 data table's rowids run into the trillions over a few thousand rows); nil without rowids.
    let span: Int64?
    /// Checked whole by `quick_check(table)`: small, without rowids, or a virtual table.
    let isWhole: Bool
    /// The table's indexes.
    let indexCount: Int
    /// Indexes a range cannot look its rows up in (an expression list it cannot read, or a seek SQLite cannot plan).
    let unprobed: [String]
    private let decode: String
    private let notNull: [String]
    private let probes: [(index: String, sql: String)]

    init(_ db: SQLDatabase, table: String, wholeUpTo: Int64) throws {
        self.table = table
        let name = SQL.quote(table)
        let indexes = try db.rows("SELECT name, partial FROM pragma_index_list(?) ORDER BY name", [table])
            .compactMap { row in row[0].string.map { ($0, row[1].int64 == 1) } }
        indexCount = indexes.count
        let definition = try db.scalar("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", [table]).string ?? ""
        var bounds: Row?
        if !definition.uppercased().hasPrefix("CREATE VIRTUAL") {
            do {
                bounds = try db.row("SELECT (SELECT min(rowid) FROM \(name)), (SELECT max(rowid) FROM \(name))")
            } catch is SQLFailure {
                // WITHOUT ROWID, or damage on the way to either end: quick_check(table) checks it, and words the damage.
                bounds = nil
            }
        }
        if let bounds {
            let low = bounds[0].int64, high = bounds[1].int64
            lowest = low
            if let low, let high {
                let (width, overflow) = high.subtractingReportingOverflow(low)
                let full = overflow || width == .max ? Int64.max : width + 1
                if full <= wholeUpTo {
                    span = full
                } else if let sample = try? db.scalar("SELECT rowid FROM \(name) WHERE rowid >= ? ORDER BY rowid LIMIT 1 OFFSET 1023", [low]).int64 {
                    let density = 1024 / Double(max(1024, sample &- low &+ 1))
                    span = max(1024, min(full, Int64(min(9e18, Double(full) * density))))
                } else {
                    span = min(full, 1024)
                }
            } else {
                span = 0
            }
        } else {
            (lowest, span) = (nil, nil)
        }
        isWhole = span.map { $0 <= wholeUpTo } ?? true
        guard !isWhole else {
            (decode, notNull, probes, unprobed) = ("", [], [], [])
            return
        }
        let columns = try db.rows("SELECT name, \"notnull\" FROM pragma_table_info(?) ORDER BY cid", [table])
            .compactMap { row in row[0].string.map { ($0, row[1].int64 == 1) } }
        notNull = columns.filter(\.1).map(\.0)
        let decoded = columns.map { "coalesce(length(CAST(r.\(SQL.quote($0.0)) AS BLOB)), 0)" }
        var probes: [(String, String)] = [], unprobed: [String] = [], missing: [String] = []
        for (index, partial) in indexes {
            let keys = try db.rows("SELECT cid, name, coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", [index])
            // An expression's key is its text in the index's definition, compared with the same expression on the row.
            var expressions: [String] = []
            if keys.contains(where: { $0[0].int64 == -2 }) {
                let definition = try db.scalar("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?", [index]).string ?? ""
                guard let terms = Self.keyTerms(ofIndex: definition), terms.count == keys.count else { unprobed.append(index); continue }
                expressions = terms
            }
            // A partial index holds the rows its WHERE clause admits: the rows of the range are filtered by it, and
            // the seek repeats it, as SQLite uses a partial index only for a query that implies its clause (unqualified,
            // its column names name the outer row outside the subquery and the index's row inside).
            var filter = ""
            if partial {
                let definition = try db.scalar("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?", [index]).string ?? ""
                guard let clause = definition.range(of: " WHERE ", options: [.caseInsensitive, .backwards]) else { unprobed.append(index); continue }
                filter = " AND (\(definition[clause.upperBound...]))"
            }
            let terms = keys.enumerated().compactMap { position, key -> String? in
                if key[0].int64 == -2 {
                    // Unqualified, the expression reads x inside the seek, and the row itself in its own subquery.
                    let expression = expressions[position]
                    return "(\(expression)) IS (SELECT \(expression) FROM \(name) WHERE rowid = r.rowid)"
                }
                guard key[0].int64 != -1, let column = key[1].string.map(SQL.quote) else { return nil }
                return "x.\(column) IS r.\(column) COLLATE \(SQL.quote(key[2].string ?? "BINARY"))"
            } + ["x.rowid = r.rowid"] + (filter.isEmpty ? [] : [String(filter.dropFirst(5))])
            let seek = "NOT EXISTS (SELECT 1 FROM \(name) AS x INDEXED BY \(SQL.quote(index)) WHERE \(terms.joined(separator: " AND ")))"
            let sql = "SELECT r.rowid FROM \(name) AS r WHERE r.rowid BETWEEN ? AND ?\(filter) AND \(seek)"
            do {
                // Prepared once on an empty range: a seek SQLite cannot plan ("no query solution") is not a probe.
                _ = try db.rows(sql + " LIMIT 1", [1, 0])
                probes.append((index, sql))
                missing.append(filter.isEmpty ? "sum(\(seek))" : "sum(CASE WHEN \(filter.dropFirst(5)) THEN \(seek) ELSE 0 END)")
            } catch let error as SQLFailure where !error.isCorruption {
                unprobed.append(index)
            }
        }
        (self.probes, self.unprobed) = (probes, unprobed)
        // One pass over the range: its rows, NOT NULL columns, every column decoded, and each index's missing entries
        // (listed by the index's own query only when some are missing).
        decode = "SELECT count(*)" + notNull.map { ", sum(r.\(SQL.quote($0)) IS NULL)" }.joined()
            + ", total(\(decoded.isEmpty ? "0" : decoded.joined(separator: " + ")))"
            + missing.map { ", " + $0 }.joined()
            + " FROM \(name) AS r WHERE r.rowid BETWEEN ? AND ?"
    }

    /// The key terms of a `CREATE INDEX … ON table (term, …) [WHERE …]` statement, each without its ASC or DESC; nil
    /// when the list cannot be read (the index is then not probed).
    static func keyTerms(ofIndex definition: String) -> [String]? {
        let characters = Array(definition)
        guard let on = definition.range(of: " ON ", options: .caseInsensitive),
              let open = characters[definition.distance(from: definition.startIndex, to: on.upperBound)...].firstIndex(of: "(") else { return nil }
        var terms: [String] = [], current = "", depth = 0, quote: Character?
        for character in characters[(open + 1)...] {
            if let open = quote {
                current.append(character)
                if character == (open == "[" ? "]" : open) { quote = nil }
                continue
            }
            switch character {
            case "'", "\"", "`", "[": quote = character; current.append(character)
            case "(": depth += 1; current.append(character)
            case ")" where depth == 0:
                terms.append(current)
                let trimmed = terms.map { term -> String in
                    var words = term.trimmingCharacters(in: .whitespacesAndNewlines)
                    for order in [" ASC", " DESC"] where words.uppercased().hasSuffix(order) { words = String(words.dropLast(order.count)) }
                    return words.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                return trimmed.contains(where: \.isEmpty) ? nil : trimmed
            case ")": depth -= 1; current.append(character)
            case "," where depth == 0: terms.append(current); current = ""
            default: current.append(character)
            }
        }
        return nil
    }

    /// Checks `rows` rows from rowid `from` on: how many it read, the last rowid of the range (nil: the range ran to
    /// the table's end) and what it found wrong. Corruption is a finding; any other failure is thrown.
    func check(_ db: SQLDatabase, from: Int64, rows: Int64, problemLimit: Int) throws -> (rows: Int64, last: Int64?, problems: [String]) {
        let name = SQL.quote(table)
        var problems: [String] = []
        var last: Int64?
        var count: Int64 = 0
        do {
            last = try db.scalar("SELECT rowid FROM \(name) WHERE rowid >= ? ORDER BY rowid LIMIT 1 OFFSET ?", [from, rows - 1]).int64
            let upper = last ?? .max
            if let row = try db.row(decode, [from, upper]) {
                count = row[0].int64 ?? 0
                for (offset, column) in notNull.enumerated() where (row[offset + 1].int64 ?? 0) > 0 {
                    problems.append("NULL value in \(table).\(column) (\(row[offset + 1].int64 ?? 0) row(s) of rowids \(from)–\(upper))")
                }
                let missing = (0..<probes.count).map { row[notNull.count + 2 + $0].int64 ?? 0 }
                for ((index, sql), count) in zip(probes, missing) where count > 0 && problems.count < problemLimit {
                    try db.forEach(sql + " LIMIT \(problemLimit - problems.count)", [from, upper]) { row in
                        problems.append("row \(row[0].int64 ?? 0) missing from index \(index)")
                    }
                }
            }
        } catch let error as SQLFailure where error.isCorruption {
            problems.append("rowids \(from)–\(last.map(String.init) ?? "end"): \(error.message)")
        }
        return (count, last, problems)
    }
}
