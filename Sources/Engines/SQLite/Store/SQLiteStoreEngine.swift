import Foundation
import Gatehouse
import Storage

/// The embedded default: a store is one SQLite file, opened after checking the file itself, initialised in WAL mode
/// with its migrations each in a `BEGIN IMMEDIATE` transaction and SQLite's foreign-key check of what they touched.
struct SQLiteStoreEngine: StoreEngine {
    /// The store file, as `--store` gave it.
    let path: String

    /// Any path (the last engine asked: the default).
    static func claims(_ text: String) -> Bool { true }
    static var namesServer: Bool { false }
    static var uriSchemes: [String] { [] }
    static var uriHint: String? { nil }
    static var dialectName: String { SQLiteDialect().name }
    init(location text: String) throws { path = text }
    init(path: String) { self.path = path }
    var shownLocation: String { path }
    static func passwordRange(inArgument argument: [UInt8]) -> Range<Int>? { nil }
    func checkCanSeedDemo(_ store: Store) throws {}
    var rowEstimator: (any RowCountEstimating)? { self }
    var rowsPerWrite: Int? { nil }
    var accountSweep: AccountSweep? { SQLiteAccountSweep() }
    func mergeScript(_ plan: MergePlan, at time: Timestamp) throws -> String { try MergeSQLEmitter.sqliteScript(for: plan, at: time) }
    var hasSearchPath: Bool { false }
    var connectionsAreShared: Bool { false }
    var masterKeyPath: String { path + ".key" }
    var createsPrivateKeyFolder: Bool { false }

    /// A file's connections are the process's own.
    func freeConnections(_ db: SQLDatabase) throws -> Int? { nil }

    func connect(readOnly: Bool, timeouts: StoreTimeouts) throws -> SQLDatabase {
        try SQLiteDatabase(path: path, options: SQLiteDatabase.Options(readOnly: readOnly, busyTimeoutMilliseconds: Int32(timeouts.busyMilliseconds)))
    }

    func openChecked(configurationPath: String?, timeouts: StoreTimeouts) throws -> (SQLDatabase, StoreConfiguration) {
        try Self.checkFile(path, mustExist: true)
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
        return (try SQLiteDatabase(path: path, options: options), configuration)
    }

    func initialize(configurationPath: String?, actor: Actor, migrations: MigrationCatalog?) throws -> (Store, Store.InitReport) {
        try Self.checkFile(path, mustExist: false)
        let configuration = try StoreConfiguration.load(storePath: path, explicitPath: configurationPath)
        let catalog = try migrations ?? MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: SQLiteDialect().migrationsFolder))
        let existed = FileManager.default.fileExists(atPath: path)
        // An existing database is opened in its own journal mode: a refused init leaves the file byte for byte
        // as it was. It is switched to WAL only once every check has passed.
        let db = try SQLiteDatabase(path: path, options: .init(create: true, busyTimeoutMilliseconds: Store.busyTimeout, journalModeWAL: !existed))
        do {
            if existed { try Self.checkIntegrity(db, path: path) }
            let before = try Migrator.applied(on: db)
            // An existing Better Auth database is checked before anything is written to it.
            try Store.checkBeforeWriting(db, named: path, configuration: configuration, applied: before, keyCustody: existed)
            let previousJournal = try db.journalMode()
            let switchedToWAL = try existed && db.switchToWAL()
            let now = Timestamp.now().iso8601
            let shouldRun = catalog.shouldRun(configuration: configuration)
            let applied = try Migrator().migrate(db, catalog.migrations, now: now) { migration, db in try shouldRun(migration, db) }
            return try Store.recordInit(db, location: StoreLocation(self), configuration: configuration, actor: actor, applied: applied,
                                        previouslyApplied: before.count, action: existed ? "store.upgrade" : "store.init", created: !existed,
                                        extraDetails: switchedToWAL ? ["journal_switched_from": .string(previousJournal)] : [:],
                                        journalSwitchedFrom: switchedToWAL ? previousJournal : nil)
        } catch {
            if !existed {
                // A store this call created and could not finish is removed, not left half-made.
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
            throw error
        }
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

    /// Refuses a path that is no store file: empty, a directory, a FIFO or device, missing (when it must exist),
    /// unreadable, truncated, or in a folder that does not exist.
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
}
