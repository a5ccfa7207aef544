import Gatehouse
import Storage

extension D1StoreEngine: RowCountEstimating {
    /// The table's rowid span, as on SQLite: two seeks in one request, where `count(*)` reads (and D1 bills) every row.
    func estimatedRows(_ db: SQLDatabase, table: String) throws -> Int? {
        try RowidSpan.estimate(db, table: table) { _ in nil }
    }

    /// Every table's span in one request; a table without rowids fails the batch, and then each is asked alone.
    func estimatedRows(_ db: SQLDatabase, tables: [String]) throws -> [String: Int] {
        do {
            let read = try db.snapshot(tables.map(RowidSpan.statement))
            return Dictionary(zip(tables, read.map { RowidSpan.span($0.first) }), uniquingKeysWith: { first, _ in first })
        } catch let error as SQLFailure where error.message.contains("rowid") {
            var found: [String: Int] = [:]
            for table in tables { if let estimate = try estimatedRows(db, table: table) { found[table] = estimate } }
            return found
        }
    }
}
