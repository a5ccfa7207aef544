import Foundation
import Storage

/// Applies a stored deletion plan: refuses a stale plan before anything happens, revokes the user's Apple tokens
/// (the injected `DeletionRevocation`) unless told not to with a reason, then deletes every planned row in one
/// `BEGIN IMMEDIATE` transaction that re-reads (and, on Postgres, locks) every row the plan read and refuses on any
/// difference — a session Better Auth wrote meanwhile, a new account, a changed row. The deleted rows are kept
/// sealed under the master key, with their token columns NULL, until the retention period ends. A kill at any
/// point leaves the store untouched or fully changed: the open transaction is rolled back.
///
/// `GATEHOUSE_TEST_DELETE_DELAY_MS` (tests only) sleeps that long after each delete inside the transaction.
///
///     let result = try UserDeletionApplier(store: store).apply(planID: "dp_…", revocation: .skip(reason: "revoked by hand"), actor: actor)
public struct UserDeletionApplier {
    /// The store.
    public let store: Store
    /// The master key the copies are sealed with; loaded from the store's key file or the environment when nil.
    public let masterKey: MasterKey?

    /// How long deleted rows stay restorable unless told otherwise.
    public static let defaultRetention = Seconds(30 * 86_400)
    /// The shortest and longest retention accepted.
    public static let retentionRange = Seconds(3_600)...Seconds(400 * 86_400)
    /// The environment variable that slows apply down for crash tests.
    public static let delayVariable = "GATEHOUSE_TEST_DELETE_DELAY_MS"

    public init(store: Store, masterKey: MasterKey? = nil) {
        self.store = store
        self.masterKey = masterKey
    }

    /// What an apply did.
    public struct Result: Sendable, Codable {
        public let deletionID: Int64
        public let planID: String
        public let userID: BetterAuthUserID
        public let ticket: String
        public let appliedAt: Timestamp
        public let retainUntil: Timestamp
        /// Rows deleted per table.
        public let deleted: [String: Int]
        /// What revocation did, per account; empty when skipped.
        public let revocation: [DeletionRevocationOutcome]
        /// The operator's reason for not revoking, when `--no-revoke`.
        public let noRevokeReason: String?
        /// Columns that an undo gives back as NULL (`account.accessToken`, …): the tokens were revoked.
        public let notRestorable: [String]
    }

    /// Loads a stored plan by id.
    public func plan(_ planID: String) throws -> UserDeletionPlan {
        guard planID.count <= 100, let text = try store.db.scalar("SELECT plan FROM gatehouse_user_deletion_plans WHERE id = ?", [planID]).string else {
            let shown = OperatorText.visible(planID.count > 40 ? String(planID.prefix(40)) + "…" : planID)
            throw GatehouseError.notFound("no deletion plan \"\(shown)\"", fix: "make one with \(command: .usersDeletePlan, "USER", .option(.ticket, "REF")); it prints the plan id")
        }
        return try MergeJSON.decode(UserDeletionPlan.self, text, what: "deletion plan \(planID)")
    }

    /// Checks a reason given with `--no-revoke` or `undo`: required, at most `MergeUndo.maxReasonLength` characters.
    public static func validate(reason: String, what: String) throws -> String {
        let text = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw GatehouseError.invalid("\(field: .reason) is empty", fix: "say why \(what), e.g. \(field: .reason) \"SUP-1240: asked by email\"") }
        guard text.count <= MergeUndo.maxReasonLength else {
            throw GatehouseError.invalid("\(field: .reason) is \(text.count) characters; at most \(MergeUndo.maxReasonLength)")
        }
        return try OperatorText.check(text, field: "\(field: .reason)", multiline: true)
    }

    /// Applies plan `planID`.
    public func apply(planID: String, revocation: DeletionRevocationChoice, retain: Seconds = defaultRetention, actor: Actor,
                      now: Timestamp = .now()) throws -> Result {
        guard Self.retentionRange.contains(retain) else {
            throw GatehouseError.invalid("the retention \(retain) is outside \(Self.retentionRange.lowerBound) … \(Self.retentionRange.upperBound)",
                                         fix: "pass a retention such as 30d")
        }
        var noRevokeReason: String?
        if case .skip(let reason) = revocation { noRevokeReason = try Self.validate(reason: reason, what: "tokens are not revoked") }
        let plan = try self.plan(planID)
        let key = try masterKey ?? MasterKey.load(storePath: store.path)
        let db = store.db
        try refuseIfApplied(planID)
        // Stale before revoking: a plan that cannot be applied must not revoke anyone's tokens.
        try db.read { try check(try UserDeletionReadSet.read(store, user: plan.userID), against: plan, planID: planID, revoked: false) }

        var outcomes: [DeletionRevocationOutcome] = []
        if case .revoke(let step) = revocation {
            do { outcomes = try step.revoke(plan.userID) } catch let error as GatehouseError {
                throw GatehouseError("revoking the Apple tokens of \(plan.userID) failed, so nothing was deleted: \(error.message)",
                                     fix: error.fix ?? "fix the revocation and apply again, or pass \(field: .noRevoke) with \(field: .reason)", code: error.code)
            }
            if let failed = outcomes.first(where: { !$0.allowsDeletion }) {
                throw GatehouseError("revoking the Apple tokens of \(plan.userID) failed for account \(failed.accountID) (\(failed.detail)), so nothing was deleted",
                                     fix: "fix the revocation and apply again, or pass \(field: .noRevoke) with \(field: .reason)")
            }
        }

        let delay = ProcessInfo.processInfo.environment[Self.delayVariable].flatMap(UInt32.init).map { min($0, 10_000) } ?? 0
        let tokens = UserDeletionReadSet.tokenColumns(store.schema), accountTable = store.schema.account.name
        let retainUntil = now.adding(seconds: retain.value)
        let revocationJSON = try MergeJSON.string(outcomes)
        let (id, steps): (Int64, [MergeStep]) = try db.write {
            try db.execute(db.dialect.deferForeignKeys)
            try refuseIfApplied(planID)
            let read = try UserDeletionReadSet.read(store, user: plan.userID, locking: true)
            try check(read, against: plan, planID: planID, revoked: !outcomes.isEmpty)
            let steps = read.steps()
            var writer = MergeStepWriter(db: db, shapes: read.shapes)
            if delay > 0 {
                for step in steps {
                    try writer.apply(step, at: now)
                    usleep(delay * 1000)
                }
            } else {
                try writer.apply(steps, at: now)
            }
            // Token columns never go into the copy: undo gives them back as NULL.
            let kept = steps.map { step -> MergeStep in
                guard step.table == accountTable else { return step }
                let before = step.before.with(Dictionary(uniqueKeysWithValues: tokens.filter { step.before.values[$0] != nil }.map { ($0, MergeValue(.null)) }))
                return MergeStep(group: step.group, operation: .delete, table: step.table, key: step.key, before: before, reason: step.reason)
            }
            let box = try UserDeletionSealedRows(format: 1, userID: plan.userID, deletedAt: now, steps: kept).seal(key: key, planID: planID)
            let summary = try MergeJSON.string(plan.tables)
            let id = try db.nextID(in: "gatehouse_user_deletions")
            try db.execute("""
                INSERT INTO gatehouse_user_deletions (id, plan_id, user_id, ticket, actor, status, applied_at, retain_until, revocation, no_revoke_reason, summary_json, sealed_rows)
                VALUES (?, ?, ?, ?, ?, 'applied', ?, ?, ?, ?, ?, ?)
                """, [id, planID, plan.userID.rawValue, plan.ticket, actor.name, now.iso8601, retainUntil.iso8601, revocationJSON,
                      noRevokeReason.map(SQLValue.text) ?? .null, summary, SQLValue.blob(box)])
            try store.audit.append(db, actor: actor, action: "user.delete.apply", subject: String(id), details: [
                "plan_id": .string(planID), "user_id": .string(plan.userID.rawValue), "ticket": .string(plan.ticket),
                "rows_deleted": .int(Int64(steps.count)), "retain_until": .string(retainUntil.iso8601),
                "revoked": .list(outcomes.filter { $0.status == "revoked" }.map(\.accountID)),
                "no_revoke_reason": noRevokeReason.map(AuditValue.string) ?? .null,
            ], at: now)
            return (id, steps)
        }
        var deleted: [String: Int] = [:]
        for step in steps { deleted[step.table, default: 0] += 1 }
        return Result(deletionID: id, planID: planID, userID: plan.userID, ticket: plan.ticket, appliedAt: now, retainUntil: retainUntil,
                      deleted: deleted, revocation: outcomes, noRevokeReason: noRevokeReason, notRestorable: tokens.map { "\(accountTable).\($0)" })
    }

    /// Refuses a plan applied before, whether that deletion stands or was undone: an undone plan is spent.
    private func refuseIfApplied(_ planID: String) throws {
        guard let row = try store.db.row("SELECT id, status FROM gatehouse_user_deletions WHERE plan_id = ? ORDER BY id DESC LIMIT 1", [planID]),
              let applied = row["id"].int64 else { return }
        if row["status"].string == "undone" {
            throw GatehouseError.conflict("deletion plan \(planID) was applied (deletion \(applied)) and undone; an undone plan is spent and is not applied again",
                                          fix: "run \(command: .usersDeletePlan, "USER", .option(.ticket, "REF")) again, review it, and apply the new plan id")
        }
        throw GatehouseError.conflict("deletion plan \(planID) was already applied (deletion \(applied))", fix: "see \(command: .usersDeleteShow, "\(applied)")")
    }

    /// Refuses a plan the rows just read do not give. The rows deleted are always derived from those reads
    /// (`UserDeletionReadSet.steps`), never taken from the stored plan; what is checked here is that the plan names
    /// what they give: its id follows from their fingerprint (which covers the user's id and every row read) and the
    /// ticket, and its rows and counts are theirs. A plan row edited in the store (another user's id with that
    /// user's fingerprint, other rows shown to its reviewer) is refused, before any token is revoked. Re-deriving
    /// needs no key and also holds against a store writer who knows none. The Apple accounts' token flags are not
    /// compared: tokens are outside the fingerprint (Better Auth refreshes them, revocation clears them).
    private func check(_ read: UserDeletionReadSet, against plan: UserDeletionPlan, planID: String, revoked: Bool) throws {
        let done = revoked ? "the Apple tokens were revoked but nothing was deleted" : "nothing was revoked or deleted"
        guard read.fingerprint == plan.fingerprint else {
            throw GatehouseError.conflict("the user's rows changed since the plan; \(done) (changed: \(read.changedGroups(since: plan.groupHashes).joined(separator: ", ")))",
                                          fix: "run \(command: .usersDeletePlan, "\(plan.userID)", .option(.ticket, plan.ticket)) again, review it, and apply the new plan id")
        }
        let derived = try UserDeletionPlanner(store: store).build(read, ticket: plan.ticket, actor: Actor(plan.actor), now: plan.createdAt, round: plan.round ?? 0)
        guard derived.planID == planID, plan.planID == planID, derived.userID == plan.userID, derived.sub == plan.sub,
              derived.rows == plan.rows, derived.tables == plan.tables, derived.references == plan.references else {
            throw GatehouseError.conflict("deletion plan \(planID) does not match what the user's rows give: the stored plan was altered; \(done)",
                                          fix: "run \(command: .usersDeletePlan, "USER", .option(.ticket, "REF")) again for the user you mean to delete, review it, and apply the new plan id")
        }
    }
}
