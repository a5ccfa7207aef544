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
        var groups: [(String, [MergeRowImage])] = [("schema", [])]

        let users = try shape(schema.user.name)
        let userID = physical(schema.user, .id)
        guard let targetUser = try users.rows(db, locking: locking, where: userID, is: .text(target.rawValue)).first else {
            throw GatehouseError.notFound("user \(target) no longer exists", fix: "find the user again and plan again")
        }
        guard let sourceUser = try users.rows(db, locking: locking, where: userID, is: .text(source.rawValue)).first else {
            throw GatehouseError.notFound("user \(source) no longer exists", fix: "find the user again and plan again")
        }
        groups += [("U1's user row", [targetUser]), ("U2's user row", [sourceUser])]

        let accounts = try shape(schema.account.name), accountUser = physical(schema.account, .userId)
        let targetAccounts = try accounts.rows(db, locking: locking, where: accountUser, is: .text(target.rawValue))
        let sourceAccounts = try accounts.rows(db, locking: locking, where: accountUser, is: .text(source.rawValue))
        groups += [("U1's accounts", targetAccounts), ("U2's accounts", sourceAccounts)]

        let sessions = try shape(schema.session.name)
        let sourceSessions = try sessions.rows(db, locking: locking, where: physical(schema.session, .userId), is: .text(source.rawValue))
        groups.append(("U2's sessions", sourceSessions))
        var dependents: [(reference: ReferenceGraph.Reference, rows: [MergeRowImage])] = []
        for reference in graph.toAuthSession {
            let child = try shape(reference.table)
            let rows = try sourceSessions.flatMap { try child.rows(db, locking: locking, where: reference.column, is: $0[reference.parentColumn]) }
            dependents.append((reference, rows))
            groups.append(("\(reference.table) rows of U2's sessions", rows))
        }

        var verifications: [MergeRowImage] = []
        if let table = schema.verification {
            let verification = try shape(table.name)
            let email = sourceUser[physical(schema.user, .email)].string ?? ""
            let identifier = table.col(.identifier), value = table.col(.value)
            // Better Auth keys verification rows by the email (`email`, `sign-in-otp-<email>`,
            // `email-verification-otp-<email>`, `<purpose>:<email>`) or, for password resets, holds the user id as value.
            verifications = try db.rows("""
                SELECT \(verification.selectList) FROM \(verification.sql)
                WHERE \(identifier) = ?1
                   OR (length(\(identifier)) > length(?1) AND substr(\(identifier), length(\(identifier)) - length(?1) + 1) = ?1
                       AND substr(\(identifier), length(\(identifier)) - length(?1), 1) IN (':', '-'))
                   OR \(value) = ?2
                ORDER BY \(verification.orderList)\(locking ? db.dialect.lockingRead : "")
                """, [email, source.rawValue]).map(verification.image)
            groups.append(("verification rows for U2", verifications))
        }

        var plugins: [Referencing] = []
        for reference in graph.toAuthUser where reference.table != schema.account.name && reference.table != schema.session.name {
            let child = try shape(reference.table)
            let rows = Referencing(reference: reference,
                                   target: try child.rows(db, locking: locking, where: reference.column, is: targetUser[reference.parentColumn]),
                                   source: try child.rows(db, locking: locking, where: reference.column, is: sourceUser[reference.parentColumn]))
            plugins.append(rows)
            groups += [("\(reference) of U1", rows.target), ("\(reference) of U2", rows.source)]
        }

        var targetSync: MergeRowImage?, sourceSync: MergeRowImage?
        var sync: [Referencing] = []
        if let table = graph.syncUsersTable {
            let syncUsers = try shape(table)
            targetSync = try syncUsers.rows(db, locking: locking, where: "sub", is: .text(target.syncSub.rawValue)).first
            sourceSync = try syncUsers.rows(db, locking: locking, where: "sub", is: .text(source.syncSub.rawValue)).first
            groups += [("U1's sync users row", targetSync.map { [$0] } ?? []), ("U2's sync users row", sourceSync.map { [$0] } ?? [])]
            for reference in graph.toSyncUsers {
                let child = try shape(reference.table)
                let rows = Referencing(reference: reference,
                                       target: try targetSync.map { try child.rows(db, locking: locking, where: reference.column, is: $0[reference.parentColumn]) } ?? [],
                                       source: try sourceSync.map { try child.rows(db, locking: locking, where: reference.column, is: $0[reference.parentColumn]) } ?? [])
                sync.append(rows)
                groups += [("\(reference) of U1", rows.target), ("\(reference) of U2", rows.source)]
            }
        }

        var rolesTable: String?, targetRoles: [MergeRowImage] = [], sourceRoles: [MergeRowImage] = []
        let allowListColumns = try shapes[allowList]?.columns ?? db.columns(of: allowList).map(\.name)
        if Set(allowListColumns).isSuperset(of: ["sub", "role"]) {
            let roles = try shape(allowList)
            rolesTable = allowList
            targetRoles = try roles.rows(db, locking: locking, where: "sub", is: .text(target.syncSub.rawValue))
            sourceRoles = try roles.rows(db, locking: locking, where: "sub", is: .text(source.syncSub.rawValue))
            groups += [("U1's allow-list roles", targetRoles), ("U2's allow-list roles", sourceRoles)]
        }

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

    /// The groups whose rows differ from a plan's.
    func changedGroups(since hashes: [String: String]) -> [String] {
        Set(groupHashes.keys).union(hashes.keys).sorted().filter { groupHashes[$0] != hashes[$0] }
    }
}
