import Gatehouse
import Storage

extension SQLiteStoreEngine: RowCountEstimating {
    /// The table's rowid span, `max(rowid) - min(rowid) + 1`: two seeks down the table's b-tree, however big it is.
    ///
    /// It is an upper bound, exact for a table that was only appended to (users, accounts, the audit log): SQLite
    /// gives a new row the largest rowid plus one, so rows deleted at the old end (expired sessions) fall out of the
    /// span and only rows deleted in its middle are over-counted. `sqlite_stat1` is read only for a table without
    /// rowids: ANALYZE writes it, neither Gatehouse nor Better Auth runs ANALYZE, and a count from an ANALYZE of
    /// long ago would read as today's.
    func estimatedRows(_ db: SQLDatabase, table: String) throws -> Int? {
        try RowidSpan.estimate(db, table: table) { db in
            // A WITHOUT ROWID table: the row count of the last ANALYZE, if any.
            guard try db.tableExists("sqlite_stat1") else { return nil }
            let stat = try db.scalar("SELECT stat FROM sqlite_stat1 WHERE tbl = ? LIMIT 1", [table]).string
            return stat?.split(separator: " ").first.flatMap { Int($0) }
        }
    }
}
