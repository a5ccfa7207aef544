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
    /// One foreign-key column.
    public struct Reference: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The child table.
        public let table: String
        /// The child column holding the parent's value.
        public let column: String
        /// The parent table.
        public let parentTable: String
        /// The parent column referenced (the parent's primary key when the DDL names none).
        public let parentColumn: String
        /// The declared `ON DELETE` action.
        public let onDelete: String

        public var description: String { "\(table).\(column) → \(parentTable).\(parentColumn)" }
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

    /// Reads the graph from the schema. Refuses a composite foreign key to a person's row: a merge
    /// could not rewrite it column by column.
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
                guard columns.count == 1 else {
                    throw GatehouseError("table \"\(table)\" has a composite foreign key to \"\(parent)\"; a merge cannot move its rows safely",
                                         fix: "merge these two users by hand, or make that key a single column")
                }
                let parentColumn = try first.referencedColumn ?? primaryKey(of: parent, columns: {
                    if let known = parentColumns[parent] { return known }
                    let read = try db.columns(of: parent)
                    parentColumns[parent] = read
                    return read
                }())
                let reference = Reference(table: table, column: first.column, parentTable: parent,
                                          parentColumn: parentColumn, onDelete: first.onDelete)
                switch kind {
                case 0: toSync.append(reference)
                case 1: toUser.append(reference)
                default: toSession.append(reference)
                }
            }
        }
        return ReferenceGraph(syncUsersTable: syncTable, toSyncUsers: toSync, toAuthUser: toUser, toAuthSession: toSession)
    }

    /// The single primary-key column of a parent table.
    static func primaryKey(of table: String, columns: [ColumnInfo]) throws -> String {
        let keys = columns.filter { $0.primaryKeyPosition > 0 }
        guard keys.count == 1 else {
            throw GatehouseError("foreign keys point at table \"\(table)\", which has no single-column primary key",
                                 fix: "merge these two users by hand")
        }
        return keys[0].name
    }

    /// A stable description, part of a plan's fingerprint: a schema change between plan and apply
    /// (a new referencing table) makes the plan stale.
    var fingerprintText: String {
        ([syncUsersTable ?? "-"] + (toSyncUsers + toAuthUser + toAuthSession).map { "\($0)/\($0.onDelete)" }).joined(separator: "\n")
    }
}
