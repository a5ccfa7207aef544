import Storage

/// What one engine does its own way when a store is opened or made, plugged in once where the store is chosen
/// (`StoreLocation.storeEngine`) and carried by the open store (`Store.engine`). The domain asks these, never the
/// connection's type: an engine is added by implementing this in `Engines/<Engine>/`, not by another `as?` in a
/// domain file.
protocol StoreEngine {
    /// The engine's name in `SQLDialect`: its migrations folder (`migrations/<engine>/`) and the name operators read.
    var kind: SQLDialect.Engine { get }
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
    /// How the demo seed loads its batches on this engine, for `store` (`tables`: Better Auth's tables it writes;
    /// `firstPerson`: the users the store held; `createdForTheSeed`: the seed's own command created the store).
    func demoSeedLoad(_ store: Store, tables: [String], firstPerson: Int, createdForTheSeed: Bool) throws -> any DemoSeedLoad
    /// How `accounts check` answers its checks faster than one anti-join each on this engine, or nil for the
    /// anti-joins alone. `mergeScan`: the link checks may walk sorted indexes (off in tests that compare the two).
    func integrityPlan(_ store: Store, sampleLimit: Int, mergeScan: Bool) throws -> (any IntegrityPlan)?
    /// The engine's name search index on `db`, one of its own connections, or nil when it has none (name search
    /// then scans the user table in id order). Static: a connection is all it needs (`SQLDialect.Engine.storeEngine`).
    static func nameIndex(on db: SQLDatabase) -> (any NameIndex)?
    /// Creates the store or upgrades it (`Store.initialize`): the engine's checks and transactions around the steps
    /// every engine shares (`Store.checkBeforeWriting`, `Store.createGatehouseIndexes`, `Store.recordInit`).
    func initialize(configurationPath: String?, actor: Actor, migrations: MigrationCatalog?) throws -> (Store, Store.InitReport)
}
