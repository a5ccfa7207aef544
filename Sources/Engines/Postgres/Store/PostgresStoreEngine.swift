import Foundation
import Gatehouse
import Storage

/// A Postgres database named by a libpq URI: connections carry the session limits of `StoreTimeouts`, `init` is one
/// transaction behind the writer lock, and the master key lives on the operator's machine, never on the server.
struct PostgresStoreEngine: StoreEngine {
    let uri: PostgresURI

    /// `postgres://` or `postgresql://`, in any case.
    static func claims(_ text: String) -> Bool { PostgresURI.isPostgresURI(text) }
    static var namesServer: Bool { true }
    static var uriSchemes: [String] { ["postgresql", "postgres"] }
    static var uriHint: String? { "a Postgres store as postgresql://USER@HOST/DATABASE (or postgres://)" }
    static var dialectName: String { PostgresDialect().name }
    init(location text: String) throws { uri = try PostgresURI(text) }
    init(uri: PostgresURI) { self.uri = uri }
    /// The URI with its password replaced by `***`.
    var shownLocation: String { uri.redacted }
    static func passwordRange(inArgument argument: [UInt8]) -> Range<Int>? { PostgresURI.passwordRange(inArgument: argument) }
    func checkCanSeedDemo(_ store: Store) throws {}
    var rowEstimator: (any RowCountEstimating)? { self }
    var rowsPerWrite: Int? { nil }
    var accountSweep: AccountSweep? { PostgresAccountSweep() }
    func mergeScript(_ plan: MergePlan, at time: Timestamp) throws -> String { try MergeSQLEmitter.postgresScript(for: plan, at: time) }
    var hasSearchPath: Bool { true }
    var connectionsAreShared: Bool { true }
    var createsPrivateKeyFolder: Bool { true }

    /// A Postgres store has no folder of its own: its key file is `<host>_<port>_<database>.key` in
    /// `GATEHOUSE_KEY_DIR`, else `$XDG_CONFIG_HOME/gatehouse`, else `~/.config/gatehouse`, on the machine that runs
    /// Gatehouse — the key never goes to the database server.
    var masterKeyPath: String {
        let directory = MasterKey.operatorKeyFolder()
        let name = [uri.host ?? "local", uri.port ?? "5432", uri.database ?? uri.user ?? "postgres"]
            .joined(separator: "_").map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? String($0) : "_" }.joined()
        return directory + "/" + name + ".key"
    }

    /// `max_connections` less the superuser reserve and the connections open now, or the role's own `CONNECTION
    /// LIMIT` less its open connections, whichever is smaller.
    func freeConnections(_ db: SQLDatabase) throws -> Int? {
        guard let row = try db.row("""
            SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
                   - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') AS server_free,
                   (SELECT CASE WHEN r.rolconnlimit < 0 THEN NULL
                                ELSE r.rolconnlimit - (SELECT count(*) FROM pg_stat_activity a WHERE a.usename = current_user) END
                    FROM pg_roles r WHERE r.rolname = current_user) AS role_free
            """, []) else { return nil }
        return [row.optionalInt("server_free"), row.optionalInt("role_free")].compactMap { $0 }.min() ?? Int.max
    }

    func connect(readOnly: Bool, timeouts: StoreTimeouts) throws -> SQLDatabase {
        // Made read-only by the read transactions it runs in.
        try PostgresConnection(uri: uri, limits: timeouts.postgres)
    }

    func openChecked(configurationPath: String?, timeouts: StoreTimeouts) throws -> (SQLDatabase, StoreConfiguration) {
        let configuration = try StoreConfiguration.load(storePath: nil, explicitPath: configurationPath)
        return (try PostgresConnection(uri: uri, limits: timeouts.postgres), configuration)
    }

    /// The same checks as on SQLite before anything is written (Better Auth's columns, tables that may be renamed
    /// ones, key custody), then the pending migrations under the migration lock, Gatehouse's indexes on Better Auth's
    /// tables, and one audit entry. Better Auth's tables and rows are never altered.
    func initialize(configurationPath: String?, actor: Actor, migrations: MigrationCatalog?) throws -> (Store, Store.InitReport) {
        let location = StoreLocation(self)
        let configuration = try StoreConfiguration.load(storePath: nil, explicitPath: configurationPath)
        let catalog = try migrations ?? MigrationCatalog.load(directory: ResourceLocator.migrationsDirectory(for: PostgresDialect().migrationsFolder))
        let db = try PostgresConnection(uri: uri, limits: StoreTimeouts.command.postgres)
        if db.isReadOnly {
            throw GatehouseError("the store \(location) is read-only (a standby, or default_transaction_read_only is on); nothing was changed",
                                 fix: "run init against the primary", code: .readOnly)
        }
        // Postgres changes its schema in transactions: the whole init is one, so a refused or failed init leaves the
        // database as it was (the writer lock is taken first, so two inits take turns).
        return try db.write {
            let before = try Migrator.applied(on: db)
            let existed = !(try db.tableNames().isEmpty)
            try Store.checkBeforeWriting(db, named: location.description, configuration: configuration, applied: before, keyCustody: existed)
            let applied = try catalog.migrate(postgres: db, configuration: configuration, now: Timestamp.now().iso8601)
            var (store, report) = try Store.recordInit(db, location: location, configuration: configuration, actor: actor, applied: applied,
                                                       previouslyApplied: before.count, action: before.isEmpty && !existed ? "store.init" : "store.upgrade",
                                                       created: !existed, extraDetails: [:], journalSwitchedFrom: nil)
            report.warnings = try db.schemaShadows(prefix: "gatehouse_").map(\.description)
            return (store, report)
        }
    }
}
