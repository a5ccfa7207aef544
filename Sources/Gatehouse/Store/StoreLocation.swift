import Storage

/// Where a store lives, as `--store` or `GATEHOUSE_STORE` names it: a path (a SQLite file by default) or a server's
/// URI (`postgresql://…`, `d1://ACCOUNT_ID/DATABASE_ID`), read by the registered engine that claims it
/// (`StoreEngines`).
///
/// `description` is what every message, log line and audit entry shows: the path, or the URI with its password
/// replaced by `***`. The password itself stays inside the engine and goes to its client library only.
///
///     let location = try StoreLocation("postgresql://ops@db.internal/auth?sslmode=require")
///     print(location)                    // postgresql://ops@db.internal/auth?sslmode=require
///     let db = try location.connect()    // an `SQLDatabase`
public struct StoreLocation: Sendable, CustomStringConvertible {
    /// The engine that serves this location, holding the location itself.
    package let engine: any StoreEngine

    package init(_ engine: any StoreEngine) {
        self.engine = engine
    }

    /// Reads a `--store` value: a server engine's URI when one claims it, else a path that a path engine claims.
    /// A value that looks like a misspelt or unsupported database URI (`postgresql:/…`, `pg://…`, ` postgres://…`)
    /// is refused (see `misspeltURI(_:)`): taken as a path, its error would print the password and `init` would
    /// create a store and key file whose names hold it.
    public init(_ text: String) throws {
        if let server = StoreEngines.server(claiming: text) {
            self.init(try server.init(location: text))
            return
        }
        if let problem = Self.misspeltURI(text) { throw problem }
        guard let engine = StoreEngines.all.first(where: { !$0.namesServer && $0.claims(text) }) else {
            throw GatehouseError.invalid("no engine in this binary reads the store \(text.isEmpty ? "(empty)" : "path")",
                                         fix: "give a store path or URI this build supports")
        }
        self.init(try engine.init(location: text))
    }

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
        if let server = StoreEngines.server(claiming: text) {
            // A server's URI that does not parse is a usage error too (the engine's words never quote a secret); a
            // problem with what it is reached through is the store's, reported when it is opened.
            do { _ = try server.init(location: text); return nil } catch let error as GatehouseError where error.code == .invalid {
                return error
            } catch {
                return nil
            }
        }
        let trimmed = text.drop { $0.isWhitespace || $0.unicodeScalars.allSatisfy { $0.properties.generalCategory == .control } }
        let leading = trimmed.startIndex != text.startIndex
        if leading, let server = StoreEngines.server(claiming: String(trimmed)) {
            return GatehouseError.invalid("the store URI starts with a space or control character before \(server.uriSchemes.first ?? "its scheme")://",
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
                                      fix: uriFix + ", its password in GATEHOUSE_STORE or --store-file")
    }

    /// How to write each registered server engine's URI: "write a Postgres store as postgresql://USER@HOST/DATABASE
    /// (or postgres://), or a D1 store as …".
    static var uriFix: String {
        let hints = StoreEngines.all.compactMap { $0.uriHint }
        return hints.isEmpty ? "this build reads no store URI: give a path" : "write " + hints.joined(separator: ", or ")
    }

    /// The refusal of a value that starts with a scheme (`letters:`) that is not Postgres's, or nil.
    private static func schemeProblem(_ trimmed: Substring, leading: Bool) -> GatehouseError? {
        guard let colon = trimmed.firstIndex(of: ":") else { return nil }
        let scheme = trimmed[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter, scheme.count <= 32,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }) else { return nil }
        let rest = trimmed[trimmed.index(after: colon)...]
        let name = scheme.lowercased()
        let known = databaseSchemes.contains(name) || StoreEngines.all.flatMap { $0.uriSchemes }.contains { scheme in
            closeTo(name, scheme) || (scheme.count >= 5 && name.hasPrefix(scheme.prefix(5)))
        }
        guard known || rest.hasPrefix("/") || rest.contains("@") else { return nil }
        let shown = known ? "\"\(name):\"" : "a URI scheme"
        if name == "sqlite" || name == "sqlite3" || name == "file" {
            return GatehouseError.invalid("the store starts with \(shown): a SQLite store is given as a plain file path, not as a URI",
                                          fix: "pass the file's path alone, e.g. \(field: .store) ./auth.sqlite")
        }
        return GatehouseError.invalid("the store starts with \(shown)\(leading ? " after a space" : ""), which looks like a misspelt or unsupported database URI (nothing after the scheme is shown); it is not taken as a file name",
                                      fix: uriFix + "; or start a path that really holds a colon with ./")
    }

    /// Whether `a` is within two single-letter edits of `b` (a typo of a scheme).
    private static func closeTo(_ a: String, _ b: String) -> Bool {
        Suggestion.editDistance(a, b, limit: 2) != nil
    }

    /// The path, or the URI with its password replaced: safe to print.
    public var description: String { engine.shownLocation }

    /// Whether the store's connections are a server's, shared with Better Auth's (`StoreEngine.connectionsAreShared`).
    public var connectionsAreShared: Bool { engine.connectionsAreShared }

    /// Whether `text` names a store on a server (a URI a server engine claims, valid or not) rather than a file.
    public static func namesServer(_ text: String) -> Bool { StoreEngines.server(claiming: text) != nil }

    /// Opens one more connection to the store (for work on another thread), read-only when `readOnly` where the
    /// engine can.
    public func connect(readOnly: Bool = false, timeouts: StoreTimeouts = .command) throws -> SQLDatabase {
        try engine.connect(readOnly: readOnly, timeouts: timeouts)
    }
}
