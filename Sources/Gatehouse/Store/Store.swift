import Foundation
import Storage

/// An open Gatehouse store: one database — a SQLite file, or a Postgres database — holding Better Auth's tables,
/// the sync server's and Gatehouse's own, with the schema map that lets every service query it.
///
/// This is where the engine is chosen (`StoreLocation`); everything past it reads and writes `db`, an
/// `SQLDatabase`, without asking which engine it is.
///
///     let store = try Store.open(path: "auth.sqlite")          // or "postgresql://ops@db/auth"
///     let users = try store.db.scalar("SELECT count(*) FROM \(store.schema.user.sql)")
public final class Store {
    /// The store as messages name it: the file's path, or the connection URI with its password replaced.
    public let path: String
    /// Where the store is, to open more connections to it.
    public let location: StoreLocation
    /// The connection. A `Store` belongs to one thread at a time, like its connection.
    public let db: SQLDatabase
    /// Better Auth's tables as this database has them.
    public let schema: AuthSchema
    /// Table renames and other per-store settings.
    public let configuration: StoreConfiguration
    /// The audit log.
    public let audit = AuditLog()
    /// Tables whose presence was asked recently, with when (`existingTables(_:lifetime:fresh:)`).
    private var presence: (names: [String], present: Set<String>, asked: DispatchTime)?

    init(location: StoreLocation, db: SQLDatabase, schema: AuthSchema, configuration: StoreConfiguration) {
        self.location = location
        self.path = location.description
        self.db = db
        self.schema = schema
        self.configuration = configuration
    }

    /// Which of `names` exist, asked of the database at most once per `lifetime` (a console answers many requests
    /// on one store; a table appears or goes away rarely). `fresh` asks again now.
    func existingTables(_ names: [String], lifetime seconds: UInt64 = 5, fresh: Bool = false) throws -> Set<String> {
        let now = DispatchTime.now()
        if !fresh, let known = presence, known.names == names, now.uptimeNanoseconds - known.asked.uptimeNanoseconds < seconds * 1_000_000_000 {
            return known.present
        }
        let present = try db.existingTables(names)
        presence = (names, present, now)
        return present
    }

    /// How long a command waits for another process's write lock (`GATEHOUSE_BUSY_TIMEOUT_MS`, default 15 s).
    static var busyTimeout: Int32 { Int32(StoreTimeouts.command.busyMilliseconds) }

    /// Opens an initialised, up-to-date store. Refuses a missing file, a non-database, a store whose
    /// migrations are pending or were edited, and a Better Auth schema lacking columns Gatehouse needs. Waits on the
    /// store end after `timeouts`.
    public static func open(path: String, configurationPath: String? = nil, migrations: MigrationCatalog? = nil,
                            timeouts: StoreTimeouts = .command) throws -> Store {
        let location = try StoreLocation(path)
        if case .postgres(let uri) = location {
            let configuration = try StoreConfiguration.load(storePath: nil, explicitPath: configurationPath)
            let db = try PostgresConnection(uri: uri, limits: timeouts.postgres)
            return try open(location, db: db, configuration: configuration, migrations: migrations)
        }
        try checkFile(path, mustExist: true)
        let configuration = try StoreConfiguration.load(storePath: path, explicitPath: configurationPath)
        // On a read-only filesystem nothing can change the file and SQLite cannot create a WAL store's -shm:
        // read it as immutable, so read commands still work (and writes fail as read-only).
        var options = SQLiteDatabase.Options(busyTimeoutMilliseconds: Int32(timeouts.busyMilliseconds))
        options.immutable = FileStatus.isOnReadOnlyFilesystem(path)
        if options.immutable, let wal = FileStatus(path + "-wal"), wal.size > 0 {
            // An immutable open reads the main file alone: the commits still in the WAL would be silently missing.
            throw GatehouseError("the store \(path) is on a read-only filesystem and its -wal file holds \(wal.size) bytes of commits not yet in the main file, which cannot be read there",
                                 fix: "copy the store with its -wal file to a writable folder and open the copy", code: .readOnly)
        }
        let db = try SQLiteDatabase(path: path, options: options)
        return try open(location, db: db, configuration: configuration, migrations: migrations)
    }

    /// The part of opening that is the same on every engine: migrations up to date, Better Auth's schema read.
    private static func open(_ location: StoreLocation, db: SQLDatabase, configuration: StoreConfiguration,
                             migrations: MigrationCatalog?) throws -> Store {
        let catalog = try migrations ?? MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: db.engine))
        let pending = try Migrator.pending(on: db, catalog.migrations)
        if !pending.isEmpty {
            let applied = try Migrator.applied(on: db)
            throw GatehouseError(applied.isEmpty ? "\(location) is not a Gatehouse store yet" : "\(location) needs \(pending.count) schema upgrade(s): \(pending.map(\.name).joined(separator: ", "))",
                                 fix: "run \(command: .`init`, .option(.store, location.description))")
        }
        let schema = try AuthSchema.inspect(db, configuration: configuration).get()
        return Store(location: location, db: db, schema: schema, configuration: configuration)
    }

    /// What `initialize` did.
    public struct InitReport: Sendable, Codable {
        public let path: String
        public let created: Bool
        public let applied: [String]
        public let skipped: [String]
        /// `gatehouse_`-named indexes added to Better Auth's tables for Gatehouse's lookups.
        public let indexesCreated: [String]
        public let shape: String
        public let masterKeyCreated: String?
        /// The journal mode an existing database had when init switched it to WAL (nil when it was already WAL).
        public let journalSwitchedFrom: String?
        /// What init found that an operator should look into (on a server: objects that shadow Gatehouse's, see
        /// `SQLDatabase.schemaShadows`).
        public var warnings: [String] = []
    }

    /// Refuses a damaged database before anything is written to it: `PRAGMA quick_check` reads every page
    /// (seconds on a store of gigabytes; init is rare, and upgrading a damaged file would bury the damage).
    static func checkIntegrity(_ db: SQLDatabase, path: String) throws {
        let problems: [String]
        do {
            problems = try db.rows("PRAGMA quick_check(5)").compactMap(\.[0].string)
                .flatMap { $0.split(separator: "\n").map(String.init) }.filter { $0 != "ok" && !$0.hasPrefix("*** in database") }
        } catch let error as DatabaseError where error.isCorruption {
            problems = [error.message]
        }
        guard let first = problems.first else { return }
        throw GatehouseError("the store \(path) is damaged: \(first.prefix(200))\(problems.count > 1 ? " (and \(problems.count - 1) more problem(s))" : ""); nothing was changed",
                             fix: "restore it from a backup, or recover what is readable with `sqlite3 \(path) .recover` into a new file", code: .corrupt)
    }

    /// Creates a store, or upgrades an existing database (Better Auth's or Gatehouse's) by adding only
    /// what is missing: `gatehouse_` tables and `gatehouse_` indexes; Better Auth's tables and rows are
    /// never altered. On a Better Auth database lacking a needed column it reports and changes nothing.
    public static func initialize(path: String, configurationPath: String? = nil, actor: Actor,
                                  migrations: MigrationCatalog? = nil) throws -> (Store, InitReport) {
        if case .postgres(let uri) = try StoreLocation(path) {
            return try initialize(postgres: uri, configurationPath: configurationPath, actor: actor, migrations: migrations)
        }
        try checkFile(path, mustExist: false)
        let configuration = try StoreConfiguration.load(storePath: path, explicitPath: configurationPath)
        let catalog = try migrations ?? MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory())
        let existed = FileManager.default.fileExists(atPath: path)
        // An existing database is opened in its own journal mode: a refused init leaves the file byte for byte
        // as it was. It is switched to WAL only once every check has passed.
        let db = try SQLiteDatabase(path: path, options: .init(create: true, busyTimeoutMilliseconds: busyTimeout, journalModeWAL: !existed))
        do {
            if existed { try checkIntegrity(db, path: path) }
            let before = try Migrator.applied(on: db)
            // An existing Better Auth database is checked before anything is written to it.
            let userTable = configuration.tableName("user")
            if try db.tableExists(userTable) {
                if case .failure(let problems) = try AuthSchema.inspect(db, configuration: configuration) { throw problems }
            } else if before.isEmpty, !(try db.tableNames().isEmpty) {
                // Better Auth's tables are only ever created in an empty database: tables without a `user`
                // table most likely mean renamed tables that the configuration does not map.
                throw GatehouseError("\(path) already holds tables but no Better Auth table \"\(userTable)\"; nothing was changed",
                                     fix: try renamedTablesHint(db))
            }
            if existed {
                try MasterKey.checkCustody(db, storePath: path)
                try MasterKey.checkOpensSealed(db, storePath: path)
            }
            let previousJournal = try db.journalMode()
            let switchedToWAL = try existed && db.switchToWAL()
            let now = Timestamp.now().iso8601
            let unless = catalog.unlessTable
            let applied = try Migrator().migrate(db, catalog.migrations, now: now) { migration, db in
                guard let table = unless[migration.id] else { return true }
                let physical = StoreConfiguration.betterAuthTables.contains(table) ? configuration.tableName(table) : table
                return try !db.tableExists(physical)
            }
            let records = try Migrator.applied(on: db)
            let newIDs = Set(applied.map(\.id))
            let skipped = records.filter { newIDs.contains($0.id) && !$0.ran }.map(\.name)
            let schema = try AuthSchema.inspect(db, configuration: configuration).get()
            // The indexes Gatehouse's lookups need on Better Auth's tables, under gatehouse_ names. They are
            // the one schema step a .sql migration cannot express: column names differ by shape.
            var indexes = try AccountIndexes.create(db, schema: schema)
            // The name search index is reported (and audited) when init creates it; bringing an existing one up to
            // date is upkeep, which `demo seed` and init on a busy store do without a `store.upgrade` entry each time.
            let searchIndexWasAbsent = try UserSearchIndex.status(db, schema: schema).state == .absent
            if case .built = try UserSearchIndex.ensure(db, schema: schema), searchIndexWasAbsent { indexes.append(UserSearchIndex.table) }
            let keyPath = try MasterKey.createIfMissing(storePath: path)
            let store = Store(location: .file(path), db: db, schema: schema, configuration: configuration)
            if !applied.isEmpty || keyPath != nil || !indexes.isEmpty {
                try store.audit.append(db, actor: actor, action: existed ? "store.upgrade" : "store.init", subject: path, details: [
                    "applied": .list(applied.map(\.name)), "skipped": .list(skipped), "previously_applied": .int(Int64(before.count)),
                    "schema": .string(schema.shape), "master_key_created": .bool(keyPath != nil), "indexes_created": .list(indexes),
                ].merging(switchedToWAL ? ["journal_switched_from": .string(previousJournal)] : [:]) { first, _ in first })
            }
            return (store, InitReport(path: path, created: !existed, applied: applied.map(\.name).filter { !skipped.contains($0) },
                                      skipped: skipped, indexesCreated: indexes, shape: schema.shape, masterKeyCreated: keyPath,
                                      journalSwitchedFrom: switchedToWAL ? previousJournal : nil))
        } catch {
            if !existed {
                // A store this call created and could not finish is removed, not left half-made.
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
            throw error
        }
    }

    /// `initialize` on a Postgres database: the same checks before anything is written (Better Auth's columns, tables
    /// that may be renamed ones, key custody), then the pending migrations under the migration lock, Gatehouse's
    /// indexes on Better Auth's tables, and one audit entry. Better Auth's tables and rows are never altered.
    private static func initialize(postgres uri: PostgresURI, configurationPath: String?, actor: Actor,
                                   migrations: MigrationCatalog?) throws -> (Store, InitReport) {
        let location = StoreLocation.postgres(uri)
        let configuration = try StoreConfiguration.load(storePath: nil, explicitPath: configurationPath)
        let catalog = try migrations ?? MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: .postgres))
        let db = try PostgresConnection(uri: uri, limits: StoreTimeouts.command.postgres)
        if db.isReadOnly {
            throw GatehouseError("the store \(location) is read-only (a standby, or default_transaction_read_only is on); nothing was changed",
                                 fix: "run init against the primary", code: .readOnly)
        }
        // Postgres changes its schema in transactions: the whole init is one, so a refused or failed init leaves the
        // database as it was (the writer lock is taken first, so two inits take turns).
        return try db.write { try initialize(postgres: db, location: location, configuration: configuration, catalog: catalog, actor: actor) }
    }

    private static func initialize(postgres db: PostgresConnection, location: StoreLocation, configuration: StoreConfiguration,
                                   catalog: MigrationCatalog, actor: Actor) throws -> (Store, InitReport) {
        let before = try Migrator.applied(on: db)
        let userTable = configuration.tableName("user")
        let existed = !(try db.tableNames().isEmpty)
        if try db.tableExists(userTable) {
            if case .failure(let problems) = try AuthSchema.inspect(db, configuration: configuration) { throw problems }
        } else if before.isEmpty, existed {
            throw GatehouseError("\(location) already holds tables but no Better Auth table \"\(userTable)\"; nothing was changed",
                                 fix: try renamedTablesHint(db))
        }
        let storeName = location.description
        if existed {
            try MasterKey.checkCustody(db, storePath: storeName)
            try MasterKey.checkOpensSealed(db, storePath: storeName)
        }
        let applied = try catalog.migrate(postgres: db, configuration: configuration, now: Timestamp.now().iso8601)
        let records = try Migrator.applied(on: db)
        let newIDs = Set(applied.map(\.id))
        let skipped = records.filter { newIDs.contains($0.id) && !$0.ran }.map(\.name)
        let schema = try AuthSchema.inspect(db, configuration: configuration).get()
        var indexes = try AccountIndexes.create(db, schema: schema)
        // As on SQLite: reported when init creates the name search index, folded quietly otherwise. A role that may
        // not add triggers to the user table gets no index (name search scans on the server) and no error.
        let searchIndexWasAbsent = try UserSearchIndex.status(db, schema: schema).state == .absent
        if case .built = try UserSearchIndex.ensure(db, schema: schema), searchIndexWasAbsent { indexes.append(UserSearchIndex.table) }
        let keyPath = try MasterKey.createIfMissing(storePath: storeName)
        let store = Store(location: location, db: db, schema: schema, configuration: configuration)
        if !applied.isEmpty || keyPath != nil || !indexes.isEmpty {
            try store.audit.append(db, actor: actor, action: before.isEmpty && !existed ? "store.init" : "store.upgrade", subject: storeName, details: [
                "applied": .list(applied.map(\.name)), "skipped": .list(skipped), "previously_applied": .int(Int64(before.count)),
                "schema": .string(schema.shape), "master_key_created": .bool(keyPath != nil), "indexes_created": .list(indexes),
            ])
        }
        var report = InitReport(path: storeName, created: !existed, applied: applied.map(\.name).filter { !skipped.contains($0) },
                                skipped: skipped, indexesCreated: indexes, shape: schema.shape, masterKeyCreated: keyPath,
                                journalSwitchedFrom: nil)
        report.warnings = try db.schemaShadows(prefix: "gatehouse_").map(\.description)
        return (store, report)
    }

    /// Points at tables that look like Better Auth's `user` table under another name.
    static func renamedTablesHint(_ db: SQLDatabase) throws -> String {
        let candidates = try db.tableNames().filter { table in
            let columns = Set(try db.columns(of: table).map(\.name))
            return columns.contains("email") && (columns.contains("emailVerified") || columns.contains("email_verified"))
        }
        let example = candidates.first.map { #"{"tables": {"user": "\#($0)", ...}}"# } ?? #"{"tables": {"user": "auth_user", ...}}"#
        let found = candidates.isEmpty ? "" : "tables that look like Better Auth's user table: \(candidates.joined(separator: ", ")); "
        return found + "map renamed tables in gatehouse.json beside the store (or \(field: .config) FILE), e.g. \(example)"
    }

    static func checkFile(_ path: String, mustExist: Bool) throws {
        guard !path.isEmpty else { throw GatehouseError.invalid("the store path is empty", fix: "pass \(field: .store) FILE or set GATEHOUSE_STORE") }
        let status = FileStatus(path)
        let exists = status != nil
        if let status, status.isDirectory {
            throw GatehouseError.invalid("the store \(path) is a directory", fix: "pass the SQLite file inside it, e.g. \(field: .store) \(path)/gatehouse.sqlite")
        }
        try InputFile.requireRegular(path, what: "the store")
        if !exists && mustExist {
            throw GatehouseError.notFound("no store at \(path)", fix: "check \(field: .store) / GATEHOUSE_STORE, or create one with \(command: .`init`, .option(.store, path))")
        }
        if exists && !FileStatus.isReadable(path) {
            throw GatehouseError("the store \(path) is not readable by this user", fix: "run as the store's owner, or fix its permissions")
        }
        if let size = status?.size, size > 0 && size < 512 {
            throw GatehouseError("the store \(path) is truncated (\(size) bytes; a SQLite file is at least 512)",
                                 fix: "restore it from a backup")
        }
        if !exists {
            let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
            guard FileManager.default.fileExists(atPath: parent) else {
                throw GatehouseError.notFound("the folder \(parent) for the store does not exist", fix: "create it first: mkdir -p \(parent)")
            }
        }
    }

    /// Runs a write transaction that also appends an audit entry for it.
    public func change<T>(actor: Actor, action: String, subject: String?, details: [String: AuditValue] = [:],
                          _ body: () throws -> T) throws -> T {
        try db.write {
            let result = try body()
            try audit.append(db, actor: actor, action: action, subject: subject, details: details)
            return result
        }
    }
}
