import Foundation
import Storage

/// Undoes a deletion inside its retention window: opens the sealed copy and inserts every row back exactly as it was
/// (every column, every type, its rowid when free), parents first, in one `BEGIN IMMEDIATE` transaction with
/// foreign-key checks deferred to the commit. It refuses, changing nothing, when a row's key is taken again (the
/// person signed up anew, or a sync row reused the key) or another unique value collides. Token columns come back
/// NULL: the tokens were revoked, and the copy never held them.
///
///     try UserDeletionUndo(store: store).undo(deletionID: "4", reason: "asked by mistake, SUP-1250", actor: actor)
public struct UserDeletionUndo {
    /// The store.
    public let store: Store
    /// The master key; loaded from the store's key file or the environment when nil.
    public let masterKey: MasterKey?

    public init(store: Store, masterKey: MasterKey? = nil) {
        self.store = store
        self.masterKey = masterKey
    }

    /// What an undo did.
    public struct Result: Sendable, Codable {
        public let deletionID: Int64
        public let userID: BetterAuthUserID
        public let undoneAt: Timestamp
        public let rowsRestored: Int
        /// Columns given back as NULL because the tokens they held were revoked.
        public let restoredAsNull: [String]
    }

    /// Undoes deletion `deletionID`.
    public func undo(deletionID: String, reason: String, actor: Actor, now: Timestamp = .now()) throws -> Result {
        let reason = try UserDeletionApplier.validate(reason: reason, what: "the deletion is undone")
        let key = try masterKey ?? MasterKey.load(storePath: store.path)
        let db = store.db
        return try db.write {
            try db.execute(db.dialect.deferForeignKeys)
            let row = try UserDeletionRecords.row(db, deletionID)
            let number = row["id"].int64 ?? 0, status = try row.string("status")
            guard status == "applied" else {
                throw GatehouseError.conflict("deletion \(number) is \(status)" + (status == "purged" ? " (its rows were destroyed after the retention period); it cannot be undone" : "; it cannot be undone again"))
            }
            let retainUntil = Timestamp(iso8601: try row.string("retain_until")) ?? now
            guard now <= retainUntil else {
                throw GatehouseError.conflict("deletion \(number)'s retention ended at \(retainUntil.iso8601); its rows are due to be purged and are not restored",
                                              fix: "restore the user from a backup if it must come back")
            }
            let userID = BetterAuthUserID(try row.string("user_id"))
            let sealed = try UserDeletionSealedRows.open(try row.blob("sealed_rows"), key: key, planID: try row.string("plan_id"), userID: userID, deletion: number)
            var writer = MergeStepWriter(db: db)
            var taken: [String] = []
            for step in sealed.steps {
                if try writer.shape(step.table).current(db, key: step.key) != nil { taken.append("\(step.table) \(step.key)") }
            }
            if !taken.isEmpty {
                let named = taken.prefix(20).map { "  - \($0)" }.joined(separator: "\n")
                throw GatehouseError.conflict("deletion \(number) cannot be undone: \(taken.count) row key(s) are taken again:\n\(named)",
                                              fix: "these rows were created since the deletion (a new sign-up?); resolve them by hand first; nothing was changed")
            }
            for step in sealed.steps.reversed() {
                do { try writer.reverse(step) } catch let error where !(error is GatehouseError) {
                    throw GatehouseError.conflict("deletion \(number) cannot be undone: \(step.table) \(step.key) collides with a row created since (\(error)); nothing was changed",
                                                  fix: "resolve the colliding row by hand first (a new user with the same email or sub?)")
                }
            }
            try db.execute("UPDATE gatehouse_user_deletions SET status = 'undone', undone_at = ?, undone_by = ?, undo_reason = ?, sealed_rows = NULL WHERE id = ?",
                           [now.iso8601, actor.name, reason, number])
            try store.audit.append(db, actor: actor, action: "user.delete.undo", subject: String(number), details: [
                "reason": .string(reason), "plan_id": .string(row["plan_id"].string ?? ""), "ticket": .string(row["ticket"].string ?? ""),
                "user_id": .string(userID.rawValue), "rows_restored": .int(Int64(sealed.steps.count)),
            ], at: now)
            let tokens = UserDeletionReadSet.tokenColumns(store.schema).map { "\(store.schema.account.name).\($0)" }
            let hadAccounts = sealed.steps.contains { $0.table == store.schema.account.name }
            return Result(deletionID: number, userID: userID, undoneAt: now, rowsRestored: sealed.steps.count, restoredAsNull: hadAccounts ? tokens : [])
        }
    }
}
