import Foundation
import Storage

/// Reading a column through `ORDER BY` gave something a byte-wise merge cannot use (a non-text key, or
/// an order that is not byte order, e.g. a NOCASE column): the caller falls back to SQL anti-joins.
struct IndexOrderUnavailable: Error {
    let reason: String
}

/// One key column read in its index order (`SELECT key, extra FROM t ORDER BY key`), one row at a time,
/// so that two sorted columns can be compared by walking both once instead of probing one per row.
///
/// Keys are compared as UTF-8 bytes, which is SQLite's BINARY collation. The cursor checks that the rows
/// really arrive in that order; any other order, or a key that is neither text nor NULL, throws
/// `IndexOrderUnavailable` rather than giving a wrong answer.
///
///     let users = try IndexOrderCursor(db, #"SELECT id FROM "user" ORDER BY id"#, unique: true)
///     while let id = users.key { …; try users.advance() }
final class IndexOrderCursor {
    private let statement: Statement
    private let unique: Bool
    private let hasExtra: Bool
    /// The current key; nil when the row's key is NULL (see `isNull`) or the cursor is exhausted.
    private(set) var key: String?
    /// The second column of the current row (a rowid), when the query selects one.
    private(set) var extra: SQLValue = .null
    /// Whether the current row has a NULL key (NULLs sort first).
    private(set) var isNull = false
    /// Whether every row has been read.
    private(set) var isDone = false
    /// Whether the current row has the same key as the row before it.
    private(set) var repeatsKey = false

    init(_ db: Database, _ sql: String, unique: Bool) throws {
        statement = try db.statement(sql)
        self.unique = unique
        hasExtra = statement.columns.names.count > 1
        try statement.bind([])
        try advance()
    }

    deinit { statement.reset() }

    /// Moves to the next row.
    func advance() throws {
        guard !isDone else { return }
        guard try statement.step() else {
            isDone = true
            key = nil
            isNull = false
            statement.reset()
            return
        }
        switch statement.value(at: 0) {
        case .null:
            // NULLs sort before every text value: one after a text key means the order is not an index order.
            if key != nil { throw IndexOrderUnavailable(reason: "NULL after a text key in \(statement.sql)") }
            repeatsKey = isNull
            isNull = true
        case .text(let next):
            repeatsKey = false
            if let previous = key {
                let order = ByteOrder.compare(previous, next)
                if order > 0 || (unique && order == 0) {
                    throw IndexOrderUnavailable(reason: "rows not in byte order in \(statement.sql)")
                }
                repeatsKey = order == 0
            }
            key = next
            isNull = false
        default:
            throw IndexOrderUnavailable(reason: "a non-text key in \(statement.sql)")
        }
        if hasExtra { extra = statement.value(at: 1) }
    }
}

/// Byte-wise comparison of UTF-8 text: the order of SQLite's BINARY collation.
enum ByteOrder {
    /// Negative, zero or positive as `a` (from byte `aOffset` on) sorts before, equal to, or after `b`.
    static func compare(_ a: String, from aOffset: Int = 0, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let xCount = x.count - aOffset, yCount = y.count
                let common = min(xCount, yCount)
                if common > 0 {
                    let order = memcmp(x.baseAddress! + aOffset, y.baseAddress!, common)
                    if order != 0 { return Int(order) }
                }
                return xCount - yCount
            }
        }
    }
}
