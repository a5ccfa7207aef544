import Storage

/// An engine that can say about how many rows a table holds from what it already keeps (SQLite's rowids, Postgres's
/// planner statistics), without reading the table: `status` answers at once on a store of any size.
///
/// An engine hands one out (`StoreEngine.rowEstimator`), or nil to have its rows counted.
///
///     if let estimator = store.engine.rowEstimator { try estimator.estimatedRows(store.db, table: "user") }
package protocol RowCountEstimating {
    /// About how many rows `table` holds, or nil when the engine has nothing to estimate from (the caller counts).
    func estimatedRows(_ db: SQLDatabase, table: String) throws -> Int?
    /// `estimatedRows` for several tables (those it has nothing for left out): an engine a round trip away answers
    /// them together.
    func estimatedRows(_ db: SQLDatabase, tables: [String]) throws -> [String: Int]
}

extension RowCountEstimating {
    /// One table after another.
    package func estimatedRows(_ db: SQLDatabase, tables: [String]) throws -> [String: Int] {
        var found: [String: Int] = [:]
        for table in tables { if let estimate = try estimatedRows(db, table: table) { found[table] = estimate } }
        return found
    }
}

/// A table's rowid span, `max(rowid) - min(rowid) + 1`: two seeks down its b-tree, however big it is — the estimate of
/// the engines that speak SQLite's SQL (SQLite, D1). An upper bound, exact for a table that was only appended to.
package enum RowidSpan {
    /// The statement that reads a table's span: its largest rowid, then its smallest.
    package static func statement(_ table: String) -> SQLStatement {
        let name = SQL.quote(table)
        return SQLStatement("SELECT (SELECT max(rowid) FROM \(name)), (SELECT min(rowid) FROM \(name))")
    }

    /// The span a `statement` row gives.
    package static func span(_ row: Row?) -> Int {
        guard let row, let high = row[0].int64, let low = row[1].int64 else { return 0 }
        let (width, overflow) = high.subtractingReportingOverflow(low)
        return overflow || width == .max ? Int.max : Int(width) + 1
    }

    /// The span of `table`, or what `withoutRowid` says for a table that has no rowid.
    package static func estimate(_ db: SQLDatabase, table: String, withoutRowid: (SQLDatabase) throws -> Int?) throws -> Int? {
        let statement = statement(table)
        do {
            return span(try db.row(statement.sql, statement.arguments))
        } catch let error as SQLFailure where error.message.contains("rowid") {
            return try withoutRowid(db)
        }
    }
}
