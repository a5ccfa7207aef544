import Storage

/// Every column in the store that points at a person: found through the schema's foreign keys
/// (`PRAGMA foreign_key_list` over every table), never through a fixed list, so a table added later
/// is covered without a code change.
///
/// Three kinds of reference matter to a merge: to the sync server's `users` row (workspaces,
/// subscriptions, anything added later), to Better Auth's `user` row (account, session, and plugin
/// tables such as passkeys or two-factor), and to Better Auth's `session` rows (which a merge deletes).
/// Gatehouse's own `gatehouse_*` tables are bookkeeping and are left out.
public struct ReferenceGraph: Sendable, Equatable {
    /// One foreign key: a column, or several together (a composite key such as `(user_id, user_email) → user(id, email)`).
    public struct Reference: Sendable, Hashable, CustomStringConvertible {
        /// The child table.
        public let table: String
        /// The child columns holding the parent's values, in key order.
        public let columns: [String]
        /// The parent table.
        public let parentTable: String
        /// The parent columns referenced, pairwise with `columns` (the parent's primary key when the DDL names none).
        public let parentColumns: [String]
        /// The declared `ON DELETE` action.
        public let onDelete: String
        /// Whether the key's check waits for the commit in a merge's transaction (`ForeignKeyInfo.deferrable`).
        public let deferrable: Bool

        public init(table: String, columns: [String], parentTable: String, parentColumns: [String], onDelete: String, deferrable: Bool) {
            precondition(!columns.isEmpty && columns.count == parentColumns.count, "a foreign key pairs its columns with the parent's")
            self.table = table
            self.columns = columns
            self.parentTable = parentTable
            self.parentColumns = parentColumns
            self.onDelete = onDelete
            self.deferrable = deferrable
        }

        /// `passkey.userId → user.id`; `odd.(uid, mail) → user.(id, email)` for a composite key.
        public var description: String {
            columns.count == 1 ? "\(table).\(columns[0]) → \(parentTable).\(parentColumns[0])"
                : "\(table).(\(columns.joined(separator: ", "))) → \(parentTable).(\(parentColumns.joined(separator: ", ")))"
        }

        /// The values a child row holds when it points at `parent`; nil when one is NULL (a key with a NULL points
        /// at no row: `MATCH SIMPLE`, the default of both engines).
        func values(pointingAt parent: MergeRowImage) -> [SQLValue]? {
            let values = parentColumns.map { parent[$0] }
            return values.contains(where: \.isNull) ? nil : values
        }

        /// The changes that point a child row at `parent`.
        func pointing(at parent: MergeRowImage) -> [String: SQLValue] {
            Dictionary(uniqueKeysWithValues: zip(columns, parentColumns.map { parent[$0] }))
        }
    }

    /// The sync server's users table, when this store has one.
    public let syncUsersTable: String?
    /// Columns referencing the sync server's `users` rows.
    public let toSyncUsers: [Reference]
    /// Columns referencing Better Auth's `user` rows (account and session included).
    public let toAuthUser: [Reference]
    /// Columns referencing Better Auth's `session` rows.
    public let toAuthSession: [Reference]

    /// The sync server's users table name.
    public static let syncUsers = "users"

    /// Reads the graph from the schema, composite keys included (one `Reference` per key).
    public static func discover(_ db: SQLDatabase, schema: AuthSchema) throws -> ReferenceGraph {
        let syncTable = try db.tableExists(syncUsers) ? syncUsers : nil
        var toSync: [Reference] = [], toUser: [Reference] = [], toSession: [Reference] = []
        let userTable = schema.user.name.lowercased(), sessionTable = schema.session.name.lowercased()
        let tables = try db.tableNames().filter { !$0.hasPrefix("gatehouse_") }
        let keysByTable = try db.foreignKeys(ofEach: tables)
        var parentColumns: [String: [ColumnInfo]] = [:]
        for table in tables {
            let keys = keysByTable[table] ?? []
            let order = keys.map(\.constraint)
            let grouped = Dictionary(grouping: keys, by: \.constraint)
            for (_, columns) in grouped.sorted(by: { order.firstIndex(of: $0.key)! < order.firstIndex(of: $1.key)! }) {
                guard let first = columns.first else { continue }
                let parent = first.referencedTable
                let lowered = parent.lowercased()
                let kind: Int
                if lowered == syncUsers && syncTable != nil { kind = 0 } else if lowered == userTable { kind = 1 } else if lowered == sessionTable { kind = 2 } else { continue }
                let referenced: [String]
                if columns.allSatisfy({ $0.referencedColumn != nil }) {
                    referenced = columns.compactMap(\.referencedColumn)
                } else {
                    referenced = try primaryKey(of: parent, columns: {
                        if let known = parentColumns[parent] { return known }
                        let read = try db.columns(of: parent)
                        parentColumns[parent] = read
                        return read
                    }())
                    guard referenced.count == columns.count else {
                        throw GatehouseError("table \"\(table)\" has a foreign key of \(columns.count) column(s) to \"\(parent)\", whose primary key has \(referenced.count)",
                                             fix: "name the parent's columns in the key (REFERENCES \(parent) (…)), or merge these two users by hand")
                    }
                }
                let reference = Reference(table: table, columns: columns.map(\.column), parentTable: parent, parentColumns: referenced,
                                          onDelete: first.onDelete, deferrable: first.deferrable)
                switch kind {
                case 0: toSync.append(reference)
                case 1: toUser.append(reference)
                default: toSession.append(reference)
                }
            }
        }
        return ReferenceGraph(syncUsersTable: syncTable, toSyncUsers: toSync, toAuthUser: toUser, toAuthSession: toSession)
    }

    /// The primary-key columns of a parent table, in key order.
    static func primaryKey(of table: String, columns: [ColumnInfo]) throws -> [String] {
        let keys = columns.filter { $0.primaryKeyPosition > 0 }.sorted { $0.primaryKeyPosition < $1.primaryKeyPosition }
        guard !keys.isEmpty else {
            throw GatehouseError("foreign keys point at table \"\(table)\", which has no primary key",
                                 fix: "merge these two users by hand")
        }
        return keys.map(\.name)
    }

    /// A stable description, part of a plan's fingerprint: a schema change between plan and apply
    /// (a new referencing table) makes the plan stale.
    var fingerprintText: String {
        ([syncUsersTable ?? "-"] + (toSyncUsers + toAuthUser + toAuthSession).map { "\($0)/\($0.onDelete)" }).joined(separator: "\n")
    }
}
