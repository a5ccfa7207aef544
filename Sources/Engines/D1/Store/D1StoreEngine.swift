import Foundation
import Gatehouse
import Storage

/// A Cloudflare D1 database (`d1://ACCOUNT_ID/DATABASE_ID`), reached through Cloudflare's API with
/// `CLOUDFLARE_API_TOKEN`: SQLite's SQL and migrations, each request one atomic batch, writes optimistic
/// (`D1Connection`), and the master key on the operator's machine, as for Postgres.
struct D1StoreEngine: StoreEngine {
    let location: D1Location

    /// `d1:` in any case, so that a misspelt one is refused, not read as a path.
    static func claims(_ text: String) -> Bool { D1Location.looksLikeD1(text) }
    static var namesServer: Bool { true }
    static var uriSchemes: [String] { ["d1"] }
    static var uriHint: String? { "a D1 store as d1://ACCOUNT_ID/DATABASE_ID (the account's 32-character id, the database's UUID)" }
    static var dialectName: String { D1Dialect().name }
    /// A D1 store that does not parse is a usage error; its words never quote the ids. The environment it is reached
    /// through (`CLOUDFLARE_API_BASE_URL`, …) is read after, and a problem there is the store's, not the usage's.
    init(location text: String) throws {
        do { _ = try D1Location(uri: text, environment: [:]) } catch {
            throw GatehouseError.invalid(error.message, fix: "write a D1 store as d1://ACCOUNT_ID/DATABASE_ID (the account's 32-character id, the database's UUID)")
        }
        location = try D1Location(uri: text)
    }
    init(location: D1Location) { self.location = location }
    var shownLocation: String { location.description }
    /// The API token is never part of the store value.
    static func passwordRange(inArgument argument: [UInt8]) -> Range<Int>? { nil }
    var rowEstimator: (any RowCountEstimating)? { self }
    var rowsPerWrite: Int? { D1Connection.rowsPerRequest }
    /// Every statement is a request: no window runs within a health budget (the anti-joins are one request each).
    var accountSweep: AccountSweep? { nil }
    func mergeScript(_ plan: MergePlan, at time: Timestamp) throws -> String { try MergeSQLEmitter.d1Script(for: plan, at: time) }
    var hasSearchPath: Bool { false }
    /// Every request stands alone: there is no connection to hold, so the console's lanes need no shared pool.
    var connectionsAreShared: Bool { false }
    var createsPrivateKeyFolder: Bool { true }

    /// Requests, not connections: nothing to count.
    func freeConnections(_ db: SQLDatabase) throws -> Int? { nil }

    /// A D1 write cannot read back the sync ids each batch is given: seed a SQLite file and import it.
    func checkCanSeedDemo(_ store: Store) throws {
        throw GatehouseError("the demo seed reads back the sync ids each batch is given, which D1 cannot answer inside a write; nothing was written",
                             fix: "seed a SQLite file (\(command: .demoSeed, .option(.store, "demo.sqlite"))) and import it: sqlite3 demo.sqlite .dump > demo.sql, then wrangler d1 execute DATABASE --remote --file demo.sql",
                             code: .invalid)
    }
    /// The seam's batches (`demo seed` refuses D1 before it gets here: it reads back ids inside its writes).
    func demoSeedLoad(_ store: Store, tables: [String], firstPerson: Int, createdForTheSeed: Bool) throws -> any DemoSeedLoad {
        BatchSeedLoad()
    }

    /// `accounts check` counts and samples every anti-join in one request (`D1IntegrityPlan`).
    func integrityPlan(_ store: Store, sampleLimit: Int, mergeScan: Bool) throws -> (any IntegrityPlan)? {
        D1IntegrityPlan(db: store.db, sampleLimit: sampleLimit)
    }

    /// No name search index yet on D1: name search scans the user table in id order.
    static func nameIndex(on db: SQLDatabase) -> (any NameIndex)? { nil }

    /// `d1_<account>_<database>.key` in the operator's key folder (`MasterKey.operatorKeyFolder`): the key never goes
    /// to Cloudflare.
    var masterKeyPath: String {
        MasterKey.operatorKeyFolder() + "/d1_\(location.account)_\(location.database).key"
    }

    func connect(readOnly: Bool, timeouts: StoreTimeouts) throws -> SQLDatabase {
        Self.connection(location, timeouts)
    }

    func openChecked(configurationPath: String?, timeouts: StoreTimeouts) throws -> (SQLDatabase, StoreConfiguration) {
        let configuration = try StoreConfiguration.load(storePath: nil, explicitPath: configurationPath)
        return (Self.connection(location, timeouts), configuration)
    }

    /// A connection whose every operation, retries and waits included, ends within `timeouts.requestMilliseconds`
    /// when there is such a bound (a console's request).
    private static func connection(_ location: D1Location, _ timeouts: StoreTimeouts) -> D1Connection {
        D1Connection(location: location, budget: timeouts.requestMilliseconds.map { Double($0) / 1000 })
    }

    /// D1's size limit on the paid plan (10 GB; 500 MB on the free plan): a database at it refuses writes.
    static let sizeLimit = 10_000_000_000

    /// D1 checks its own pages (`PRAGMA quick_check`, one request — which also shows that the API answers and the token
    /// may read); a damaged database is Cloudflare's to restore (Time Travel), so the check reports and names that way
    /// out. The answer's `size_after` gives the database's size, set against D1's limit.
    func startConsistencyCheck(_ store: Store, _ context: HealthContext) -> () throws -> HealthCheck {
        {
            let problems = try store.db.rows("PRAGMA quick_check(5)").compactMap(\.[0].string).filter { $0 != "ok" }
            let size = (store.db as? D1Connection)?.databaseSize
            let samples = size.map { [HealthSample(metric: "gatehouse_store_size_bytes", value: Double($0), help: "The D1 database's size, as its API last gave it.")] } ?? []
            guard let first = problems.first else {
                let sized = size.map { " — \(Self.megabytes($0)) MB of D1's \(Self.sizeLimit / 1_000_000_000) GB" } ?? ""
                if let size, size >= Self.sizeLimit / 10 * 8 {
                    return HealthCheck(id: "store.integrity", status: .warning, summary: "PRAGMA quick_check: ok\(sized): at 80% of D1's limit, past which writes are refused",
                                       action: "remove what is no longer needed (expired sessions and verifications), or split the data", samples: samples)
                }
                return HealthCheck(id: "store.integrity", status: .ok, summary: "PRAGMA quick_check: ok (the whole D1 database\(sized))", samples: samples)
            }
            return HealthCheck(id: "store.integrity", status: .critical,
                               summary: "PRAGMA quick_check found \(problems.count) problem(s) in \(store.location); first: \(first.prefix(200))",
                               action: "restore the database to a point before the damage with D1 Time Travel (`wrangler d1 time-travel restore`)", samples: samples)
        }
    }

    private static func megabytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }

    func bulkAppender(_ db: SQLDatabase, table: String, columns: [String], many: String, one: String, chunk: Int) throws -> (any BulkAppender)? {
        nil
    }

    /// The same checks as on the other engines before anything is written, then each pending migration as one request
    /// (its statements and its record, all or nothing: D1 refuses `BEGIN`), Gatehouse's indexes on Better Auth's tables,
    /// and one audit entry. Better Auth's tables and rows are never altered.
    func initialize(configurationPath: String?, actor: Actor, migrations: MigrationCatalog?) throws -> (Store, Store.InitReport) {
        let storeLocation = StoreLocation(self)
        let configuration = try StoreConfiguration.load(storePath: nil, explicitPath: configurationPath)
        let catalog = try migrations ?? MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: D1Dialect().migrationsFolder))
        let db = D1Connection(location: location)
        let before = try Migrator.applied(on: db)
        // wrangler's own table of migrations is there on a database nobody has put a table in yet.
        let existed = !(try db.tableNames().filter { !Store.toolTables.contains($0) }.isEmpty)
        try Store.checkBeforeWriting(db, named: storeLocation.description, configuration: configuration, applied: before, keyCustody: existed)
        let shouldRun = catalog.shouldRun(configuration: configuration)
        let applied = try D1Migrator().migrate(db, catalog.migrations, now: Timestamp.now().iso8601) { migration, db in try shouldRun(migration, db) }
        return try Store.recordInit(db, location: storeLocation, configuration: configuration, actor: actor, applied: applied,
                                    previouslyApplied: before.count, action: before.isEmpty && !existed ? "store.init" : "store.upgrade",
                                    created: !existed, extraDetails: [:], journalSwitchedFrom: nil)
    }
}
