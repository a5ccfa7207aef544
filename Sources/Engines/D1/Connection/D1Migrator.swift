import Storage

/// Applies migrations to a D1 database as `Migrator` does to SQLite, without `BEGIN`: each pending migration is one
/// request holding its statements and its record in `gatehouse_migrations`, so D1 runs them all or none. Two inits
/// at once cannot both apply one: the second's record collides on the migration's id and its whole request changes
/// nothing. D1 enforces every foreign key as rows are written, so there is no check to run afterwards.
public struct D1Migrator: Sendable {
    public let table: String

    public init(table: String = "gatehouse_migrations") {
        self.table = table
    }

    /// Applies every pending migration and returns those applied. `shouldRun` may decide that a migration is
    /// recorded without running (Better Auth's tables already exist).
    @discardableResult
    public func migrate(_ db: D1Connection, _ migrations: [Migration], now: String,
                        shouldRun: (Migration, SQLDatabase) throws -> Bool = { _, _ in true }) throws -> [Migration] {
        let quoted = SQL.quote(table)
        var appliedNow: [Migration] = []
        for migration in try Migrator.pending(on: db, migrations) {
            let run = try shouldRun(migration, db)
            try db.write {
                try db.execute("""
                    CREATE TABLE IF NOT EXISTS \(quoted) (
                        id INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL,
                        applied_at TEXT NOT NULL, ran INTEGER NOT NULL DEFAULT 1)
                    """, [])
                if run { try db.executeScript(migration.sql) }
                try db.execute("INSERT INTO \(quoted) (id, name, checksum, applied_at, ran) VALUES (?, ?, ?, ?, ?)",
                               [migration.id, migration.name, migration.checksum, now, run])
            }
            appliedNow.append(migration)
        }
        return appliedNow
    }
}
