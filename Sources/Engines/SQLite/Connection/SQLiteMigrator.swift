import Storage

/// SQLite's half of `Migrator`: each migration in its own `BEGIN IMMEDIATE` transaction, then SQLite's foreign-key
/// check of what it touched (Postgres's is `PostgresMigrator`).
extension Migrator {
    /// The migrations already applied, in order. Empty when the table does not exist yet.
    public func applied(_ db: SQLiteDatabase) throws -> [Record] {
        guard try db.tableExists(table) else { return [] }
        return try db.rows("SELECT id, name, checksum, applied_at, ran FROM \(SQLiteDatabase.quote(table)) ORDER BY id").map(Record.init(row:))
    }

    /// Checks applied migrations against `migrations` and returns those still to apply.
    /// Throws when an applied one was edited or is unknown.
    public func pending(_ db: SQLiteDatabase, _ migrations: [Migration]) throws -> [Migration] {
        try Self.pending(migrations, applied: try applied(db))
    }

    /// Applies every pending migration. `shouldRun` may decide that a migration is recorded without
    /// running (for example: Better Auth's tables already exist). Returns the migrations applied.
    ///
    /// The table of records is created in the first migration's transaction, so a refused first migration
    /// leaves the database as it was. A migration fails only on foreign-key violations it adds: rows that
    /// already broke a foreign key (a Better Auth store whose drivers never enforced them) are reported by
    /// the integrity checks, not held against a schema change that did not touch them.
    @discardableResult
    public func migrate(_ db: SQLiteDatabase, _ migrations: [Migration], now: String,
                        shouldRun: (Migration, SQLiteDatabase) throws -> Bool = { _, _ in true }) throws -> [Migration] {
        var appliedNow: [Migration] = []
        for migration in try pending(db, migrations) {
            try db.write {
                try db.execute("""
                CREATE TABLE IF NOT EXISTS \(SQLiteDatabase.quote(table)) (
                    id INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL,
                    applied_at TEXT NOT NULL, ran INTEGER NOT NULL DEFAULT 1)
                """)
                // Re-check inside the lock: another process may have applied it meanwhile.
                let already = try db.scalar("SELECT count(*) FROM \(SQLiteDatabase.quote(table)) WHERE id = ?", [migration.id]).int64 ?? 0
                guard already == 0 else { return }
                let run = try shouldRun(migration, db)
                if run { try runChecked(migration, db) }
                try db.execute("INSERT INTO \(SQLiteDatabase.quote(table)) (id, name, checksum, applied_at, ran) VALUES (?, ?, ?, ?, ?)",
                               [migration.id, migration.name, migration.checksum, now, run])
                appliedNow.append(migration)
            }
        }
        return appliedNow
    }

    /// Runs a migration's script, then checks the foreign keys of the tables it created or changed against
    /// what those tables held before. Existing tables the script names are counted before it runs; a table
    /// the script does not name and whose schema it does not change cannot have gained a violation from it.
    func runChecked(_ migration: Migration, _ db: SQLiteDatabase) throws {
        let schemaBefore = try schemaByTable(db)
        let script = migration.sql.lowercased()
        let named = schemaBefore.keys.filter { script.contains($0.lowercased()) }
        var before: [String: Int] = [:]
        for table in named { before[table] = try violations(db, in: table).count }
        try db.executeScript(migration.sql)
        let schemaAfter = try schemaByTable(db)
        let touched = Set(named).union(schemaAfter.keys.filter { schemaBefore[$0] != schemaAfter[$0] })
        for table in touched.sorted() where schemaAfter[table] != nil {
            let found = try violations(db, in: table)
            let added = found.count - (before[table] ?? 0)
            if added > 0, let first = found.first {
                throw MigrationError.foreignKeyViolations(count: added, sample: "table \(table) rowid \(first)")
            }
        }
    }

    /// Each table's schema text with its indexes' and triggers', to see which tables a script changed.
    func schemaByTable(_ db: SQLiteDatabase) throws -> [String: String] {
        var schema: [String: String] = [:]
        try db.forEach("SELECT tbl_name, type, name, sql FROM sqlite_master WHERE tbl_name NOT LIKE 'sqlite_%' ORDER BY tbl_name, type, name") { row in
            let table = row[0].string ?? ""
            schema[table, default: ""] += "\(row[1].string ?? "") \(row[2].string ?? "") \(row[3].string ?? "");"
        }
        return schema
    }

    /// The rowids of `table`'s rows that break one of its foreign keys.
    func violations(_ db: SQLiteDatabase, in table: String) throws -> [String] {
        try db.rows("PRAGMA foreign_key_check(\(SQLiteDatabase.quote(table)))").map { $0[1].string ?? $0[1].int64.map(String.init) ?? "?" }
    }
}
