import Foundation
import Gatehouse
import SQLiteEngine
import Storage

/// An engine in the test process alone, for domain tests that need no file and no server (the idea of swift-nio's
/// `NIOEmbedded`): `memory:NAME` is an in-memory SQLite database shared by every connection of the process that names
/// it, kept from `init` until `MemoryStores.drop(NAME)`. Registered only in tests (`registerTestEngines`); it
/// answers every `StoreEngine` requirement with the plain way, so a domain test on it runs the seam's default paths.
///
///     let (store, _) = try Store.initialize(path: "memory:policy-test", actor: tester)
///     defer { MemoryStoreEngine.drop("policy-test") }
struct MemoryStoreEngine: StoreEngine {
    /// The database's name within the process.
    let name: String

    static func claims(_ text: String) -> Bool { text.hasPrefix("memory:") }
    static var namesServer: Bool { true }
    static var uriSchemes: [String] { ["memory"] }
    static var uriHint: String? { "a test's in-memory store as memory:NAME" }
    static var dialectName: String { SQLiteDialect().name }

    init(location text: String) throws {
        name = String(text.dropFirst("memory:".count))
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw GatehouseError.invalid("an in-memory test store is named memory: and letters, digits, - or _", fix: "write memory:NAME")
        }
    }

    var shownLocation: String { "memory:" + name }
    static func passwordRange(inArgument argument: [UInt8]) -> Range<Int>? { nil }
    var hasSearchPath: Bool { false }
    var connectionsAreShared: Bool { false }
    var masterKeyPath: String { NSTemporaryDirectory() + "gatehouse-memory-\(name).key" }
    var createsPrivateKeyFolder: Bool { false }
    var rowEstimator: (any RowCountEstimating)? { nil }
    var rowsPerWrite: Int? { nil }
    var accountSweep: AccountSweep? { nil }
    static func nameIndex(on db: SQLDatabase) -> (any NameIndex)? { nil }
    func freeConnections(_ db: SQLDatabase) throws -> Int? { nil }
    func checkCanSeedDemo(_ store: Store) throws {}
    func demoSeedLoad(_ store: Store, tables: [String], firstPerson: Int, createdForTheSeed: Bool) throws -> any DemoSeedLoad { BatchSeedLoad() }
    func bulkAppender(_ db: SQLDatabase, table: String, columns: [String], many: String, one: String, chunk: Int) throws -> (any BulkAppender)? { nil }
    func integrityPlan(_ store: Store, sampleLimit: Int, mergeScan: Bool) throws -> (any IntegrityPlan)? { nil }
    func mergeScript(_ plan: MergePlan, at time: Timestamp) throws -> String { try MergeSQLEmitter.sqliteScript(for: plan, at: time) }

    func startConsistencyCheck(_ store: Store, _ context: HealthContext) -> () throws -> HealthCheck {
        { HealthCheck(id: "store.integrity", status: .ok, summary: "an in-memory test store: nothing on disk to check") }
    }

    func connect(readOnly: Bool, timeouts: StoreTimeouts) throws -> SQLDatabase {
        guard Self.keepers.isOpen(name) else {
            throw GatehouseError.notFound("no in-memory store \(shownLocation) in this process", fix: "create it with init first")
        }
        var options = SQLiteDatabase.Options(readOnly: readOnly, busyTimeoutMilliseconds: Int32(timeouts.busyMilliseconds), journalModeWAL: false)
        options.sharedInMemory = true
        return try SQLiteDatabase(path: name, options: options)
    }

    func openChecked(configurationPath: String?, timeouts: StoreTimeouts) throws -> (SQLDatabase, StoreConfiguration) {
        (try connect(readOnly: false, timeouts: timeouts), try StoreConfiguration.load(storePath: nil, explicitPath: configurationPath))
    }

    /// The migrations on a new database (or the pending ones on one this process made), in one write.
    func initialize(configurationPath: String?, actor: Actor, migrations: MigrationCatalog?) throws -> (Store, Store.InitReport) {
        let configuration = try StoreConfiguration.load(storePath: nil, explicitPath: configurationPath)
        let catalog = try migrations ?? MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: SQLiteDialect().migrationsFolder))
        let created = try Self.keepers.open(name)
        var options = SQLiteDatabase.Options(busyTimeoutMilliseconds: Store.busyTimeout, journalModeWAL: false)
        options.sharedInMemory = true
        let db = try SQLiteDatabase(path: name, options: options)
        let before = try Migrator.applied(on: db)
        try Store.checkBeforeWriting(db, named: shownLocation, configuration: configuration, applied: before, keyCustody: !created)
        let shouldRun = catalog.shouldRun(configuration: configuration)
        let applied = try Migrator().migrate(db, catalog.migrations, now: Timestamp.now().iso8601) { migration, db in try shouldRun(migration, db) }
        return try Store.recordInit(db, location: StoreLocation(self), configuration: configuration, actor: actor, applied: applied,
                                    previouslyApplied: before.count, action: created ? "store.init" : "store.upgrade", created: created,
                                    extraDetails: [:], journalSwitchedFrom: nil)
    }

    /// Ends the in-memory store `name`: its keeper connection closes, and with the last connection its rows go.
    static func drop(_ name: String) { keepers.close(name) }

    /// One open connection per in-memory store, which keeps it alive between the connections tests open and close.
    private static let keepers = Keepers()

    private final class Keepers: @unchecked Sendable {
        // Guarded by `lock`: each connection is only opened or closed under it, never used.
        private let lock = NSLock()
        private var open: [String: SQLiteDatabase] = [:]

        /// Opens the keeper of `name`; whether it is new.
        func open(_ name: String) throws -> Bool {
            try lock.withLock {
                guard open[name] == nil else { return false }
                var options = SQLiteDatabase.Options(create: true, journalModeWAL: false)
                options.sharedInMemory = true
                open[name] = try SQLiteDatabase(path: name, options: options)
                return true
            }
        }

        func isOpen(_ name: String) -> Bool { lock.withLock { open[name] != nil } }
        func close(_ name: String) { _ = lock.withLock { open.removeValue(forKey: name) } }
    }
}

/// The tests' in-memory stores (`MemoryStoreEngine`).
public enum MemoryStores {
    /// Ends the in-memory store `name`: what it held goes.
    public static func drop(_ name: String) { MemoryStoreEngine.drop(name) }
}
