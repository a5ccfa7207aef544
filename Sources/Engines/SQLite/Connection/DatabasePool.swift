import Storage

/// Connections to one database file for code that runs on several threads at once.
///
/// Each connection is checked out by one thread at a time, so a connection never crosses threads
/// while in use. SQLite's WAL mode lets the readers run in parallel with the one writer.
///
///     let pool = try DatabasePool(path: path, maximumConnections: 4)
///     let count = try pool.withConnection { db in try db.scalar("SELECT count(*) FROM user") }
public final class DatabasePool: Sendable {
    /// The file the pool's connections open.
    public let path: String
    private let pool: ResourcePool<SQLiteDatabase>

    /// Opens one connection now (so a bad path fails here) and up to `maximumConnections` on demand.
    public init(path: String, options: SQLiteDatabase.Options = SQLiteDatabase.Options(), maximumConnections: Int = 4) throws {
        self.path = path
        pool = try ResourcePool(size: maximumConnections, make: { try SQLiteDatabase(path: path, options: options) },
                                tidy: { $0.rollBackAbandonedTransaction() })
    }

    /// Runs `body` with a connection no other thread uses until it returns.
    public func withConnection<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try pool.withResource(body)
    }
}
