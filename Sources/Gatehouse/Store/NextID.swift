import Storage

/// The id the next row of one of Gatehouse's tables (keyed by an integer `id`) takes, read inside the write that
/// inserts it: one writer at a time takes it (the engine's writer turn, or on D1 the guard on this read), and the
/// insert names it instead of asking for it back (`RETURNING`), which a store that sends a write's statements together
/// (D1) cannot answer. Every insert into such a table names its id, so an identity's sequence is never asked for a
/// value that a named one already took.
enum NextID {
    /// The read, for a caller that reads it together with its other reads (`SQLDatabase.snapshot`).
    static func statement(in table: String) -> SQLStatement {
        SQLStatement("SELECT coalesce(max(id), 0) + 1 FROM \(SQL.quote(table))")
    }

    /// The id `statement`'s rows give.
    static func id(_ rows: [Row]) -> Int64 {
        max(rows.first?[0].int64 ?? 0, 1)
    }
}

extension SQLDatabase {
    /// `NextID` for `table`, read on its own.
    func nextID(in table: String) throws -> Int64 {
        let statement = NextID.statement(in: table)
        return NextID.id(try rows(statement.sql, statement.arguments))
    }
}
