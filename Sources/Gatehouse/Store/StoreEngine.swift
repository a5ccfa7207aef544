import Storage

/// What one engine does its own way when a store is opened or made, plugged in once where the store is chosen
/// (`StoreLocation.storeEngine`) and carried by the open store (`Store.engine`). The domain asks these, never the
/// connection's type: an engine is added by implementing this in `Engines/<Engine>/`, not by another `as?` in a
/// domain file.
protocol StoreEngine {
    /// The engine's name in `SQLDialect`: its migrations folder (`migrations/<engine>/`) and the name operators read.
    var kind: SQLDialect.Engine { get }
    /// Whether writers take turns on an advisory lock that a script can take too (Postgres's
    /// `pg_advisory_xact_lock`); an engine without one serializes writers by its transactions alone.
    var supportsAdvisoryLocks: Bool { get }
    /// Whether the store's objects are found through a search path another role could shape (a server's schemas),
    /// so `health` reports objects that shadow Gatehouse's (`SQLDatabase.schemaShadows`).
    var hasSearchPath: Bool { get }
    /// Where the store's master key file is by default (`MasterKey.defaultPath`).
    var masterKeyPath: String { get }
    /// Whether the key file's folder is the operator's own, made private (0700) when the first key is written.
    var createsPrivateKeyFolder: Bool { get }
    /// Opens the connection `Store.open` works on, after the engine's own checks of the store (a file that is
    /// missing, truncated or on a read-only filesystem), with the per-store configuration read from where it lives.
    func openChecked(configurationPath: String?, timeouts: StoreTimeouts) throws -> (SQLDatabase, StoreConfiguration)
    /// One more connection to the store (for work on another thread), read-only when `readOnly` where the engine can.
    func connect(readOnly: Bool, timeouts: StoreTimeouts) throws -> SQLDatabase
    /// Starts the engine's own consistency check of the store for `health`, on a second connection where it can, so
    /// the other checks run meanwhile; the closure waits for it and gives its verdict.
    func startConsistencyCheck(_ store: Store, _ context: HealthContext) -> () throws -> HealthCheck
    /// The engine's fastest way to append rows to `table` for the demo seed, or nil to run `many` (`chunk` rows) and
    /// `one` through the seam. `db` is a connection this engine made.
    func bulkAppender(_ db: SQLDatabase, table: String, columns: [String], many: String, one: String, chunk: Int) throws -> (any BulkAppender)?
    /// Creates the store or upgrades it (`Store.initialize`): the engine's checks and transactions around the steps
    /// every engine shares (`Store.checkBeforeWriting`, `Store.createGatehouseIndexes`, `Store.recordInit`).
    func initialize(configurationPath: String?, actor: Actor, migrations: MigrationCatalog?) throws -> (Store, Store.InitReport)
}
