import Storage

/// An engine that can say about how many rows a table holds from what it already keeps (SQLite's rowids, Postgres's
/// planner statistics), without reading the table: `status` answers at once on a store of any size.
///
/// A capability the engines answer beside `StoreEngine` (`SQLiteStoreEngine`, `PostgresStoreEngine` in
/// `Engines/<Engine>/`); an engine without it has its rows counted.
///
///     if let estimator = store.engine as? RowCountEstimating { try estimator.estimatedRows(store.db, table: "user") }
protocol RowCountEstimating {
    /// About how many rows `table` holds, or nil when the engine has nothing to estimate from (the caller counts).
    func estimatedRows(_ db: SQLDatabase, table: String) throws -> Int?
}
