import Foundation
import Storage

/// Applies a stored plan in one `BEGIN IMMEDIATE` transaction: re-reads every row the plan read and
/// refuses ("the users changed since the plan; plan again") on any difference, derives the steps again from
/// those rows and the plan's decisions and refuses a stored plan that differs from them, runs the steps with
/// foreign-key checks deferred to the commit, records the merge with everything needed to undo it,
/// and audits it with the actor and the ticket. A crash or kill at any point leaves the store as it
/// was: SQLite rolls the open transaction back.
///
/// `GATEHOUSE_TEST_MERGE_DELAY_MS` (tests only) sleeps that long after each step inside the
/// transaction, so a test can kill the process while the transaction is open.
///
///     let result = try MergeApplier(store: store).apply(planID: "mp_…", ticket: "SUP-1234", actor: actor)
public struct MergeApplier {
    /// The store.
    public let store: Store

    /// The longest ticket reference accepted.
    public static let maxTicketLength = 200
    /// The environment variable that slows apply down for crash tests.
    public static let delayVariable = "GATEHOUSE_TEST_MERGE_DELAY_MS"

    public init(store: Store) { self.store = store }

    /// What an apply did.
    public struct Result: Sendable, Codable {
        public let mergeID: Int64
        public let planID: String
        public let source: BetterAuthUserID
        public let target: BetterAuthUserID
        public let ticket: String
        public let appliedAt: Timestamp
        /// Rows changed and deleted, per group (`accounts`, `sessions`, `sync:workspaces`, ...).
        public let updated: [String: Int]
        public let deleted: [String: Int]
        /// Wall time from `BEGIN IMMEDIATE` to `COMMIT`, inclusive.
        public let transactionMilliseconds: Double
    }

    /// Checks a ticket reference: required, one line, at most `maxTicketLength` characters.
    public static func validate(ticket: String) throws -> String {
        let text = ticket.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw GatehouseError.invalid("\(field: .ticket) is empty", fix: "pass the support ticket, e.g. \(field: .ticket) SUP-1234") }
        guard text.count <= maxTicketLength else {
            throw GatehouseError.invalid("\(field: .ticket) is \(text.count) characters; at most \(maxTicketLength)", fix: "pass the ticket's reference, not its text")
        }
        return try OperatorText.check(text, field: "\(field: .ticket)")
    }

    /// The stored plan's row.
    static func planStatement(_ planID: String) -> SQLStatement {
        SQLStatement("SELECT plan FROM gatehouse_merge_plans WHERE id = ?", [planID])
    }

    /// An apply's reads of Gatehouse's own tables: an earlier apply of this plan (applied or undone: an undone plan is
    /// spent), the merge's id, the audit chain's head.
    static func ownReads(_ planID: String) -> [SQLStatement] {
        [SQLStatement("SELECT id, status FROM gatehouse_merges WHERE plan_id = ? ORDER BY id DESC LIMIT 1", [planID]),
         NextID.statement(in: "gatehouse_merges"), AuditLog.headStatement]
    }

    /// Loads a stored plan.
    public func plan(_ planID: String) throws -> MergePlan {
        let read = Self.planStatement(planID)
        guard planID.count <= 100, let text = try store.db.scalar(read.sql, read.arguments).string else {
            let shown = planID.count > 40 ? String(planID.prefix(40)) + "…" : planID
            throw GatehouseError.notFound("no merge plan \"\(shown)\"", fix: "make one with \(command: .mergePlan, .option(.from, "U2"), .option(.into, "U1")); it prints the plan id")
        }
        return try MergeJSON.decode(MergePlan.self, text, what: "merge plan \(planID)")
    }

    /// Applies a plan.
    public func apply(planID: String, ticket: String, actor: Actor, now: Timestamp = .now()) throws -> Result {
        let ticket = try Self.validate(ticket: ticket)
        let delay = ProcessInfo.processInfo.environment[Self.delayVariable].flatMap(UInt32.init).map { min($0, 10_000) } ?? 0
        let plan = try self.plan(planID)
        let db = store.db
        // Encoded before the transaction from the stored steps; inside it, those are checked to equal the steps derived
        // from the fresh reads, so the undo record is the derived steps'.
        let undoJSON = try MergeUndoJSON(steps: plan.steps, appliedAt: now)
        // On D1, the rows the plan read are taken as this write's reads and checked in its request (`ReadRecord`).
        if let reads = plan.reads { db.offer(reads) }
        let started = DispatchTime.now()
        let mergeID: Int64 = try db.write {
            try db.execute(db.dialect.deferForeignKeys)
            // Gatehouse's own reads in one snapshot (one round trip on a server): an earlier apply of this plan, the
            // merge's id, the audit chain's head.
            let own = try db.snapshot(Self.ownReads(planID))
            if let earlier = own[0].first, let merge = earlier[0].int64 {
                if earlier[1].string == "undone" {
                    throw GatehouseError.conflict("plan \(planID) was applied (merge \(merge)) and undone; an undone plan is spent and is not applied again",
                                                  fix: "run \(command: .mergePlan, .option(.from, "\(plan.source)"), .option(.into, "\(plan.target)")) again, review it, and apply the new plan id")
                }
                throw GatehouseError.conflict("plan \(planID) was already applied (merge \(merge))", fix: "see \(command: .mergeShow, "\(merge)")")
            }
            // Every row the plan relies on is locked as it is read (on Postgres; SQLite's write transaction already
            // excludes other writers): a change committed before is seen (and refused below), a later one waits.
            let read = try MergeReadSet.read(store, source: plan.source, target: plan.target, locking: true)
            guard read.fingerprint == plan.fingerprint else {
                let changed = read.changedGroups(since: plan.groupHashes)
                throw GatehouseError.conflict("the users changed since the plan; plan again (changed: \(changed.joined(separator: ", ")))",
                                              fix: "run \(command: .mergePlan, .option(.from, "\(plan.source)"), .option(.into, "\(plan.target)")) again, review it, and apply the new plan id")
            }
            // The steps run are derived again here from the rows just read and the plan's decisions, never taken on the
            // stored plan's word: whoever can write the store (the Worker, a D1 token) could point a stored step at
            // another user's row. Re-deriving, rather than sealing the plan under a key, also holds against a writer
            // who knows nothing of any key, and needs none at apply. The plan id is a hash of the fingerprint (which
            // covers both users' ids and every row read) and the decisions, so a plan whose id does not follow from
            // what was just read names other users or other decisions than it was made with; and a stored plan whose
            // steps differ from the derived ones was altered after it was made (or shown altered to its reviewer).
            let derived = try MergePlanner(store: store).build(read, decisions: plan.decisions, actor: actor, now: now, round: plan.round ?? 0)
            // Compared as values (`MergeStep` is `Equatable`), which costs microseconds inside the transaction where
            // encoding both lists would cost milliseconds.
            guard derived.id == planID, derived.steps == plan.steps else {
                throw GatehouseError.conflict("merge plan \(planID) does not match what its users' rows and decisions give: the stored plan was altered; nothing was changed",
                                              fix: "run \(command: .mergePlan, .option(.from, "U2"), .option(.into, "U1")) again for the users you mean to merge, review it, and apply the new plan id")
            }
            let steps = derived.steps
            var writer = MergeStepWriter(db: db, shapes: read.shapes)
            if delay > 0 {
                // Slowed for the crash tests: one statement at a time, a pause after each.
                for step in steps {
                    try writer.apply(step, at: now)
                    usleep(delay * 1000)
                }
            } else {
                try writer.apply(steps, at: now)
            }
            // The rows as the updates left them: read back where a write sees its own rows, else as the plan makes them.
            let after = try db.rowsAfterWrite(readBack: { try writer.after(steps) }, asWritten: { steps.map { $0.after(at: now) } })
            let summary = MergeRecords.Summary(steps: steps)
            // The id is chosen here, not given back by the insert: one writer at a time takes the next (the write's
            // lock, or on D1 the guard on this read).
            let id = NextID.id(own[1])
            try db.execute("""
                INSERT INTO gatehouse_merges (id, plan_id, source_user_id, target_user_id, ticket, actor, status, planned_at, applied_at, summary_json, undo_data)
                VALUES (?, ?, ?, ?, ?, ?, 'applied', ?, ?, ?, ?)
                """, [id, planID, plan.source.rawValue, plan.target.rawValue, ticket, actor.name, plan.createdAt.iso8601, now.iso8601,
                      try MergeJSON.string(summary), try undoJSON.json(after: after)])
            try store.audit.append(db, actor: actor, action: "merge.apply", subject: String(id), details: [
                "plan_id": .string(planID), "ticket": .string(ticket),
                "source_user_id": .string(plan.source.rawValue), "target_user_id": .string(plan.target.rawValue),
                "rows_updated": .int(Int64(steps.filter { $0.operation == .update }.count)),
                "rows_deleted": .int(Int64(steps.filter { $0.operation == .delete }.count)),
            ], at: now, after: AuditLog.head(own[2]))
            return id
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000
        let summary = MergeRecords.Summary(steps: plan.steps)
        return Result(mergeID: mergeID, planID: planID, source: plan.source, target: plan.target, ticket: ticket, appliedAt: now,
                      updated: summary.updated, deleted: summary.deleted, transactionMilliseconds: (elapsed * 100).rounded() / 100)
    }
}

extension MergeApplier {
    /// Opens the store at `path` to apply plan `planID`. Its first reads go with the opening's own where the engine
    /// pays a request per question: the plan, then Gatehouse's own rows (`ownReads`).
    public static func open(path: String, configurationPath: String? = nil, planID: String) throws -> MergeApplier {
        let reads = planID.count <= 100 ? [planStatement(planID)] + ownReads(planID) : []
        return MergeApplier(store: try Store.open(path: path, configurationPath: configurationPath, startingWith: reads))
    }
}
