import Foundation
import Gatehouse
import Storage

/// Reading a column through `ORDER BY` gave something a byte-wise merge cannot use (a non-text key, or
/// an order that is not byte order, e.g. a NOCASE column): the caller falls back to SQL anti-joins.
struct IndexOrderUnavailable: Error {
    let reason: String
}

/// One key column read in its index order (`SELECT key, extra FROM t ORDER BY key`), one row at a time,
/// so that two sorted columns can be compared by walking both once instead of probing one per row.
/// Fast path kept for ops/bench's `accounts check` (< 5 s) and `gatehouse health` (< 2 s) rows on 1,000,000 users.
///
/// Keys are compared as UTF-8 bytes, which is SQLite's BINARY collation. The cursor checks that the rows
/// really arrive in that order; any other order, or a key that is neither text nor NULL, throws
/// `IndexOrderUnavailable` rather than giving a wrong answer. Keys are kept as bytes in two reused buffers
/// (the current one and the one before, for the order check): a walk over millions of rows makes no `String`s.
///
///     let users = try IndexOrderCursor(db, #"SELECT id FROM "user" ORDER BY id"#, unique: true)
///     while !users.isDone { …users.keyBytes…; try users.advance() }
final class IndexOrderCursor {
    private let statement: Statement
    private let unique: Bool
    private let hasExtra: Bool
    /// The current key's UTF-8 bytes; empty when the key is NULL (see `isNull`) or the cursor is exhausted.
    private(set) var keyBytes: [UInt8] = []
    private var previousBytes: [UInt8] = []
    private var hasPrevious = false
    /// Whether the current row has a NULL key (NULLs sort first).
    private(set) var isNull = false
    /// Whether every row has been read.
    private(set) var isDone = false
    /// Whether the current row has the same key as the row before it.
    private(set) var repeatsKey = false

    init(_ db: SQLDatabase, _ sql: String, _ arguments: [SQLValue] = [], unique: Bool) throws {
        // Two cursors stepped in turn need two statements open on one connection: SQLite's, not libpq's.
        guard let db = db as? SQLiteDatabase else {
            throw IndexOrderUnavailable(reason: "\(db.dialect.name) runs one statement at a time per connection")
        }
        statement = try db.statement(sql)
        self.unique = unique
        hasExtra = statement.columns.names.count > 1
        try statement.bind(arguments)
        try advance()
    }

    deinit { statement.reset() }

    /// The current key as text; nil when it is NULL or the cursor is exhausted. (Made on demand: for samples.)
    var key: String? { isDone || isNull ? nil : String(decoding: keyBytes, as: UTF8.self) }

    /// The second column of the current row (a rowid), when the query selects one.
    var extra: SQLValue { hasExtra && !isDone ? statement.value(at: 1) : .null }

    /// Moves to the next row.
    func advance() throws {
        guard !isDone else { return }
        guard try statement.step() else {
            isDone = true
            isNull = false
            keyBytes.removeAll(keepingCapacity: true)
            statement.reset()
            return
        }
        swap(&keyBytes, &previousBytes)
        let wasNull = isNull, hadKey = hasPrevious && !isNull
        let isText: Bool = statement.withText(at: 0) { value in
            switch value {
            case .null:
                isNull = true
                return true
            case .text(let bytes):
                isNull = false
                keyBytes.removeAll(keepingCapacity: true)
                keyBytes.append(contentsOf: bytes)
                return true
            case .notText:
                return false
            }
        }
        guard isText else { throw IndexOrderUnavailable(reason: "a non-text key in \(statement.sql)") }
        if isNull {
            // NULLs sort before every text value: one after a text key means the order is not an index order.
            if hadKey { throw IndexOrderUnavailable(reason: "NULL after a text key in \(statement.sql)") }
            repeatsKey = wasNull && hasPrevious
            keyBytes.removeAll(keepingCapacity: true)
        } else {
            repeatsKey = false
            if hadKey {
                let order = ByteOrder.compare(previousBytes, keyBytes)
                if order > 0 || (unique && order == 0) {
                    throw IndexOrderUnavailable(reason: "rows not in byte order in \(statement.sql)")
                }
                repeatsKey = order == 0
            }
        }
        hasPrevious = true
    }
}

/// Byte-wise comparison of UTF-8 text: the order of SQLite's BINARY collation.
enum ByteOrder {
    /// Negative, zero or positive as `a` (from byte `aOffset` on) sorts before, equal to, or after `b`.
    static func compare(_ a: [UInt8], from aOffset: Int = 0, _ b: [UInt8]) -> Int {
        a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in
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
