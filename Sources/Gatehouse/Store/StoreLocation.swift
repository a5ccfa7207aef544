import Storage

/// Where a store lives, as `--store` or `GATEHOUSE_STORE` names it: a SQLite file (the default), a Postgres
/// database named by a libpq connection URI (`postgres://` or `postgresql://`), or a Cloudflare D1 database
/// (`d1://ACCOUNT_ID/DATABASE_ID`).
///
/// `description` is what every message, log line and audit entry shows: the path, or the URI with its password
/// replaced by `***`. The password itself stays inside `PostgresURI` and goes to libpq only.
///
///     let location = try StoreLocation("postgresql://ops@db.internal/auth?sslmode=require")
///     print(location)                    // postgresql://ops@db.internal/auth?sslmode=require
///     let db = try location.connect()    // an `SQLDatabase`
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    case file(String)
    case postgres(PostgresURI)
    /// A Cloudflare D1 database, `d1://ACCOUNT_ID/DATABASE_ID`, reached through Cloudflare's API with
    /// `CLOUDFLARE_API_TOKEN`.
    case d1(D1Location)
    /// An offline copy: a SQL dump (`wrangler d1 export … --output FILE.sql`), read-only.
    case dump(String)

    /// Reads a `--store` value: a connection URI when it starts with `postgres://` or `postgresql://`, else a path.
    /// A value that looks like a misspelt or unsupported database URI (`postgresql:/…`, `pg://…`, ` postgres://…`)
    /// is refused (see `misspeltURI(_:)`): taken as a path, its error would print the password and `init` would
    /// create a store and key file whose names hold it.
    public init(_ text: String) throws {
        if PostgresURI.isPostgresURI(text) {
            self = .postgres(try PostgresURI(text))
        } else if D1Location.looksLikeD1(text) {
            self = .d1(try D1Location(uri: text))
        } else if Self.isDump(text), Self.misspeltURI(text) == nil {
            self = .dump(text)
        } else if let problem = Self.misspeltURI(text) {
            throw problem
        } else {
            self = .file(text)
        }
    }

    /// Whether `path` names an offline copy (a SQL dump, `.sql`) rather than a SQLite file.
    static func isDump(_ path: String) -> Bool { path.lowercased().hasSuffix(".sql") }

    /// Schemes a store URI is likely written with by mistake or from another tool's habits. A value starting with
    /// one of them and a colon is never a file name Gatehouse should create.
    static let databaseSchemes: Set<String> = [
        "pg", "pgsql", "psql", "postgre", "postgis", "postgresq", "postgressql", "postgress", "postgrsql", "postgresl",
        "sqlite", "sqlite3", "file", "mysql", "mariadb", "mssql", "sqlserver", "oracle", "mongodb", "redis", "libsql",
        "jdbc", "d1", "http", "https",
    ]

    /// Why `text` is neither a `postgres://` URI nor a file path, or nil when it is one of them.
    ///
    /// It looks like a URI when it holds `://` or a `user:password@` part anywhere, or when, after any leading spaces,
    /// it starts with a scheme (`letters:`) followed by `/`
    /// (`postgresql:/x`, `pg://…`, `mysql://…`), by `…@` (user and password without `//`), or when the scheme is a
    /// database's own (`sqlite:auth.db`) or within two letters of `postgres`/`postgresql`. A name such as
    /// `backup:2026.sqlite` stays a path, and so does anything starting with `/`, `./`, `../` or `~`. The error
    /// quotes at most a scheme it recognised, never anything after the colon, which may hold a password.
    public static func misspeltURI(_ text: String) -> GatehouseError? {
        if PostgresURI.isPostgresURI(text) { return nil }
        if D1Location.looksLikeD1(text) {
            // A D1 store that does not parse is a usage error too; its words never quote the ids.
            do { _ = try D1Location(uri: text, environment: [:]); return nil } catch {
                return GatehouseError.invalid(error.message, fix: "write a D1 store as d1://ACCOUNT_ID/DATABASE_ID (the account's 32-character id, the database's UUID)")
            }
        }
        let trimmed = text.drop { $0.isWhitespace || $0.unicodeScalars.allSatisfy { $0.properties.generalCategory == .control } }
        let leading = trimmed.startIndex != text.startIndex
        if leading && PostgresURI.isPostgresURI(String(trimmed)) {
            return GatehouseError.invalid("the store URI starts with a space or control character before postgres://",
                                          fix: "remove what stands before the scheme (check the quoting in your unit file or script)")
        }
        let isPath = trimmed.hasPrefix("/") || trimmed.hasPrefix("./") || trimmed.hasPrefix("../") || trimmed.hasPrefix("~")
        if !isPath, let problem = schemeProblem(trimmed, leading: leading) { return problem }
        // Credentials (`user:password@`) or `://` anywhere mean a URI whatever precedes them (`postgresql//u:p@h`,
        // `//u:p@h/db`): no store file is named like that, and its error would print the password.
        let credentials = trimmed.split(separator: "/").contains { part in
            guard let colon = part.firstIndex(of: ":") else { return false }
            return part[colon...].contains("@")
        }
        guard credentials || trimmed.contains("://") else { return nil }
        return GatehouseError.invalid("the store looks like a database URI with a misspelt or missing scheme (it holds \(credentials ? "a user:password@ part" : "://")); nothing of it is shown, and it is not taken as a file name",
                                      fix: "write a Postgres store as postgresql://USER@HOST/DATABASE (or postgres://), its password in GATEHOUSE_STORE or --store-file")
    }

    /// The refusal of a value that starts with a scheme (`letters:`) that is not Postgres's, or nil.
    private static func schemeProblem(_ trimmed: Substring, leading: Bool) -> GatehouseError? {
        guard let colon = trimmed.firstIndex(of: ":") else { return nil }
        let scheme = trimmed[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter, scheme.count <= 32,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }) else { return nil }
        let rest = trimmed[trimmed.index(after: colon)...]
        let name = scheme.lowercased()
        let known = databaseSchemes.contains(name) || name.hasPrefix("postg") || name.hasPrefix("pg")
            || closeTo(name, "postgres") || closeTo(name, "postgresql")
        guard known || rest.hasPrefix("/") || rest.contains("@") else { return nil }
        let shown = known ? "\"\(name):\"" : "a URI scheme"
        if name == "sqlite" || name == "sqlite3" || name == "file" {
            return GatehouseError.invalid("the store starts with \(shown): a SQLite store is given as a plain file path, not as a URI",
                                          fix: "pass the file's path alone, e.g. \(field: .store) ./auth.sqlite")
        }
        return GatehouseError.invalid("the store starts with \(shown)\(leading ? " after a space" : ""), which looks like a misspelt or unsupported database URI (nothing after the scheme is shown); it is not taken as a file name",
                                      fix: "write a Postgres store as postgresql://USER@HOST/DATABASE (or postgres://), or start a SQLite path that really holds a colon with ./")
    }

    /// Whether `a` is within two single-letter edits of `b` (a typo of a scheme).
    private static func closeTo(_ a: String, _ b: String) -> Bool {
        Suggestion.editDistance(a, b, limit: 2) != nil
    }

    /// The engine this location is served by.
    public var engine: SQLDialect.Engine {
        switch self {
        case .file, .dump: .sqlite
        case .postgres: .postgres
        case .d1: .d1
        }
    }

    /// The path, or the URI with its password replaced: safe to print.
    public var description: String {
        switch self {
        case .file(let path), .dump(let path): path
        case .postgres(let uri): uri.redacted
        case .d1(let location): location.description
        }
    }

    /// The engine that serves this location: everything it does its own way, plugged in here, once.
    var storeEngine: any StoreEngine {
        switch self {
        case .file(let path): SQLiteStoreEngine(path: path)
        case .dump(let path): SQLDumpStoreEngine(path: path)
        case .postgres(let uri): PostgresStoreEngine(uri: uri)
        case .d1(let location): D1StoreEngine(location: location)
        }
    }

    /// Whether the store's connections are a server's, shared with Better Auth's (`StoreEngine.connectionsAreShared`).
    public var connectionsAreShared: Bool { storeEngine.connectionsAreShared }

    /// Whether `text` names a store on a server (a `postgres://` or `d1://` URI, valid or not) rather than a file.
    public static func namesServer(_ text: String) -> Bool { PostgresURI.isPostgresURI(text) || D1Location.looksLikeD1(text) }

    /// Opens one more connection to the store (for work on another thread). A SQLite file is opened read-only
    /// when `readOnly`; a Postgres connection is made read-only by the read transactions it runs in.
    public func connect(readOnly: Bool = false, timeouts: StoreTimeouts = .command) throws -> SQLDatabase {
        try storeEngine.connect(readOnly: readOnly, timeouts: timeouts)
    }
}

extension SQLDialect.Engine {
    /// The `StoreEngine` that serves this engine's connections, for work that holds a connection rather than an open
    /// store (`UserSearchIndex.status(db, …)`): what the engine plugs in that needs no location, its name search index.
    var storeEngine: any StoreEngine.Type {
        switch self {
        case .sqlite: SQLiteStoreEngine.self
        case .postgres: PostgresStoreEngine.self
        case .d1: D1StoreEngine.self
        }
    }
}
