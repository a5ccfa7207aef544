import Storage

/// Better Auth's tables as this database has them: their names, which columns exist (camelCase as
/// Better Auth's CLI writes them, or snake_case as Drizzle schemas often do), and how dates are stored.
///
/// Every query on Better Auth's tables is written against this map, so one code path serves
/// Better Auth 1.7, 1.4–1.6 (no `issuer`) and Drizzle-made databases, on SQLite (`inspect(_:configuration:)`)
/// and on Postgres (the same `inspect`, which also reads Prisma's `timestamp(3)` and `uuid` ids).
public struct AuthSchema: Sendable {
    /// A field of Better Auth's tables as Better Auth names it (its camelCase logical name). Queries name fields
    /// through this set, so a misspelt field does not compile instead of selecting `NULL`.
    public enum Field: String, Sendable, Hashable, CaseIterable {
        case id, name, email, emailVerified, image, createdAt, updatedAt
        case role, banned, banReason, banExpires
        case expiresAt, token, userId, ipAddress, userAgent, impersonatedBy
        case accountId, providerId, issuer, accessToken, refreshToken, idToken, accessTokenExpiresAt, refreshTokenExpiresAt, scope, password
        case identifier, value

        /// The snake_case spelling Drizzle schemas often use (`emailVerified` → `email_verified`).
        public var snakeCase: String { AuthSchema.snakeCase(rawValue) }
    }

    /// One Better Auth table.
    public struct Table: Sendable {
        /// Better Auth's name for the table (`user`).
        public let logical: String
        /// Its name in this database.
        public let name: String
        /// Logical field → physical column.
        public let columns: [Field: String]
        /// Logical date field → its encoding here.
        public let dates: [Field: DateEncoding]
        /// Logical field → its column's declared type: SQLite's declaration (`text`, `date`, `integer`) or
        /// Postgres's own spelling (`text`, `uuid`, `boolean`, `timestamp with time zone`, ...).
        public var declaredTypes: [Field: String] = [:]

        /// The table name, quoted for SQL.
        public var sql: String { SQL.quote(name) }

        /// Whether the field exists here.
        public func has(_ field: Field) -> Bool { columns[field] != nil }

        /// The quoted column for a field. Required fields are checked when the schema is read; an optional
        /// field that is absent yields `NULL` so that SELECT lists stay valid.
        public func col(_ field: Field) -> String {
            columns[field].map(SQL.quote) ?? "NULL"
        }

        /// The column's name here, unquoted (the logical name when the column is absent).
        public func column(_ field: Field) -> String { columns[field] ?? field.rawValue }

        /// The encoding of a date field (ISO text when unknown).
        public func encoding(_ field: Field) -> DateEncoding { dates[field] ?? .isoText }

        /// Whether the field's column is a native boolean (Postgres), rather than SQLite's 0/1 integer. Both read
        /// as `.integer(1)`/`.integer(0)`; a write must send a boolean to a native one.
        public func isNativeBoolean(_ field: Field) -> Bool { declaredTypes[field] == "boolean" }
    }

    public let user: Table
    public let session: Table
    public let account: Table
    public let verification: Table?

    /// Whether `account` has Better Auth 1.7's `issuer` column.
    public var hasIssuer: Bool { account.has(.issuer) }
    /// Whether the admin plugin's columns (`banned`, `banReason`, `banExpires`) are on `user`.
    public var hasAdminPlugin: Bool { user.has(.banned) }

    /// A short description of the shape: "Better Auth 1.7", "Better Auth 1.4–1.6 (no account.issuer)", ...
    public var shape: String {
        var parts = [hasIssuer ? "Better Auth 1.7 (account.issuer)" : "Better Auth 1.4–1.6 (no account.issuer)"]
        switch user.encoding(.createdAt) {
        case .isoText: break
        case .epochMilliseconds: parts.append("dates as epoch milliseconds")
        case .epochSeconds: parts.append("dates as epoch seconds")
        case .sqlTimestamp: parts.append("dates as \(user.declaredTypes[.createdAt] ?? "timestamps")")
        }
        if user.columns[.emailVerified] == "email_verified" { parts.append("snake_case columns") }
        if user.declaredTypes[.id] == "uuid" { parts.append("uuid ids") }
        if hasAdminPlugin { parts.append("admin plugin") }
        return parts.joined(separator: ", ")
    }

    /// Fields Gatehouse needs, per table.
    static let required: [String: [Field]] = [
        "user": [.id, .name, .email, .emailVerified, .createdAt, .updatedAt],
        "session": [.id, .expiresAt, .token, .createdAt, .updatedAt, .userId],
        "account": [.id, .accountId, .providerId, .userId, .createdAt, .updatedAt],
        "verification": [.id, .identifier, .value, .expiresAt],
    ]

    /// Fields Gatehouse uses when they are there.
    static let optional: [String: [Field]] = [
        "user": [.image, .banned, .banReason, .banExpires, .role],
        "session": [.ipAddress, .userAgent, .impersonatedBy],
        "account": [.issuer, .accessToken, .refreshToken, .idToken, .accessTokenExpiresAt, .refreshTokenExpiresAt, .scope, .password],
        "verification": [.createdAt, .updatedAt],
    ]

    static let dateFields: Set<Field> = [.createdAt, .updatedAt, .expiresAt, .accessTokenExpiresAt, .refreshTokenExpiresAt, .banExpires]

    /// A problem with the database's Better Auth tables.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public let table: String
        public let column: String?
        public var description: String {
            column.map { "table \"\(table)\" has no column \"\($0)\" (or \"\(AuthSchema.snakeCase($0))\")" } ?? "table \"\(table)\" does not exist"
        }
    }

    /// Reads the schema, or lists every missing table and column.
    ///
    /// Tables are found as queries find them: by their `gatehouse.json` names, unqualified (on Postgres through the
    /// connection's `search_path`: Better Auth's tables in a schema other than `public` are reached with
    /// `?options=-csearch_path%3Dauth` in the URI). Columns come from the engine's catalog with their declared
    /// types. Where the engine has native timestamps (`SQLDialect.nativeTimestamps`: Postgres), `timestamptz`,
    /// `timestamp` and `date` columns are `DateEncoding.sqlTimestamp`; any other date column (epoch numbers in an
    /// integer, ISO text; every date column on SQLite) is judged from a sample value.
    public static func inspect(_ db: SQLDatabase, configuration: StoreConfiguration) throws -> Result<AuthSchema, SchemaProblems> {
        let native = db.dialect.nativeTimestamps
        // Every table's columns in one question, and every table's date samples in one snapshot: on a server (a round
        // trip each) opening a store costs two questions, not two per table.
        let columns = try db.columns(ofEach: StoreConfiguration.betterAuthTables.map(configuration.tableName))
        let columnsOf: (String) throws -> [ColumnInfo] = { columns[$0] ?? [] }
        func sampled(_ dateColumns: [(field: Field, column: String)], _ byName: [String: ColumnInfo]) -> [(field: Field, column: String)] {
            dateColumns.filter { !(native && isSQLTimestamp(byName[$0.column]?.declaredType ?? "")) }
        }
        var wanted: [(table: String, columns: [String])] = []
        _ = try inspect(configuration: configuration, columns: columnsOf) { table, dateColumns, byName in
            let columns = sampled(dateColumns, byName).map(\.column)
            if !columns.isEmpty { wanted.append((table, columns)) }
            return []
        }
        let read = try db.snapshot(wanted.map { sampleStatement(table: $0.table, columns: $0.columns) })
        var samples: [String: [SQLValue]] = [:]
        for (item, rows) in zip(wanted, read) { samples[item.table] = item.columns.indices.map { rows.first?[$0] ?? .null } }
        return try inspect(configuration: configuration, columns: columnsOf) { table, dateColumns, byName in
            let sampledColumns = sampled(dateColumns, byName)
            let values = samples[table] ?? sampledColumns.map { _ in .null }
            var encodings = Dictionary(uniqueKeysWithValues: zip(sampledColumns, values).map { date, sample in
                (date.field, encoding(of: sample, declared: byName[date.column]?.declaredType ?? ""))
            })
            for date in dateColumns where encodings[date.field] == nil { encodings[date.field] = .sqlTimestamp }
            return dateColumns.compactMap { date in encodings[date.field].map { (date.field, $0) } }
        }
    }

    /// The engine-neutral part of reading a schema: which fields each table has, under which column, what is missing.
    /// `dates` says how each date column present stores its values.
    static func inspect(configuration: StoreConfiguration, columns columnsOf: (String) throws -> [ColumnInfo],
                        dates: (_ table: String, _ dateColumns: [(field: Field, column: String)], _ byName: [String: ColumnInfo]) throws -> [(Field, DateEncoding)])
        throws -> Result<AuthSchema, SchemaProblems> {
        var problems: [Problem] = []
        var tables: [String: Table] = [:]
        for logical in StoreConfiguration.betterAuthTables {
            let name = configuration.tableName(logical)
            let present = try columnsOf(name)
            if present.isEmpty {
                if logical != "verification" { problems.append(Problem(table: name, column: nil)) }
                continue
            }
            let byName = Dictionary(present.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            var columns: [Field: String] = [:]
            for field in required[logical, default: []] + optional[logical, default: []] {
                if byName[field.rawValue] != nil { columns[field] = field.rawValue } else if byName[field.snakeCase] != nil { columns[field] = field.snakeCase }
            }
            for field in required[logical, default: []] where columns[field] == nil {
                problems.append(Problem(table: name, column: field.rawValue))
            }
            let dateColumns = columns.filter { dateFields.contains($0.key) }.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { (field: $0.key, column: $0.value) }
            let encodings = try dates(name, dateColumns, byName)
            var table = Table(logical: logical, name: name, columns: columns, dates: Dictionary(encodings, uniquingKeysWith: { first, _ in first }))
            table.declaredTypes = columns.compactMapValues { byName[$0]?.declaredType }
            tables[logical] = table
        }
        guard problems.isEmpty, let user = tables["user"], let session = tables["session"], let account = tables["account"] else {
            return .failure(SchemaProblems(problems: problems))
        }
        return .success(AuthSchema(user: user, session: session, account: account, verification: tables["verification"]))
    }

    /// Whether a Postgres type holds dates natively (`timestamp(3) without time zone`, `timestamp with time zone`, `date`).
    static func isSQLTimestamp(_ declared: String) -> Bool {
        declared.hasPrefix("timestamp") || declared == "date"
    }

    /// `emailVerified` → `email_verified`.
    public static func snakeCase(_ field: String) -> String {
        var out = ""
        for char in field {
            if char.isUppercase { out += "_" + char.lowercased() } else { out.append(char) }
        }
        return out
    }

    /// A non-NULL value of each column from the table's first 1,000 rows (`.null` when there is none),
    /// read with one statement per table. Only the first 1,000 rows are looked at: a column that is NULL
    /// everywhere (`refreshTokenExpiresAt` often is) must not cost a scan of the whole table on every open.
    static func sampleValues(_ db: SQLDatabase, table: String, columns: [String]) throws -> [SQLValue] {
        guard !columns.isEmpty else { return [] }
        let statement = sampleStatement(table: table, columns: columns)
        guard let row = try db.row(statement.sql, statement.arguments) else { return columns.map { _ in .null } }
        return columns.indices.map { row[$0] }
    }

    /// The date samples `inspect` asks for on a store in Better Auth's own shape (its core fields in camelCase, no
    /// plugin's, dates not native): a guess that an engine paying a request per question sends ahead of the catalog's
    /// answer (`SQLDatabase.readAhead`). On a store of another shape the guess is simply not used.
    static func likelySampleStatements(configuration: StoreConfiguration) -> [SQLStatement] {
        let pluginFields: Set<Field> = [.banned, .banReason, .banExpires, .role, .impersonatedBy]
        var statements: [SQLStatement] = []
        _ = try? inspect(configuration: configuration, columns: { name in
            guard let logical = StoreConfiguration.betterAuthTables.first(where: { configuration.tableName($0) == name }) else { return [] }
            return (required[logical, default: []] + optional[logical, default: []]).filter { !pluginFields.contains($0) }
                .map { ColumnInfo(name: $0.rawValue, declaredType: "date", notNull: false, primaryKeyPosition: 0) }
        }) { table, dateColumns, _ in
            if !dateColumns.isEmpty { statements.append(sampleStatement(table: table, columns: dateColumns.map(\.column))) }
            return []
        }
        return statements
    }

    /// The one statement that reads `sampleValues`.
    static func sampleStatement(table: String, columns: [String]) -> SQLStatement {
        let samples = columns.map { column in
            let quoted = SQL.quote(column)
            return "(SELECT \(quoted) FROM (SELECT \(quoted) FROM \(SQL.quote(table)) LIMIT 1000) AS sample WHERE \(quoted) IS NOT NULL LIMIT 1)"
        }
        return SQLStatement("SELECT " + samples.joined(separator: ", "))
    }

    /// How a date column stores its values, judged from a sample value (see `sampleValues`).
    static func encoding(of sample: SQLValue, declared: String) -> DateEncoding {
        switch sample {
        case .integer(let value): return abs(value) >= 100_000_000_000 ? .epochMilliseconds : .epochSeconds
        case .real(let value): return abs(value) >= 1e11 ? .epochMilliseconds : .epochSeconds
        case .text: return .isoText
        default:
            // Nothing to judge by: Drizzle declares integer timestamps, Better Auth's Kysely "date".
            return declared.lowercased().contains("int") ? .epochMilliseconds : .isoText
        }
    }
}

/// Everything missing from a database's Better Auth tables.
public struct SchemaProblems: Error, Sendable, CustomStringConvertible {
    public let problems: [AuthSchema.Problem]
    public var description: String {
        "this database's Better Auth tables lack what Gatehouse needs:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}
