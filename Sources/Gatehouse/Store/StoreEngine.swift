import Storage
import Locking

/// What one engine does its own way when a store is opened or made: each engine conforms once, in its own target
/// (`Sources/Engines/<Engine>/Store/`), and the executable registers it (`StoreEngines.register`). An open store
/// carries its engine (`Store.engine`); the domain asks these, never which engine it holds, and every requirement has
/// no default, so an engine that leaves one out does not compile.
package protocol StoreEngine: Sendable {
    // MARK: - how a `--store` value names a store of this engine (`StoreEngines`, `StoreLocation`)

    /// Whether `text` is meant for this engine: its URI scheme (valid or not), or a file name it reads.
    static func claims(_ text: String) -> Bool
    /// Whether the engine's stores are on a server, named by URIs: such an engine is asked before any path engine,
    /// its key file lives on the operator's machine, and a URI it refuses is a usage error, never a file name.
    static var namesServer: Bool { get }
    /// The URI schemes this engine reads (`postgres`, `postgresql`), so that a misspelt one is refused rather than
    /// taken as a file name; empty for a path engine.
    static var uriSchemes: [String] { get }
    /// How to write a store URI for this engine, for errors ("a Postgres store as postgresql://USER@HOST/DATABASE");
    /// nil for a path engine.
    static var uriHint: String? { get }
    /// The dialect the engine's connections speak, by name (`SQLDialect.name`): how a connection finds its engine's
    /// answers (`StoreEngines.engines(speaking:)`).
    static var dialectName: String { get }
    /// The engine for a value it claims; throws a usage error (never quoting a secret) for one it cannot read.
    init(location text: String) throws
    /// The store as every message, log line and audit entry shows it: the path, or the URI with its password replaced.
    var shownLocation: String { get }
    /// Where the password of a store value on the command line lies (`--store URI` or `--store=URI`), so that `main`
    /// overwrites it in the process's memory; nil when the value holds none.
    static func passwordRange(inArgument argument: [UInt8]) -> Range<Int>?

    // MARK: - what the engine does its own way
    /// Whether the store's objects are found through a search path another role could shape (a server's schemas),
    /// so `health` reports objects that shadow Gatehouse's (`SQLDatabase.schemaShadows`).
    var hasSearchPath: Bool { get }
    /// Whether the store's connections come from a server's limited supply, shared with Better Auth's
    /// (`max_connections`): the console then draws all its lanes from one pool and checks at start that the server can
    /// give it that many (`freeConnections`). A file gives each lane connections of its own.
    var connectionsAreShared: Bool { get }
    /// Where the store's master key file is by default (`MasterKey.defaultPath`).
    var masterKeyPath: String { get }
    /// Whether the key file's folder is the operator's own, made private (0700) when the first key is written.
    var createsPrivateKeyFolder: Bool { get }
    /// Opens the connection `Store.open` works on, after the engine's own checks of the store (a file that is
    /// missing, truncated or on a read-only filesystem), with the per-store configuration read from where it lives.
    func openChecked(configurationPath: String?, timeouts: StoreTimeouts) throws -> (SQLDatabase, StoreConfiguration)
    /// One more connection to the store (for work on another thread), read-only when `readOnly` where the engine can.
    func connect(readOnly: Bool, timeouts: StoreTimeouts) throws -> SQLDatabase
    /// How many more connections the store's server can give this process now (its free slots, or the role's own
    /// limit), on `db`, one of this engine's connections; nil when connections are not limited.
    func freeConnections(_ db: SQLDatabase) throws -> Int?
    /// Starts the engine's own consistency check of the store for `health`, on a second connection where it can, so
    /// the other checks run meanwhile; the closure waits for it and gives its verdict.
    func startConsistencyCheck(_ store: Store, _ context: HealthContext) -> () throws -> HealthCheck
    /// The engine's fastest way to append rows to `table` for the demo seed, or nil to run `many` (`chunk` rows) and
    /// `one` through the seam. `db` is a connection this engine made.
    func bulkAppender(_ db: SQLDatabase, table: String, columns: [String], many: String, one: String, chunk: Int) throws -> (any BulkAppender)?
    /// Throws, naming the way round, when the demo seed cannot run on this engine (it reads back the sync ids each batch
    /// is given, inside the batch's write); called before anything is changed.
    func checkCanSeedDemo(_ store: Store) throws
    /// How the demo seed loads its batches on this engine, for `store` (`tables`: Better Auth's tables it writes;
    /// `firstPerson`: the users the store held; `createdForTheSeed`: the seed's own command created the store).
    func demoSeedLoad(_ store: Store, tables: [String], firstPerson: Int, createdForTheSeed: Bool) throws -> any DemoSeedLoad
    /// How `accounts check` answers its checks faster than one anti-join each on this engine, or nil for the
    /// anti-joins alone. `mergeScan`: the link checks may walk sorted indexes (off in tests that compare the two).
    func integrityPlan(_ store: Store, sampleLimit: Int, mergeScan: Bool) throws -> (any IntegrityPlan)?
    /// The engine's name search index on `db`, one of its own connections, or nil when it has none (name search
    /// then scans the user table in id order). Static: a connection is all it needs (`StoreEngines.engines(speaking:)`).
    static func nameIndex(on db: SQLDatabase) -> (any NameIndex)?
    /// How the engine estimates table sizes without reading them (`store status`), or nil to count every row.
    var rowEstimator: (any RowCountEstimating)? { get }
    /// The most rows one write should change on this engine, or nil when one transaction takes any number. A long job
    /// that must be atomic (an Apple transfer's apply) is one write where this is nil; elsewhere it is writes of this
    /// many rows whose progress is recorded, so that a cut-off run resumes.
    var rowsPerWrite: Int? { get }
    /// How `health` walks accounts in windows within its time budget, or nil where no window can run (the caller then
    /// counts with whole anti-joins).
    var accountSweep: AccountSweep? { get }
    /// A merge plan as one SQL script in the engine's SQL, for a remote copy of the store (`merge plan --sql`), with the
    /// date columns it touches set to `time` (`MergeSQLEmitter`).
    func mergeScript(_ plan: MergePlan, at time: Timestamp) throws -> String
    /// Creates the store or upgrades it (`Store.initialize`): the engine's checks and transactions around the steps
    /// every engine shares (`Store.checkBeforeWriting`, `Store.createGatehouseIndexes`, `Store.recordInit`).
    func initialize(configurationPath: String?, actor: Actor, migrations: MigrationCatalog?) throws -> (Store, Store.InitReport)
}

/// The engines this process can open stores on, registered once at start by the executable (and by the tests) in the
/// order they are asked: server engines first whatever the order, then path engines, the last of which should claim
/// any path.
///
///     StoreEngines.register([PostgresStoreEngine.self, D1StoreEngine.self, SQLDumpStoreEngine.self, SQLiteStoreEngine.self])
package enum StoreEngines {
    private static let registered = Locked<[any StoreEngine.Type]>([])

    /// Adds `engines` (each once) to those `StoreLocation` picks from.
    package static func register(_ engines: [any StoreEngine.Type]) {
        registered.withLock { list in
            for engine in engines where !list.contains(where: { $0 == engine }) { list.append(engine) }
        }
    }

    /// Every registered engine, server engines first.
    package static var all: [any StoreEngine.Type] {
        let list = registered.withLock { $0 }
        return list.filter { $0.namesServer } + list.filter { !$0.namesServer }
    }

    /// The registered engines whose connections speak `dialect` (a file and its offline copy speak the same).
    package static func engines(speaking dialect: any SQLDialect) -> [any StoreEngine.Type] {
        all.filter { $0.dialectName == dialect.name }
    }

    /// The server engine that claims `text`, valid or not.
    static func server(claiming text: String) -> (any StoreEngine.Type)? {
        all.first { $0.namesServer && $0.claims(text) }
    }
}
