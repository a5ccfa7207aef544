import Foundation
import Gatehouse
import Storage

/// An offline copy of a store, as `wrangler d1 export DATABASE --remote --output FILE.sql` writes one (SQL text: the
/// tables and their rows): loaded into an in-memory SQLite database each time a command opens it, then read-only
/// (`PRAGMA query_only`), so every read job works for someone without an API token and no write can be mistaken for
/// one on the live database. `--store FILE.sql` picks it.
struct SQLDumpStoreEngine: StoreEngine {
    /// The dump, as `--store` gave it.
    let path: String

    /// A path ending in `.sql`.
    static func claims(_ text: String) -> Bool { text.lowercased().hasSuffix(".sql") }
    static var namesServer: Bool { false }
    static var uriSchemes: [String] { [] }
    static var uriHint: String? { nil }
    static var dialectName: String { SQLiteDialect().name }
    init(location text: String) throws { path = text }
    var shownLocation: String { path }
    static func passwordRange(inArgument argument: [UInt8]) -> Range<Int>? { nil }
    /// Loaded into memory: counting is as quick as estimating.
    var rowEstimator: (any RowCountEstimating)? { nil }
    var rowsPerWrite: Int? { nil }
    var accountSweep: AccountSweep? { SQLiteAccountSweep() }
    func mergeScript(_ plan: MergePlan, at time: Timestamp) throws -> String { try MergeSQLEmitter.sqliteScript(for: plan, at: time) }
    var hasSearchPath: Bool { false }
    var connectionsAreShared: Bool { false }
    /// Beside the dump (`FILE.sql.key`): a copy of the live store's key, when sealed values must be read.
    var masterKeyPath: String { path + ".key" }
    var createsPrivateKeyFolder: Bool { false }

    /// The largest dump loaded: it is held in memory.
    static let maxBytes = 2 << 30

    func freeConnections(_ db: SQLDatabase) throws -> Int? { nil }

    func connect(readOnly: Bool, timeouts: StoreTimeouts) throws -> SQLDatabase {
        try load()
    }

    func openChecked(configurationPath: String?, timeouts: StoreTimeouts) throws -> (SQLDatabase, StoreConfiguration) {
        let configuration = try StoreConfiguration.load(storePath: path, explicitPath: configurationPath)
        return (try load(), configuration)
    }

    /// The dump in a new in-memory database, made read-only.
    private func load() throws -> SQLDatabase {
        guard let status = FileStatus(path), !status.isDirectory else {
            throw GatehouseError.notFound("no offline copy at \(path)", fix: "export one with `wrangler d1 export DATABASE --remote --output \(path)`")
        }
        try InputFile.requireRegular(path, what: "the offline copy")
        guard status.size <= Self.maxBytes else {
            throw GatehouseError.invalid("the offline copy \(path) is over \(Self.maxBytes >> 30) GB, more than Gatehouse loads into memory",
                                         fix: "import it into a SQLite file (sqlite3 copy.sqlite < \(path)) and open that file instead")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GatehouseError("the offline copy \(path) could not be read", fix: "check its permissions")
        }
        var options = SQLiteDatabase.Options(create: true, journalModeWAL: false)
        options.inMemory = true
        let db = try SQLiteDatabase(path: path, options: options)
        do {
            try db.executeScript(String(decoding: data, as: UTF8.self))
        } catch let error as SQLFailure {
            throw GatehouseError.invalid("the offline copy \(path) is not a SQL dump Gatehouse can load: \(error.message.prefix(200))",
                                         fix: "export it again with `wrangler d1 export DATABASE --remote --output \(path)`")
        }
        if db.isInTransaction { try db.executeScript("COMMIT") }
        try db.execute("PRAGMA query_only = ON")
        return db
    }

    /// The copy was checked as it loaded: SQLite parsed every statement of it.
    func startConsistencyCheck(_ store: Store, _ context: HealthContext) -> () throws -> HealthCheck {
        { HealthCheck(id: "store.integrity", status: .ok, summary: "an offline copy, loaded whole from \(path): nothing on disk to check") }
    }

    func bulkAppender(_ db: SQLDatabase, table: String, columns: [String], many: String, one: String, chunk: Int) throws -> (any BulkAppender)? { nil }

    /// A dump is read-only: the seed's first write says so.
    func checkCanSeedDemo(_ store: Store) throws {}
    func demoSeedLoad(_ store: Store, tables: [String], firstPerson: Int, createdForTheSeed: Bool) throws -> any DemoSeedLoad { BatchSeedLoad() }

    func integrityPlan(_ store: Store, sampleLimit: Int, mergeScan: Bool) throws -> (any IntegrityPlan)? { nil }

    /// A dump holds no name search index (wrangler does not export virtual tables): name search scans.
    static func nameIndex(on db: SQLDatabase) -> (any NameIndex)? { nil }

    func initialize(configurationPath: String?, actor: Actor, migrations: MigrationCatalog?) throws -> (Store, Store.InitReport) {
        throw GatehouseError("\(path) is an offline copy (a SQL dump): it is read-only, and init changes nothing there",
                             fix: "run init on the database itself (d1://ACCOUNT_ID/DATABASE_ID), or import the dump into a SQLite file first", code: .readOnly)
    }
}
