import Storage

/// Indexes that account inspection needs on Better Auth's tables and that some shapes lack
/// (Drizzle schemas have no index on `userId`; no shape indexes `accountId` alone), and the two that find a user's
/// verification rows without reading all of them (`VerificationRows`; not on D1).
///
/// A migration is static SQL, but the column names differ by shape (`userId` or `user_id`) and the
/// tables may be renamed, so these are created from the schema map under `gatehouse_` names, and
/// only where no existing index already starts with the column. `Store.initialize` creates them (the
/// one schema step a .sql migration cannot express); `gatehouse accounts index` does the same on request.
public enum AccountIndexes {
    /// An index Gatehouse wants.
    public struct Plan: Sendable, Codable, Equatable {
        /// `gatehouse_account_accountId_idx`.
        public let name: String
        public let table: String
        /// Physical column names, in index order.
        public let columns: [String]
        /// What it serves.
        public let purpose: String
        /// Whether an index (Gatehouse's or another) already serves it.
        public let present: Bool
        /// The index that serves it, when present.
        public let servedBy: String?
        /// Whether it serves a prefix range, which needs its first column in byte order (`SQLDialect.byteOrdered`).
        var byteOrdered = false
        /// An index on an expression of `columns` rather than on the columns themselves: its key as written.
        var expression: String?
        /// The index method when not the engine's default (Postgres's `hash`).
        var method: String?

        func sql(_ dialect: SQLDialect) -> String {
            let keys = expression.map { ["(\($0))"] } ?? columns.enumerated().map { index, column in
                index == 0 && byteOrdered ? dialect.byteOrdered(SQL.quote(column)) : SQL.quote(column)
            }
            let using = method.map { " USING \($0)" } ?? ""
            return "CREATE INDEX IF NOT EXISTS \(SQL.quote(name)) ON \(SQL.quote(table))\(using) (\(keys.joined(separator: ", ")))"
        }

        private enum CodingKeys: String, CodingKey { case name, table, columns, purpose, present, servedBy }
    }

    /// Every wanted index, present or not.
    public static func plans(_ db: SQLDatabase, schema: AuthSchema) throws -> [Plan] {
        let wanted: [(AuthSchema.Table, [AuthSchema.Field], String, byteOrdered: Bool)] = [
            (schema.user, [.email], "email prefix search (users search)", true),
            // One column each: an index holding the id too would answer `SELECT id FROM user` scans in its own order.
            (schema.user, [.name], "users search pages in name order; a name's twins (the splitIdentity filter)", true),
            (schema.user, [.createdAt], "users search pages newest first (--sort created)", false),
            (schema.account, [.accountId, .providerId], "lookup by provider account id; duplicate provider accounts (accounts check)", false),
            (schema.account, [.userId], "a user's accounts (users show); users without accounts (accounts check)", false),
            (schema.session, [.userId], "a user's sessions (users show)", false),
        ]
        // A user's verification rows by the end of their identifiers and by their values (`VerificationRows`), where
        // the dialect has a suffix index, and only where the store's role may make them (a server role may own none
        // of Better Auth's tables): the lookup finds the same rows without them, and such a store still opens.
        // A refresh token by its first 16 characters: how Google's Cross-Account Protection names the one token a
        // token-revoked event revokes (`GoogleSecurityInbox`); without it, each such event reads every account.
        var refreshPrefix: Plan?
        if let refresh = schema.account.columns[.refreshToken] {
            let name = "gatehouse_account_refreshToken_prefix_idx"
            refreshPrefix = Plan(name: name, table: schema.account.name, columns: [refresh],
                                 purpose: "a refresh token by its first 16 characters (Google's token-revoked events)", present: false, servedBy: nil,
                                 expression: AccountIndexes.refreshTokenPrefix(schema))
        }
        let suffixIndex = db.dialect.suffixIndex
        var verification = suffixIndex == nil ? nil : schema.verification
        if let table = verification, try !db.mayCreateIndex(on: table.name) { verification = nil }
        // Every table's indexes at once (on D1, two requests rather than two a table).
        let indexes = try db.indexes(ofEach: wanted.map { $0.0.name } + (verification.map { [$0.name] } ?? []))
        var plans = wanted.map { table, fields, purpose, byteOrdered in
            let columns = fields.compactMap { table.columns[$0] }
            let servedBy = leadingIndex(indexes[table.name] ?? [], column: columns[0], byteOrdered: byteOrdered)
            return Plan(name: name(table, fields), table: table.name, columns: columns, purpose: purpose, present: servedBy != nil,
                        servedBy: servedBy, byteOrdered: byteOrdered)
        }
        if let plan = refreshPrefix {
            let servedBy = (indexes[plan.table] ?? []).first { $0.name == plan.name }?.name
            plans.append(Plan(name: plan.name, table: plan.table, columns: plan.columns, purpose: plan.purpose, present: servedBy != nil,
                              servedBy: servedBy, expression: plan.expression))
        }
        if let table = verification, let suffixIndex {
            let existing = indexes[table.name] ?? []
            // The identifier index is found by its name: no other index has its key.
            let ends = switch suffixIndex.lookup {
            case .reversedRange: "gatehouse_verification_identifier_suffix_idx"
            case .tailEquality: "gatehouse_verification_identifier_tail_idx"
            }
            let endsServedBy = existing.first { $0.name == ends }?.name
            plans.append(Plan(name: ends, table: table.name, columns: [table.column(.identifier)],
                              purpose: "verification rows ending in a user's email (merge, user deletion)", present: endsServedBy != nil,
                              servedBy: endsServedBy,
                              expression: suffixIndex.key(table.col(.identifier))))
            // A value (a JSON state, a token) may be longer than a B-tree entry holds (`longValueIndexMethod`). Any
            // index on the column serves the equality.
            let value = table.column(.value)
            let valueServedBy = leadingIndex(existing, column: value, byteOrdered: false)
            plans.append(Plan(name: name(table, [.value]), table: table.name, columns: [value],
                              purpose: "verification rows holding a user's id (merge, user deletion)", present: valueServedBy != nil,
                              servedBy: valueServedBy, method: db.dialect.longValueIndexMethod))
        }
        return plans
    }

    /// The key of the refresh token prefix index, as a lookup must write it for the index to serve it.
    public static func refreshTokenPrefix(_ schema: AuthSchema) -> String {
        "substr(\(schema.account.col(.refreshToken)), 1, 16)"
    }

    /// `gatehouse_<table>_<fields>_idx`.
    private static func name(_ table: AuthSchema.Table, _ fields: [AuthSchema.Field]) -> String {
        "gatehouse_\(table.logical)_\(fields.map(\.rawValue).joined(separator: "_"))_idx"
    }

    /// The missing indexes.
    public static func missing(_ db: SQLDatabase, schema: AuthSchema) throws -> [Plan] {
        try plans(db, schema: schema).filter { !$0.present }
    }

    /// Creates the missing indexes in one write transaction; returns their names.
    @discardableResult
    public static func create(_ db: SQLDatabase, schema: AuthSchema) throws -> [String] {
        // Checked before taking the write lock: on a store that has them, this writes nothing.
        guard try !missing(db, schema: schema).isEmpty else { return [] }
        return try db.write {
            let wanted = try AccountIndexes.missing(db, schema: schema)
            for plan in wanted { try db.execute(plan.sql(db.dialect)) }
            return wanted.map(\.name)
        }
    }

    /// Creates the missing indexes as an audited change (`accounts.index`).
    @discardableResult
    public static func create(_ store: Store, actor: Actor) throws -> [String] {
        let wanted: [Plan] = try AccountIndexes.missing(store.db, schema: store.schema)
        guard !wanted.isEmpty else { return [] }
        return try store.change(actor: actor, action: "accounts.index", subject: store.path,
                                details: ["created": .list(wanted.map(\.name))]) {
            try create(store.db, schema: store.schema)
        }
    }

    /// The name of an index on `table` whose first column is `column` (in byte order when `byteOrdered`), if any.
    package static func leadingIndex(_ indexes: [IndexInfo], column: String, byteOrdered: Bool) -> String? {
        indexes.first { $0.columns.first == column && (!byteOrdered || $0.leadingColumnByteOrdered) }?.name
    }
}
