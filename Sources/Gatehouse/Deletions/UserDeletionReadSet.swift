import JOSE
import Storage

/// Every row that deleting one user removes, read in one snapshot, grouped, with the fingerprint a plan records
/// and apply re-checks. The rows are found as a merge finds them (`ReferenceGraph`: Better Auth's tables and plugin
/// tables by foreign key to `user` and `session`, the sync server's by foreign key to the `users` row with sub
/// `better_auth|<id>`, composite keys included), plus verification rows matched as merges match them, the
/// allow-list roles of the sub, and — because a deleted parent must not take rows along by `ON DELETE CASCADE`
/// that no sealed copy holds — every row that references a deleted row through any further foreign key.
struct UserDeletionReadSet {
    /// Rows deleted for one reason, and how far from the user row they sit (deeper rows go first).
    struct Group {
        let label: String
        let depth: Int
        let reason: String
        let rows: [MergeRowImage]
    }

    let userID: BetterAuthUserID
    let graph: ReferenceGraph
    let shapes: [String: MergeTableShape]
    let user: MergeRowImage
    let groups: [Group]
    /// Group label → hash of its rows.
    let groupHashes: [String: String]
    let fingerprint: String

    /// How many foreign-key hops below the rows found by the graph are followed.
    static let maxDescendantDepth = 6

    /// The `account` columns that hold tokens: left out of the fingerprint (the revocation step may clear them between
    /// plan and delete) and out of the sealed copy (they were revoked; undo gives them back as NULL).
    static func tokenColumns(_ schema: AuthSchema) -> [String] {
        [AuthSchema.Field.accessToken, .refreshToken, .idToken].filter { schema.account.has($0) }.map { schema.account.column($0) }
    }

    /// Reads the rows. Call inside a read or write transaction; with `locking` (apply) every row read stays locked.
    static func read(_ store: Store, user id: BetterAuthUserID, locking: Bool = false) throws -> UserDeletionReadSet {
        let db = store.db, schema = store.schema
        let graph = try ReferenceGraph.discover(db, schema: schema)
        var shapes: [String: MergeTableShape] = [:]
        func shape(_ table: String) throws -> MergeTableShape {
            if let known = shapes[table] { return known }
            let read = try MergeTableShape.read(db, table: table)
            shapes[table] = read
            return read
        }
        let users = try shape(schema.user.name), accounts = try shape(schema.account.name), sessions = try shape(schema.session.name)
        let first = MergeReadSet.ReadBatch(db: db, locking: locking)
        let userRows = first.rows(users, where: schema.user.column(.id), is: .text(id.rawValue))
        let accountRows = first.rows(accounts, where: schema.account.column(.userId), is: .text(id.rawValue))
        let sessionRows = first.rows(sessions, where: schema.session.column(.userId), is: .text(id.rawValue))
        let syncUsers = try graph.syncUsersTable.map(shape)
        let syncRows = syncUsers.flatMap { first.rows($0, where: "sub", is: .text(id.syncSub.rawValue)) }
        let roles = try db.tableExists(MergeReadSet.allowList) && Set(try db.columns(of: MergeReadSet.allowList).map(\.name)).isSuperset(of: ["sub", "role"])
            ? try shape(MergeReadSet.allowList) : nil
        let roleRows = roles.flatMap { first.rows($0, where: "sub", is: .text(id.syncSub.rawValue)) }
        try first.run()
        guard let user = first.images(userRows).first else {
            throw GatehouseError.notFound("user \(id) does not exist (any more)", fix: "find the user with \(command: .usersSearch, "…") and plan again")
        }
        let sessionImages = first.images(sessionRows), sync = first.images(syncRows).first

        let second = MergeReadSet.ReadBatch(db: db, locking: locking)
        var pending: [(label: String, depth: Int, reason: String, request: Int?)] = []
        for reference in graph.toAuthSession {
            let child = try shape(reference.table)
            for session in sessionImages {
                pending.append(("\(reference.table) rows of the user's sessions", 2, "references a deleted session (\(reference))",
                                second.rows(child, reference, pointingAt: session)))
            }
        }
        if let table = schema.verification {
            let verification = try shape(table.name)
            let email = user[schema.user.column(.email)].string ?? ""
            // As a merge matches them (`VerificationRows`): identifiers holding the email, or a password reset holding the id.
            let read = VerificationRows.statement(db.dialect, table: table, shape: verification, email: email, userID: id.rawValue, locking: locking)
            pending.append(("verification rows", 1, "a verification row for the user's email or id", second.custom(verification, read.sql, read.arguments)))
        }
        for reference in graph.toAuthUser where reference.table != schema.account.name && reference.table != schema.session.name {
            pending.append(("\(reference)", 1, "references the user (\(reference))", second.rows(try shape(reference.table), reference, pointingAt: user)))
        }
        if let sync {
            for reference in graph.toSyncUsers {
                pending.append(("\(reference)", 2, "references the user's sync users row (\(reference))",
                                second.rows(try shape(reference.table), reference, pointingAt: sync)))
            }
        }
        try second.run()

        var groups: [Group] = [Group(label: "user row", depth: 0, reason: "the user", rows: [user])]
        groups.append(Group(label: "accounts", depth: 1, reason: "the user's account (sign-in method)", rows: first.images(accountRows)))
        groups.append(Group(label: "sessions", depth: 1, reason: "the user's session", rows: sessionImages))
        // Several sessions' rows of one reference make one group.
        var merged: [(label: String, depth: Int, reason: String, rows: [MergeRowImage])] = []
        for item in pending {
            let rows = second.images(item.request)
            if let index = merged.firstIndex(where: { $0.label == item.label }) { merged[index].rows += rows } else { merged.append((item.label, item.depth, item.reason, rows)) }
        }
        groups += merged.map { Group(label: $0.label, depth: $0.depth, reason: $0.reason, rows: $0.rows) }
        if syncUsers != nil {
            groups.append(Group(label: "sync users row", depth: 1, reason: "the user's sync users row (sub \(id.syncSub.rawValue))", rows: sync.map { [$0] } ?? []))
        }
        if roles != nil { groups.append(Group(label: "allow-list roles", depth: 1, reason: "a role granted to the user's sub", rows: first.images(roleRows))) }
        groups += try descendants(store, of: groups, graph: graph, shape: shape, locking: locking)
        // A key from a person's table to itself (`user.invitedBy`, `users.invited_by`) would take other people along:
        // a deletion removes this user only, so such rows are refused by name for the operator to clear first.
        let userTable = schema.user.name, syncTable = graph.syncUsersTable
        let others = groups.filter { $0.depth > 0 }.flatMap { group in group.rows.map { (group, $0) } }.filter { _, row in
            row.table == userTable || (row.table == syncTable && row != sync)
        }
        if !others.isEmpty {
            let named = others.prefix(10).map { group, row in "  - \(row.table) \(shapes[row.table]!.key(of: row)) (\(group.reason))" }.joined(separator: "\n")
            throw GatehouseError.conflict("deleting \(id) would delete \(others.count) other person's row(s) that reference it:\n\(named)",
                                          fix: "clear those references by hand first (set them to NULL or to someone else), then plan again; nothing was changed")
        }

        var hashes: [String: String] = [:]
        var all = "gatehouse-user-deletion-v1\n\(id)\n\(graph.fingerprintText)\n"
        let tokens = Set(tokenColumns(schema))
        for group in groups {
            let text = group.rows.map { row in
                row.table == schema.account.name ? row.with(Dictionary(uniqueKeysWithValues: tokens.map { ($0, MergeValue(.null)) })).fingerprintText : row.fingerprintText
            }.joined(separator: "\n")
            let hash = SHA256.hex(text)
            hashes[group.label] = hash
            all += "\(group.label):\(hash)\n"
        }
        return UserDeletionReadSet(userID: id, graph: graph, shapes: shapes, user: user, groups: groups, groupHashes: hashes, fingerprint: SHA256.hex(all))
    }

    /// Rows referencing the rows of `groups` through foreign keys the graph does not already follow (a table
    /// referencing `workspaces`, say), level by level.
    private static func descendants(_ store: Store, of groups: [Group], graph: ReferenceGraph, shape: (String) throws -> MergeTableShape,
                                    locking: Bool) throws -> [Group] {
        let db = store.db, schema = store.schema
        // Children of these parents are found by the graph already.
        let followed = Set([schema.user.name, schema.session.name, graph.syncUsersTable].compactMap { $0?.lowercased() })
        let references = try DeletionReferences.all(db)
        var found: [Group] = []
        var frontier = groups.filter { $0.depth > 0 }.flatMap { group in group.rows.map { (row: $0, depth: group.depth) } }
            .filter { !followed.contains($0.row.table.lowercased()) }
        var seen = Set(groups.flatMap(\.rows).map { "\($0.table)|\($0.fingerprintText)" })
        var level = 0
        while !frontier.isEmpty {
            level += 1
            guard level <= maxDescendantDepth else {
                throw GatehouseError("rows referencing the user's rows go deeper than \(maxDescendantDepth) foreign keys; nothing was planned",
                                     fix: "delete this user's deepest rows by hand first, or report the schema")
            }
            let batch = MergeReadSet.ReadBatch(db: db, locking: locking)
            var asked: [(reference: ReferenceGraph.Reference, depth: Int, request: Int?)] = []
            for (row, depth) in frontier {
                for reference in references where reference.parentTable.lowercased() == row.table.lowercased() {
                    asked.append((reference, depth + 1, batch.rows(try shape(reference.table), reference, pointingAt: row)))
                }
            }
            try batch.run()
            var next: [(row: MergeRowImage, depth: Int)] = []
            for item in asked {
                let rows = batch.images(item.request).filter { seen.insert("\($0.table)|\($0.fingerprintText)").inserted }
                guard !rows.isEmpty else { continue }
                let label = "\(item.reference)"
                if let index = found.firstIndex(where: { $0.label == label }) {
                    let old = found[index]
                    found[index] = Group(label: label, depth: max(old.depth, item.depth), reason: old.reason, rows: old.rows + rows)
                } else {
                    found.append(Group(label: label, depth: item.depth, reason: "references a deleted row (\(item.reference))", rows: rows))
                }
                next += rows.map { ($0, item.depth) }
            }
            frontier = next
        }
        return found
    }

    /// The groups whose rows differ from a plan's.
    func changedGroups(since hashes: [String: String]) -> [String] {
        Set(groupHashes.keys).union(hashes.keys).sorted().filter { groupHashes[$0] != hashes[$0] }
    }

    /// The deletes, deepest rows first (children before their parents, as a key checked per statement needs), each
    /// row once.
    func steps() -> [MergeStep] {
        var seen = Set<String>(), steps: [MergeStep] = []
        for group in groups.enumerated().sorted(by: { ($0.element.depth, -$0.offset) > ($1.element.depth, -$1.offset) }).map(\.element) {
            for row in group.rows {
                let key = shapes[row.table]!.key(of: row)
                guard seen.insert("\(row.table)|\(key)").inserted else { continue }
                steps.append(MergeStep(group: group.label, operation: .delete, table: row.table, key: key, before: row, reason: group.reason))
            }
        }
        return steps
    }
}

/// Every foreign key between the store's tables (Gatehouse's own left out), composite keys as one reference each.
enum DeletionReferences {
    static func all(_ db: SQLDatabase) throws -> [ReferenceGraph.Reference] {
        let tables = try db.tableNames().filter { !$0.hasPrefix("gatehouse_") }
        var references: [ReferenceGraph.Reference] = []
        for (table, keys) in try db.foreignKeys(ofEach: tables).sorted(by: { $0.key < $1.key }) {
            let order = keys.map(\.constraint)
            for (_, columns) in Dictionary(grouping: keys, by: \.constraint).sorted(by: { order.firstIndex(of: $0.key)! < order.firstIndex(of: $1.key)! }) {
                guard let first = columns.first else { continue }
                let referenced = columns.allSatisfy({ $0.referencedColumn != nil })
                    ? columns.compactMap(\.referencedColumn)
                    : try ReferenceGraph.primaryKey(of: first.referencedTable, columns: try db.columns(of: first.referencedTable))
                guard referenced.count == columns.count else { continue }
                references.append(ReferenceGraph.Reference(table: table, columns: columns.map(\.column), parentTable: first.referencedTable,
                                                           parentColumns: referenced, onDelete: first.onDelete, deferrable: first.deferrable))
            }
        }
        return references
    }
}
