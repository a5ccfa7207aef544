import Storage

extension SQLDatabase {
    /// The id the next row of `table` (one of Gatehouse's, keyed by an integer `id`) takes, read inside the write
    /// that inserts it: one writer at a time takes it (the engine's writer turn, or on D1 the guard on this read), and
    /// the insert names it instead of asking for it back (`RETURNING`), which a store that sends a write's statements
    /// together (D1) cannot answer. Every insert into such a table names its id, so an identity's sequence is never
    /// asked for a value that a named one already took.
    func nextID(in table: String) throws -> Int64 {
        (try scalar("SELECT coalesce(max(id), 0) + 1 FROM \(SQLDialect.quote(table))").int64 ?? 0).clamped(atLeast: 1)
    }
}

private extension Int64 {
    func clamped(atLeast minimum: Int64) -> Int64 { Swift.max(self, minimum) }
}
