import Storage

/// Applies migrations to a Postgres database as `Migrator` does to SQLite: in order, each once, each in its own
/// transaction, recorded with its checksum in `gatehouse_migrations` (created in the first migration's
/// transaction, so a refused first migration leaves the database as it was).
///
/// Processes migrating the same database at once take turns on a transaction-scoped advisory lock (SQLite's
/// `BEGIN IMMEDIATE`), and each re-checks inside the lock that its migration is still pending. Postgres enforces
/// every foreign key as rows are written, so there is no check to run afterwards.
///
///     let applied = try PostgresMigrator().migrate(db, migrations, now: Timestamp.now().iso8601)
public struct PostgresMigrator: Sendable {
    /// The table that records applied migrations (in the connection's current schema).
    public let table: String

    /// The advisory lock key migrations take: the ASCII bytes of "gatehous", unlikely to be any other lock's key.
    static let lockKey: Int64 = 0x6761_7465_686F_7573

    public init(table: String = "gatehouse_migrations") {
        self.table = table
    }

    /// The migrations already applied, in order. Empty when the table does not exist yet.
    public func applied(_ db: PostgresConnection) throws -> [Migrator.Record] {
        guard try db.tableExists(table) else { return [] }
        return try db.rows("SELECT id, name, checksum, applied_at, ran FROM \(PostgresConnection.quote(table)) ORDER BY id")
            .map(Migrator.Record.init(row:))
    }

    /// Checks applied migrations against `migrations` and returns those still to apply.
    /// Throws `MigrationError.edited` when an applied one changed, `.unknown` when the database is ahead.
    public func pending(_ db: PostgresConnection, _ migrations: [Migration]) throws -> [Migration] {
        try Migrator.pending(migrations, applied: try applied(db))
    }

    /// Applies every pending migration and returns those applied. `shouldRun` may decide that a migration is
    /// recorded without running (Better Auth's tables already exist); it runs inside the migration's transaction.
    @discardableResult
    public func migrate(_ db: PostgresConnection, _ migrations: [Migration], now: String,
                        shouldRun: (Migration, PostgresConnection) throws -> Bool = { _, _ in true }) throws -> [Migration] {
        let quoted = PostgresConnection.quote(table)
        var appliedNow: [Migration] = []
        for migration in try pending(db, migrations) {
            try db.write {
                try db.execute("SELECT pg_advisory_xact_lock($1)", [Self.lockKey])
                try db.executeScript("""
                    CREATE TABLE IF NOT EXISTS \(quoted) (
                        id integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
                        applied_at text NOT NULL, ran boolean NOT NULL DEFAULT true)
                    """)
                // Re-check inside the lock: another process may have applied it meanwhile.
                let recorded = try db.row("SELECT checksum FROM \(quoted) WHERE id = $1", [migration.id])
                if let recorded {
                    let checksum = try recorded.string("checksum")
                    guard checksum == migration.checksum else {
                        throw MigrationError.edited(id: migration.id, name: migration.name, recorded: checksum, current: migration.checksum)
                    }
                    return
                }
                let run = try shouldRun(migration, db)
                if run { try db.executeScript(migration.sql) }
                try db.execute("INSERT INTO \(quoted) (id, name, checksum, applied_at, ran) VALUES ($1, $2, $3, $4, $5 <> 0)",
                               [migration.id, migration.name, migration.checksum, now, run])
                appliedNow.append(migration)
            }
        }
        return appliedNow
    }
}
