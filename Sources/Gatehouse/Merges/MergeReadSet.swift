import JOSE
import Storage

/// Every row a merge of U2 (source) into U1 (target) depends on, read in one snapshot, with the
/// fingerprint that a plan records and apply re-checks: a hash over the full contents of each row,
/// grouped so that a refusal can say what changed.
struct MergeReadSet {
    /// Rows of one referencing column, for each user.
    struct Referencing {
        let reference: ReferenceGraph.Reference
        let target: [MergeRowImage]
        let source: [MergeRowImage]
    }

    let graph: ReferenceGraph
    let shapes: [String: MergeTableShape]
    let targetID: BetterAuthUserID
    let sourceID: BetterAuthUserID
    let targetUser: MergeRowImage
    let sourceUser: MergeRowImage
    let targetAccounts: [MergeRowImage]
    let sourceAccounts: [MergeRowImage]
    let sourceSessions: [MergeRowImage]
    /// Rows of tables referencing `session` that point at U2's sessions.
    let sessionDependents: [(reference: ReferenceGraph.Reference, rows: [MergeRowImage])]
    let verifications: [MergeRowImage]
    /// Better Auth plugin tables (anything referencing `user` other than account and session).
    let plugins: [Referencing]
    let targetSync: MergeRowImage?
    let sourceSync: MergeRowImage?
    let sync: [Referencing]
    let rolesTable: String?
    let targetRoles: [MergeRowImage]
    let sourceRoles: [MergeRowImage]
    /// Group label → hash of its rows.
    let groupHashes: [String: String]
    /// The hash of everything.
    let fingerprint: String

    /// The allow-list table: roles granted to a sub, with no foreign key to follow.
    static let allowList = "allow_list"

    /// Reads the rows. Call inside a read or write transaction so they form one snapshot.
    /// Reads both users' rows. With `locking` (apply, inside its write transaction) every row read is locked until
    /// the transaction ends: on Postgres a concurrent write to one of them (Better Auth refreshing a session, the sync
    /// server adding a workspace) either committed before the read, and the read sees it, or waits for the merge.
    static func read(_ store: Store, source: BetterAuthUserID, target: BetterAuthUserID, locking: Bool = false) throws -> MergeReadSet {
        let db = store.db, schema = store.schema
        let graph = try ReferenceGraph.discover(db, schema: schema)
        // Every table read below, its columns read at once.
        let tables = [schema.user.name, schema.account.name, schema.session.name, schema.verification?.name, graph.syncUsersTable, allowList]
            .compactMap { $0 } + (graph.toAuthSession + graph.toAuthUser + graph.toSyncUsers).map(\.table)
        var shapes = try MergeTableShape.read(db, tables: Array(Set(tables)).sorted())
        func shape(_ table: String) throws -> MergeTableShape {
            if let known = shapes[table] { return known }
            let read = try MergeTableShape.read(db, table: table)
            shapes[table] = read
            return read
        }
        func physical(_ table: AuthSchema.Table, _ field: AuthSchema.Field) -> String { table.column(field) }

        // Two batches (`SQLDatabase.batch`: on Postgres a round trip or two each, not one per statement): first the
        // rows found by the users' ids and subs, then the rows found through those (sessions' rows, sync rows'
        // children, verification rows by U2's email).
        let users = try shape(schema.user.name), accounts = try shape(schema.account.name), sessions = try shape(schema.session.name)
        let userID = physical(schema.user, .id), accountUser = physical(schema.account, .userId)
        let first = ReadBatch(db: db, locking: locking)
        let targetUserRows = first.rows(users, where: userID, is: .text(target.rawValue))
        let sourceUserRows = first.rows(users, where: userID, is: .text(source.rawValue))
        let targetAccountRows = first.rows(accounts, where: accountUser, is: .text(target.rawValue))
        let sourceAccountRows = first.rows(accounts, where: accountUser, is: .text(source.rawValue))
        let sourceSessionRows = first.rows(sessions, where: physical(schema.session, .userId), is: .text(source.rawValue))
        let syncUsers = try graph.syncUsersTable.map(shape)
        let targetSyncRows = syncUsers.flatMap { first.rows($0, where: "sub", is: .text(target.syncSub.rawValue)) }
        let sourceSyncRows = syncUsers.flatMap { first.rows($0, where: "sub", is: .text(source.syncSub.rawValue)) }
        let allowListColumns = try shapes[allowList]?.columns ?? db.columns(of: allowList).map(\.name)
        let roles = Set(allowListColumns).isSuperset(of: ["sub", "role"]) ? try shape(allowList) : nil
        let targetRoleRows = roles.flatMap { first.rows($0, where: "sub", is: .text(target.syncSub.rawValue)) }
        let sourceRoleRows = roles.flatMap { first.rows($0, where: "sub", is: .text(source.syncSub.rawValue)) }
        try first.run()

        guard let targetUser = first.images(targetUserRows).first else {
            throw GatehouseError.notFound("user \(target) no longer exists", fix: "find the user again and plan again")
        }
        guard let sourceUser = first.images(sourceUserRows).first else {
            throw GatehouseError.notFound("user \(source) no longer exists", fix: "find the user again and plan again")
        }
        let targetAccounts = first.images(targetAccountRows), sourceAccounts = first.images(sourceAccountRows)
        let sourceSessions = first.images(sourceSessionRows)
        let targetSync = first.images(targetSyncRows).first, sourceSync = first.images(sourceSyncRows).first

        let second = ReadBatch(db: db, locking: locking)
        let dependentRows = try graph.toAuthSession.map { reference in
            let child = try shape(reference.table)
            return (reference, sourceSessions.map { second.rows(child, reference, pointingAt: $0) })
        }
        var verificationRows: Int?, verification: MergeTableShape?
        if let table = schema.verification {
            let shape = try shape(table.name)
            let email = sourceUser[physical(schema.user, .email)].string ?? ""
            // U2's rows by its email or id (`VerificationRows`).
            verification = shape
            let read = VerificationRows.statement(db.dialect, table: table, shape: shape, email: email, userID: source.rawValue, locking: locking)
            verificationRows = second.custom(shape, read.sql, read.arguments)
        }
        let pluginRows = try graph.toAuthUser.filter { $0.table != schema.account.name && $0.table != schema.session.name }.map { reference in
            let child = try shape(reference.table)
            return (reference, second.rows(child, reference, pointingAt: targetUser), second.rows(child, reference, pointingAt: sourceUser))
        }
        var syncRows: [(ReferenceGraph.Reference, Int?, Int?)] = []
        if graph.syncUsersTable != nil {
            for reference in graph.toSyncUsers {
                let child = try shape(reference.table)
                syncRows.append((reference, targetSync.flatMap { second.rows(child, reference, pointingAt: $0) },
                                 sourceSync.flatMap { second.rows(child, reference, pointingAt: $0) }))
            }
        }
        try second.run()

        // The groups, in the order the fingerprint has always taken them (a stored plan's must match).
        var groups: [(String, [MergeRowImage])] = [("schema", [])]
        groups += [("U1's user row", [targetUser]), ("U2's user row", [sourceUser])]
        groups += [("U1's accounts", targetAccounts), ("U2's accounts", sourceAccounts)]
        groups.append(("U2's sessions", sourceSessions))
        let dependents = dependentRows.map { reference, tickets in (reference: reference, rows: tickets.flatMap(second.images)) }
        for (reference, rows) in dependents { groups.append(("\(reference.table) rows of U2's sessions", rows)) }
        let verifications = second.images(verificationRows)
        if verification != nil { groups.append(("verification rows for U2", verifications)) }
        let plugins = pluginRows.map { Referencing(reference: $0.0, target: second.images($0.1), source: second.images($0.2)) }
        for rows in plugins { groups += [("\(rows.reference) of U1", rows.target), ("\(rows.reference) of U2", rows.source)] }
        let sync = syncRows.map { Referencing(reference: $0.0, target: second.images($0.1), source: second.images($0.2)) }
        if graph.syncUsersTable != nil {
            groups += [("U1's sync users row", targetSync.map { [$0] } ?? []), ("U2's sync users row", sourceSync.map { [$0] } ?? [])]
            for rows in sync { groups += [("\(rows.reference) of U1", rows.target), ("\(rows.reference) of U2", rows.source)] }
        }
        let targetRoles = first.images(targetRoleRows), sourceRoles = first.images(sourceRoleRows)
        let rolesTable = roles.map { _ in allowList }
        if roles != nil { groups += [("U1's allow-list roles", targetRoles), ("U2's allow-list roles", sourceRoles)] }

        var hashes: [String: String] = [:]
        var all = "gatehouse-merge-v1\n\(source)\n\(target)\n"
        for (label, rows) in groups {
            let text = label == "schema" ? graph.fingerprintText : rows.map(\.fingerprintText).joined(separator: "\n")
            let hash = SHA256.hex(text)
            hashes[label] = hash
            all += "\(label):\(hash)\n"
        }
        return MergeReadSet(graph: graph, shapes: shapes, targetID: target, sourceID: source, targetUser: targetUser, sourceUser: sourceUser,
                            targetAccounts: targetAccounts, sourceAccounts: sourceAccounts, sourceSessions: sourceSessions,
                            sessionDependents: dependents, verifications: verifications, plugins: plugins,
                            targetSync: targetSync, sourceSync: sourceSync, sync: sync, rolesTable: rolesTable,
                            targetRoles: targetRoles, sourceRoles: sourceRoles, groupHashes: hashes, fingerprint: SHA256.hex(all))
    }

    /// Row reads collected for one `SQLDatabase.batch`, each answered with one table's row images.
    final class ReadBatch {
        let db: SQLDatabase
        let locking: Bool
        private var statements: [SQLStatement] = []
        private var shapes: [MergeTableShape] = []
        private var results: [SQLBatchResult] = []

        init(db: SQLDatabase, locking: Bool) {
            self.db = db
            self.locking = locking
        }

        /// Asks for the rows of `shape` whose `column` is `value`; nil (no rows) for a NULL value.
        func rows(_ shape: MergeTableShape, where column: String, is value: SQLValue) -> Int? {
            guard !value.isNull else { return nil }
            return custom(shape, shape.rowsSQL(db, locking: locking, where: [column]), [value])
        }

        /// Asks for the rows of `reference`'s table that point at `parent`; nil (no rows) when the key's values
        /// there hold a NULL.
        func rows(_ shape: MergeTableShape, _ reference: ReferenceGraph.Reference, pointingAt parent: MergeRowImage) -> Int? {
            guard let values = reference.values(pointingAt: parent) else { return nil }
            return custom(shape, shape.rowsSQL(db, locking: locking, where: reference.columns), values)
        }

        /// Asks for the rows of `shape` that `sql` (selecting `shape.selectList`) finds.
        func custom(_ shape: MergeTableShape, _ sql: String, _ arguments: [SQLBindable]) -> Int {
            statements.append(SQLStatement(sql, arguments))
            shapes.append(shape)
            return statements.count - 1
        }

        func run() throws { results = try db.batch(statements) }

        /// The rows one request found, as images.
        func images(_ request: Int?) -> [MergeRowImage] {
            request.map { results[$0].rows.map(shapes[$0].image) } ?? []
        }
    }

    /// The groups whose rows differ from a plan's.
    func changedGroups(since hashes: [String: String]) -> [String] {
        Set(groupHashes.keys).union(hashes.keys).sorted().filter { groupHashes[$0] != hashes[$0] }
    }
}
