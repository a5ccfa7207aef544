import Foundation

/// Connections to one database file for code that runs on several threads at once.
///
/// Each connection is checked out by one thread at a time, so a connection never crosses threads
/// while in use. SQLite's WAL mode lets the readers run in parallel with the one writer.
///
///     let pool = try DatabasePool(path: path, maximumConnections: 4)
///     let count = try pool.withConnection { db in try db.scalar("SELECT count(*) FROM user") }
public final class DatabasePool: @unchecked Sendable {
    /// The file the pool's connections open.
    public let path: String
    private let options: Database.Options
    private let maximumConnections: Int
    private let condition = NSCondition()
    private var idle: [Database] = []
    private var open = 0

    /// Opens one connection now (so a bad path fails here) and up to `maximumConnections` on demand.
    public init(path: String, options: Database.Options = Database.Options(), maximumConnections: Int = 4) throws {
        self.path = path
        self.options = options
        self.maximumConnections = max(1, maximumConnections)
        idle.append(try Database(path: path, options: options))
        open = 1
    }

    /// Runs `body` with a connection no other thread uses until it returns.
    public func withConnection<T>(_ body: (Database) throws -> T) throws -> T {
        let database = try checkOut()
        defer { checkIn(database) }
        return try body(database)
    }

    private func checkOut() throws -> Database {
        condition.lock()
        while idle.isEmpty && open >= maximumConnections { condition.wait() }
        if let database = idle.popLast() {
            condition.unlock()
            return database
        }
        open += 1
        condition.unlock()
        do {
            return try Database(path: path, options: options)
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ database: Database) {
        condition.lock()
        // A connection returned mid-transaction (a bug in the caller) must not leak its lock.
        if database.isInTransaction { try? database.executeScript("ROLLBACK") }
        idle.append(database)
        condition.signal()
        condition.unlock()
    }
}
