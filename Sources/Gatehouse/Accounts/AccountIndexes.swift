import Storage

/// Indexes that account inspection needs on Better Auth's tables and that some shapes lack
/// (Drizzle schemas have no index on `userId`; no shape indexes `accountId` alone).
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

        func sql(_ dialect: SQLDialect) -> String {
            let keys = columns.enumerated().map { index, column in
                index == 0 && byteOrdered ? dialect.byteOrdered(SQLDialect.quote(column)) : SQLDialect.quote(column)
            }
            return "CREATE INDEX IF NOT EXISTS \(SQLDialect.quote(name)) ON \(SQLDialect.quote(table)) (\(keys.joined(separator: ", ")))"
        }

        private enum CodingKeys: String, CodingKey { case name, table, columns, purpose, present, servedBy }
    }

    /// Every wanted index, present or not.
    public static func plans(_ db: SQLDatabase, schema: AuthSchema) throws -> [Plan] {
        let wanted: [(AuthSchema.Table, [AuthSchema.Field], String, byteOrdered: Bool)] = [
            (schema.user, [.email], "email prefix search (users search)", true),
            (schema.account, [.accountId, .providerId], "lookup by provider account id; duplicate provider accounts (accounts check)", false),
            (schema.account, [.userId], "a user's accounts (users show); users without accounts (accounts check)", false),
            (schema.session, [.userId], "a user's sessions (users show)", false),
        ]
        // Every table's indexes at once (on D1, two requests rather than two a table).
        let indexes = try db.indexes(ofEach: wanted.map { $0.0.name })
        return wanted.map { table, fields, purpose, byteOrdered in
            let columns = fields.compactMap { table.columns[$0] }
            let name = "gatehouse_\(table.logical)_\(fields.map(\.rawValue).joined(separator: "_"))_idx"
            let servedBy = leadingIndex(indexes[table.name] ?? [], column: columns[0], byteOrdered: byteOrdered)
            return Plan(name: name, table: table.name, columns: columns, purpose: purpose, present: servedBy != nil, servedBy: servedBy,
                        byteOrdered: byteOrdered)
        }
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
    static func leadingIndex(_ indexes: [IndexInfo], column: String, byteOrdered: Bool) -> String? {
        indexes.first { $0.columns.first == column && (!byteOrdered || $0.leadingColumnByteOrdered) }?.name
    }
}
