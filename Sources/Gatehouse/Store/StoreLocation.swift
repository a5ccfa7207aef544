import Storage

/// Where a store lives, as `--store` or `GATEHOUSE_STORE` names it: a SQLite file (the default), or a Postgres
/// database named by a libpq connection URI (`postgres://` or `postgresql://`).
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

    /// Reads a `--store` value: a connection URI when it starts with `postgres://` or `postgresql://`, else a path.
    public init(_ text: String) throws {
        if PostgresURI.isPostgresURI(text) {
            self = .postgres(try PostgresURI(text))
        } else {
            self = .file(text)
        }
    }

    /// The engine this location is served by.
    public var engine: SQLDialect.Engine {
        switch self {
        case .file: .sqlite
        case .postgres: .postgres
        }
    }

    /// The path, or the URI with its password replaced: safe to print.
    public var description: String {
        switch self {
        case .file(let path): path
        case .postgres(let uri): uri.redacted
        }
    }

    /// Opens one more connection to the store (for work on another thread). A SQLite file is opened read-only
    /// when `readOnly`; a Postgres connection is made read-only by the read transactions it runs in.
    public func connect(readOnly: Bool = false, timeouts: StoreTimeouts = .command) throws -> SQLDatabase {
        switch self {
        case .file(let path):
            return try SQLiteDatabase(path: path, options: SQLiteDatabase.Options(readOnly: readOnly, busyTimeoutMilliseconds: Int32(timeouts.busyMilliseconds)))
        case .postgres(let uri):
            return try PostgresConnection(uri: uri, limits: timeouts.postgres)
        }
    }
}
