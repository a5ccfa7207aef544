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
    /// What this store's engine does its own way (`StoreEngine`), chosen by `location`.
    package let engine: any StoreEngine
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

    package init(location: StoreLocation, db: SQLDatabase, schema: AuthSchema, configuration: StoreConfiguration) {
        self.location = location
        self.engine = location.engine
        self.path = location.description
        self.db = db
        self.schema = schema
        self.configuration = configuration
    }

    /// Runs `body` with `prelude` waiting for the first snapshot it reads (`SnapshotPrelude`): read from the same
    /// snapshot, and on an engine a round trip away sent in the same trip.
    public func carrying<T>(_ prelude: SnapshotPrelude, _ body: () throws -> T) rethrows -> T {
        db.prelude = prelude
        defer { db.prelude = nil }
        return try body()
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
    package static var busyTimeout: Int32 { Int32(StoreTimeouts.command.busyMilliseconds) }

    /// Opens an initialised, up-to-date store. Refuses a missing file, a non-database, a store whose
    /// migrations are pending or were edited, and a Better Auth schema lacking columns Gatehouse needs. Waits on the
    /// store end after `timeouts`.
    public static func open(path: String, configurationPath: String? = nil, migrations: MigrationCatalog? = nil,
                            timeouts: StoreTimeouts = .command) throws -> Store {
        try open(path: path, configurationPath: configurationPath, migrations: migrations, timeouts: timeouts, startingWith: [])
    }

    /// `open`, for a service whose first reads (`reads`) depend on nothing but Gatehouse's own tables: the service
    /// names them (`PolicyStore.open`, `MergeApplier.open`), and the engine decides whether to send them with the
    /// opening's own (`SQLDatabase.readAhead`: where each question is a request) or to answer them when asked.
    package static func open(path: String, configurationPath: String? = nil, migrations: MigrationCatalog? = nil,
                             timeouts: StoreTimeouts = .command, startingWith reads: [SQLStatement]) throws -> Store {
        let location = try StoreLocation(path)
        let (db, configuration) = try location.engine.openChecked(configurationPath: configurationPath, timeouts: timeouts)
        return try open(location, db: db, configuration: configuration, migrations: migrations, readAhead: reads)
    }

    /// The part of opening that is the same on every engine: migrations up to date, Better Auth's schema read.
    private static func open(_ location: StoreLocation, db: SQLDatabase, configuration: StoreConfiguration,
                             migrations: MigrationCatalog?, readAhead: [SQLStatement]) throws -> Store {
        let catalog = try migrations ?? MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: db.dialect.migrationsFolder))
        // Where each question is a request (D1), the ones below go as one: the migrations applied, Better Auth's
        // columns, their date samples as Better Auth's own shape names them, and the caller's first reads.
        let watch = ApprovalWatch.current
        db.readAhead([Migrator.appliedStatement] + AuthSchema.likelySampleStatements(configuration: configuration) + readAhead
                        + (watch == nil ? [] : [ApprovalStore.settingsStatement]),
                     columnsOf: StoreConfiguration.betterAuthTables.map(configuration.tableName))
        let pending = try Migrator.pending(on: db, catalog.migrations)
        if !pending.isEmpty {
            let applied = try Migrator.applied(on: db)
            throw GatehouseError(applied.isEmpty ? "\(location) is not a Gatehouse store yet" : "\(location) needs \(pending.count) schema upgrade(s): \(pending.map(\.name).joined(separator: ", "))",
                                 fix: "run \(command: .`init`, .option(.store, location.description))")
        }
        let schema = try AuthSchema.inspect(db, configuration: configuration).get()
        let store = Store(location: location, db: db, schema: schema, configuration: configuration)
        try watch?.observe(store)
        return store
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

    /// Creates a store, or upgrades an existing database (Better Auth's or Gatehouse's) by adding only
    /// what is missing: `gatehouse_` tables and `gatehouse_` indexes; Better Auth's tables and rows are
    /// never altered. On a Better Auth database lacking a needed column it reports and changes nothing. The engine
    /// (`StoreEngine.initialize`) puts its own checks and transactions around the shared steps below.
    public static func initialize(path: String, configurationPath: String? = nil, actor: Actor,
                                  migrations: MigrationCatalog? = nil) throws -> (Store, InitReport) {
        try StoreLocation(path).engine.initialize(configurationPath: configurationPath, actor: actor, migrations: migrations)
    }

    /// Tables another tool keeps for its own bookkeeping in a database that is otherwise empty: wrangler's record of
    /// the D1 migrations it applied (`wrangler d1 migrations apply` makes it before any of the app's tables).
    package static let toolTables: Set<String> = ["d1_migrations"]

    /// What init checks on every engine before it writes anything: an existing Better Auth database has the columns
    /// Gatehouse needs, a database with tables but no `user` table is refused (most likely renamed tables without a
    /// mapping), and when `keyCustody` (the store existed) the master key it may hold sealed keys under is at hand.
    package static func checkBeforeWriting(_ db: SQLDatabase, named name: String, configuration: StoreConfiguration,
                                   applied before: [Migrator.Record], keyCustody: Bool) throws {
        let userTable = configuration.tableName("user")
        if try db.tableExists(userTable) {
            if case .failure(let problems) = try AuthSchema.inspect(db, configuration: configuration) { throw problems }
        } else if before.isEmpty, !(try db.tableNames().filter { !toolTables.contains($0) }.isEmpty) {
            // Better Auth's tables are only ever created in an empty database: tables without a `user`
            // table most likely mean renamed tables that the configuration does not map.
            throw GatehouseError("\(name) already holds tables but no Better Auth table \"\(userTable)\"; nothing was changed",
                                 fix: try renamedTablesHint(db))
        }
        if keyCustody {
            try MasterKey.checkCustody(db, storePath: name)
            try MasterKey.checkOpensSealed(db, storePath: name)
        }
    }

    /// What init does on every engine once the migrations ran: Better Auth's schema read, the `gatehouse_` indexes
    /// on Better Auth's tables (the one schema step a .sql migration cannot express: column names differ by shape),
    /// the name search index, the master key file when there is none, and one audit entry when anything changed.
    package static func recordInit(_ db: SQLDatabase, location: StoreLocation, configuration: StoreConfiguration, actor: Actor,
                           applied: [Migration], previouslyApplied: Int, action: String, created: Bool,
                           extraDetails: [String: AuditValue], journalSwitchedFrom: String?) throws -> (Store, InitReport) {
        let name = location.description
        let records = try Migrator.applied(on: db)
        let newIDs = Set(applied.map(\.id))
        let skipped = records.filter { newIDs.contains($0.id) && !$0.ran }.map(\.name)
        let schema = try AuthSchema.inspect(db, configuration: configuration).get()
        var indexes = try AccountIndexes.create(db, schema: schema)
        // The name search index is reported (and audited) when init creates it; bringing an existing one up to
        // date is upkeep, which `demo seed` and init on a busy store do without a `store.upgrade` entry each time. A
        // role that may not add triggers to the user table gets no index (name search scans) and no error.
        let searchIndexWasAbsent = try UserSearchIndex.status(db, schema: schema).state == .absent
        if case .built = try UserSearchIndex.ensure(db, schema: schema), searchIndexWasAbsent { indexes.append(UserSearchIndex.table) }
        let keyPath = try MasterKey.createIfMissing(storePath: name)
        let store = Store(location: location, db: db, schema: schema, configuration: configuration)
        if !applied.isEmpty || keyPath != nil || !indexes.isEmpty {
            try store.audit.append(db, actor: actor, action: action, subject: name, details: [
                "applied": .list(applied.map(\.name)), "skipped": .list(skipped), "previously_applied": .int(Int64(previouslyApplied)),
                "schema": .string(schema.shape), "master_key_created": .bool(keyPath != nil), "indexes_created": .list(indexes),
            ].merging(extraDetails) { first, _ in first })
        }
        return (store, InitReport(path: name, created: created, applied: applied.map(\.name).filter { !skipped.contains($0) },
                                  skipped: skipped, indexesCreated: indexes, shape: schema.shape, masterKeyCreated: keyPath,
                                  journalSwitchedFrom: journalSwitchedFrom))
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
