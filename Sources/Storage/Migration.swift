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
}

/// Migration records on any engine: every engine records applied migrations in the same table with the same columns
/// (`Migrator.Record(row:)` reads either's types), so reading them needs no engine's migrator.
extension Migrator {
    /// The migrations applied to `db`, in order (none on a database Gatehouse never initialised).
    public static func applied(on db: SQLDatabase) throws -> [Record] {
        guard try db.tableExists(Migrator().table) else { return [] }
        return try db.rows(appliedStatement.sql).map(Record.init(row:))
    }

    /// The read of the records (`applied(on:)`), for a caller that announces it ahead (`SQLDatabase.readAhead`).
    public static var appliedStatement: SQLStatement {
        SQLStatement("SELECT id, name, checksum, applied_at, ran FROM \(SQL.quote(Migrator().table)) ORDER BY id")
    }

    /// Checks applied migrations against `migrations` and returns those still to apply.
    public static func pending(on db: SQLDatabase, _ migrations: [Migration]) throws -> [Migration] {
        try pending(migrations, applied: try applied(on: db))
    }
}
