import Storage

/// Better Auth's tables as this database has them: their names, which columns exist (camelCase as
/// Better Auth's CLI writes them, or snake_case as Drizzle schemas often do), and how dates are stored.
///
/// Every query on Better Auth's tables is written against this map, so one code path serves
/// Better Auth 1.7, 1.4–1.6 (no `issuer`) and Drizzle-made databases.
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

        /// The table name, quoted for SQL.
        public var sql: String { Database.quote(name) }

        /// Whether the field exists here.
        public func has(_ field: Field) -> Bool { columns[field] != nil }

        /// The quoted column for a field. Required fields are checked when the schema is read; an optional
        /// field that is absent yields `NULL` so that SELECT lists stay valid.
        public func col(_ field: Field) -> String {
            columns[field].map(Database.quote) ?? "NULL"
        }

        /// The column's name here, unquoted (the logical name when the column is absent).
        public func column(_ field: Field) -> String { columns[field] ?? field.rawValue }

        /// The encoding of a date field (ISO text when unknown).
        public func encoding(_ field: Field) -> DateEncoding { dates[field] ?? .isoText }
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
        let encoding = user.encoding(.createdAt)
        if encoding != .isoText { parts.append("dates as \(encoding == .epochMilliseconds ? "epoch milliseconds" : "epoch seconds")") }
        if user.columns[.emailVerified] == "email_verified" { parts.append("snake_case columns") }
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
    public static func inspect(_ db: Database, configuration: StoreConfiguration) throws -> Result<AuthSchema, SchemaProblems> {
        var problems: [Problem] = []
        var tables: [String: Table] = [:]
        for logical in StoreConfiguration.betterAuthTables {
            let name = configuration.tableName(logical)
            let present = try db.columns(of: name)
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
            var dates: [Field: DateEncoding] = [:]
            let dateColumns = columns.filter { dateFields.contains($0.key) }.sorted { $0.key.rawValue < $1.key.rawValue }
            let samples = try sampleValues(db, table: name, columns: dateColumns.map(\.value))
            for ((field, column), sample) in zip(dateColumns, samples) {
                dates[field] = encoding(of: sample, declared: byName[column]?.declaredType ?? "")
            }
            tables[logical] = Table(logical: logical, name: name, columns: columns, dates: dates)
        }
        guard problems.isEmpty, let user = tables["user"], let session = tables["session"], let account = tables["account"] else {
            return .failure(SchemaProblems(problems: problems))
        }
        return .success(AuthSchema(user: user, session: session, account: account, verification: tables["verification"]))
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
    static func sampleValues(_ db: Database, table: String, columns: [String]) throws -> [SQLValue] {
        guard !columns.isEmpty else { return [] }
        let samples = columns.map { column in
            let quoted = Database.quote(column)
            return "(SELECT \(quoted) FROM (SELECT \(quoted) FROM \(Database.quote(table)) LIMIT 1000) WHERE \(quoted) IS NOT NULL LIMIT 1)"
        }
        guard let row = try db.row("SELECT " + samples.joined(separator: ", ")) else { return columns.map { _ in .null } }
        return columns.indices.map { row[$0] }
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
