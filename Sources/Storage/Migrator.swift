/// One schema change, identified by its number.
public struct Migration: Sendable, Equatable {
    /// The number that orders migrations (1, 2, 3, ... with no gaps).
    public let id: Int
    /// A short name, from the file name (`0003_gatehouse_audit`).
    public let name: String
    /// The SQL script.
    public let sql: String
    /// A checksum of the script, recorded when it is applied and compared on every open.
    public let checksum: String

    public init(id: Int, name: String, sql: String, checksum: String) {
        self.id = id
        self.name = name
        self.sql = sql
        self.checksum = checksum
    }
}

/// Why a store's schema cannot be brought up to date.
public enum MigrationError: Error, CustomStringConvertible, Equatable {
    /// An applied migration's script has changed since it was applied.
    case edited(id: Int, name: String, recorded: String, current: String)
    /// The store records a migration this program does not know: a newer Gatehouse upgraded it.
    case unknown(id: Int, name: String)
    /// After migrating, `PRAGMA foreign_key_check` found rows that violate a foreign key.
    case foreignKeyViolations(count: Int, sample: String)

    public var description: String {
        switch self {
        case let .edited(id, name, recorded, current):
            return "migration \(id) (\(name)) was edited after it was applied to this store "
                + "(recorded checksum \(recorded.prefix(12))…, file now \(current.prefix(12))…); "
                + "restore the original file and put the change in a new, higher-numbered migration"
        case let .unknown(id, name):
            return "this store has migration \(id) (\(name)) applied, which this version of Gatehouse does not have; "
                + "use the newer Gatehouse that upgraded it"
        case let .foreignKeyViolations(count, sample):
            return "the schema change left \(count) foreign-key violations (first: \(sample)); nothing was changed"
        }
    }
}

/// Applies migrations in order, each once, each in its own `BEGIN IMMEDIATE` transaction, recording
/// each with its checksum in a table.
///
///     let applied = try Migrator().migrate(db, migrations)
public struct Migrator: Sendable {
    /// The table that records applied migrations.
    public let table: String

    public init(table: String = "gatehouse_migrations") {
        self.table = table
    }

    /// An applied migration as recorded.
    public struct Record: Sendable, Equatable {
        public let id: Int
        public let name: String
        public let checksum: String
        public let appliedAt: String
        /// False when the migration was recorded without running (its precondition said skip).
        public let ran: Bool

        public init(id: Int, name: String, checksum: String, appliedAt: String, ran: Bool) {
            self.id = id
            self.name = name
            self.checksum = checksum
            self.appliedAt = appliedAt
            self.ran = ran
        }

        /// A row of the records table (`id, name, checksum, applied_at, ran`), as either engine returns it.
        public init(row: Row) throws {
            self.init(id: try row.int("id"), name: try row.string("name"), checksum: try row.string("checksum"),
                      appliedAt: try row.string("applied_at"), ran: row.bool("ran"))
        }
    }

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

    /// The engine-neutral check: `migrations` not yet in `records`, in order; throws `MigrationError.edited` when a
    /// recorded migration's checksum changed, `.unknown` when the database holds one this build does not know.
    public static func pending(_ migrations: [Migration], applied records: [Record]) throws -> [Migration] {
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.id, $0) })
        for record in records {
            guard let migration = known[record.id] else { throw MigrationError.unknown(id: record.id, name: record.name) }
            if migration.checksum != record.checksum {
                throw MigrationError.edited(id: record.id, name: record.name, recorded: record.checksum, current: migration.checksum)
            }
        }
        let done = Set(records.map(\.id))
        return migrations.filter { !done.contains($0.id) }.sorted { $0.id < $1.id }
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

/// Migration records on either engine: SQLite's `Migrator` or Postgres's `PostgresMigrator`.
extension Migrator {
    /// The migrations applied to `db`, in order (none on a database Gatehouse never initialised).
    public static func applied(on db: SQLDatabase) throws -> [Record] {
        switch db {
        case let db as SQLiteDatabase: try Migrator().applied(db)
        case let db as PostgresConnection: try PostgresMigrator().applied(db)
        default: preconditionFailure("no migrator for \(type(of: db))")
        }
    }

    /// Checks applied migrations against `migrations` and returns those still to apply.
    public static func pending(on db: SQLDatabase, _ migrations: [Migration]) throws -> [Migration] {
        try pending(migrations, applied: try applied(on: db))
    }
}
