import Foundation
import JOSE
import Storage

/// Plans a merge of U2 (source) into U1 (target), reading everything in one snapshot:
///
/// - U1 keeps its Better Auth user id, so `better_auth|U1` and everything keyed on it stay.
/// - U2's accounts move to U1. Two credential accounts, two accounts of one provider, and a relay U1
///   email against a real U2 email are conflicts that need a decision.
/// - U2's sessions are deleted (its devices sign in again and land on U1); verification rows for
///   U2's email are dropped.
/// - Every row referencing U2's sync `users` row (found through foreign keys) moves to U1's; two live
///   subscriptions need `--keep-subscription`; roles only U2 had are dropped unless `--carry-roles`.
///   U2's `users` row is removed, so a token with sub `better_auth|U2` fails closed. When only U2 has a
///   sync row, that row is re-keyed to sub `better_auth|U1` instead: it keeps its id, so nothing that
///   references it has to move, and no row with sub `better_auth|U2` is left.
/// - U2's user row is deleted.
///
///     let plan = try MergePlanner(store: store).plan(source: "ana@gmail.com", target: "k3x9@privaterelay.appleid.com",
///                                                    decisions: MergeDecisions(keepEmail: .source), actor: actor)
public struct MergePlanner {
    /// The store.
    public let store: Store

    /// Subscription statuses that still bill or grant access.
    public static let liveSubscriptionStatuses: Set<String> = ["active", "trialing", "past_due"]

    public init(store: Store) { self.store = store }

    /// Plans the merge and, when every conflict is decided, stores it (audited) under its id.
    public func plan(source sourceInput: String, target targetInput: String, decisions: MergeDecisions,
                     actor: Actor, now: Timestamp = .now()) throws -> MergePlan {
        let resolver = MergeUserResolver(store: store)
        let (source, target) = try store.db.read {
            (try resolver.resolve(sourceInput, field: .from), try resolver.resolve(targetInput, field: .into))
        }
        guard source != target else {
            throw GatehouseError.invalid("\(field: .from) and \(field: .into) are the same user (\(source))", fix: "merge two different users: \(field: .from) U2 \(field: .into) U1")
        }
        var ((read, plan), reads) = try store.db.read {
            try store.db.recordingReads {
                let read = try MergeReadSet.read(store, source: source, target: target)
                return (read, try build(read, decisions: decisions, actor: actor, now: now))
            }
        }
        // A plan applied and then undone is spent (`MergeApplier` refuses it); the same rows and decisions planned
        // again get the next round's id, so that "plan again" gives a plan that can be applied.
        var round = 0
        while let id = plan.id, try store.db.scalar("SELECT count(*) FROM gatehouse_merges WHERE plan_id = ? AND status = 'undone'", [id]).int64 ?? 0 > 0 {
            round += 1
            plan = try build(read, decisions: decisions, actor: actor, now: now, round: round)
        }
        if let reads, (try? MergeJSON.string(reads))?.utf8.count ?? .max <= MergePlan.maxReadRecordBytes { plan.reads = reads }
        if let id = plan.id { try save(plan, id: id, actor: actor, now: now) }
        return plan
    }

    /// Stores a plan and audits it; planning the same merge of the same rows again gives the same id.
    private func save(_ plan: MergePlan, id: String, actor: Actor, now: Timestamp) throws {
        try store.db.write {
            try store.db.execute("""
                INSERT INTO gatehouse_merge_plans (id, fingerprint, source_user_id, target_user_id, decisions, created_at, actor, plan)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """, [id, plan.fingerprint, plan.source.rawValue, plan.target.rawValue, try MergeJSON.string(plan.decisions),
                      now.iso8601, actor.name, try MergeJSON.string(plan)])
            try store.audit.append(store.db, actor: actor, action: "merge.plan", subject: id, details: [
                "source_user_id": .string(plan.source.rawValue), "target_user_id": .string(plan.target.rawValue),
                "decisions": .string(plan.decisions.canonical), "steps": .int(Int64(plan.steps.count)),
            ], at: now)
        }
    }

    /// The plan for a read set: pure, so apply and the tests can rebuild it. `round` counts the plans of the same rows
    /// and decisions that were applied and undone before (part of the id from the first such re-plan on).
    func build(_ read: MergeReadSet, decisions: MergeDecisions, actor: Actor, now: Timestamp, round: Int = 0) throws -> MergePlan {
        var builder = Builder(read: read, schema: store.schema, decisions: decisions)
        try builder.run()
        let resolved = builder.conflicts.allSatisfy { !$0.isUnresolved }
        let id = resolved ? "mp_" + String(SHA256.hex("\(read.fingerprint)|\(decisions.canonical)" + (round > 0 ? "|round=\(round)" : "")).prefix(24)) : nil
        let graph = read.graph
        let touched = Set(builder.steps.map { "\($0.table)|\($0.key)" })
        let unchanged = ([read.targetUser] + (read.targetSync.map { [$0] } ?? [])).filter {
            !touched.contains("\($0.table)|\(read.shapes[$0.table]!.key(of: $0))")
        }
        var plan = MergePlan(id: id, fingerprint: read.fingerprint, groupHashes: read.groupHashes, source: read.sourceID, target: read.targetID,
                         sourceEmail: read.sourceUser[store.schema.user.column(.email)].string ?? "",
                         targetEmail: read.targetUser[store.schema.user.column(.email)].string ?? "",
                         decisions: decisions, createdAt: now, actor: actor.name, steps: builder.steps,
                         conflicts: builder.conflicts, warnings: builder.warnings, unchanged: unchanged,
                         counts: MergeCount.derive(watchedCounts(read), steps: builder.steps),
                         references: (graph.toSyncUsers + graph.toAuthUser + graph.toAuthSession).map(\.description))
        plan.round = round > 0 ? round : nil
        return plan
    }

    /// The counts the emitted SQL checks: every person-referencing key, for each user.
    private func watchedCounts(_ read: MergeReadSet) -> [MergeCount.Watched] {
        let schema = store.schema
        var items: [MergeCount.Watched] = []
        func add(_ table: String, _ column: String, _ value: SQLValue, _ count: Int) {
            guard !value.isNull else { return }
            items.append(MergeCount.Watched(table, [column], [MergeValue(value)], before: count))
        }
        func add(_ reference: ReferenceGraph.Reference, pointingAt parent: MergeRowImage?, _ count: Int) {
            guard let parent, let values = reference.values(pointingAt: parent) else { return }
            items.append(MergeCount.Watched(reference.table, reference.columns, values.map(MergeValue.init), before: count))
        }
        let userID = schema.user.column(.id)
        add(schema.user.name, userID, read.targetUser[userID], 1)
        add(schema.user.name, userID, read.sourceUser[userID], 1)
        add(schema.account.name, schema.account.column(.userId), .text(read.targetID.rawValue), read.targetAccounts.count)
        add(schema.account.name, schema.account.column(.userId), .text(read.sourceID.rawValue), read.sourceAccounts.count)
        add(schema.session.name, schema.session.column(.userId), .text(read.sourceID.rawValue), read.sourceSessions.count)
        for plugin in read.plugins {
            add(plugin.reference, pointingAt: read.targetUser, plugin.target.count)
            add(plugin.reference, pointingAt: read.sourceUser, plugin.source.count)
        }
        if let table = read.graph.syncUsersTable {
            add(table, "sub", .text(read.targetID.syncSub.rawValue), read.targetSync == nil ? 0 : 1)
            add(table, "sub", .text(read.sourceID.syncSub.rawValue), read.sourceSync == nil ? 0 : 1)
        }
        for sync in read.sync {
            add(sync.reference, pointingAt: read.targetSync, sync.target.count)
            add(sync.reference, pointingAt: read.sourceSync, sync.source.count)
        }
        if let roles = read.rolesTable {
            add(roles, "sub", .text(read.targetID.syncSub.rawValue), read.targetRoles.count)
            add(roles, "sub", .text(read.sourceID.syncSub.rawValue), read.sourceRoles.count)
        }
        return items
    }

    /// Turns a read set into steps, conflicts and warnings.
    private struct Builder {
        let read: MergeReadSet
        let schema: AuthSchema
        let decisions: MergeDecisions
        var steps: [MergeStep] = []
        var conflicts: [MergeConflict] = []
        var warnings: [String] = []

        init(read: MergeReadSet, schema: AuthSchema, decisions: MergeDecisions) {
            self.read = read
            self.schema = schema
            self.decisions = decisions
        }

        var u1: String { read.targetID.rawValue }
        var u2: String { read.sourceID.rawValue }

        func shape(_ table: String) -> MergeTableShape { read.shapes[table]! }
        func column(_ table: AuthSchema.Table, _ field: AuthSchema.Field) -> String { table.column(field) }

        mutating func update(_ group: String, _ row: MergeRowImage, set: [String: SQLValue], touch: [String: DateEncoding] = [:], _ reason: String) {
            steps.append(MergeStep(group: group, operation: .update, table: row.table, key: shape(row.table).key(of: row), before: row,
                                   set: set.mapValues(MergeValue.init), touch: touch, reason: reason))
        }

        mutating func delete(_ group: String, _ row: MergeRowImage, _ reason: String) {
            steps.append(MergeStep(group: group, operation: .delete, table: row.table, key: shape(row.table).key(of: row), before: row, reason: reason))
        }

        mutating func run() throws {
            try planSync()
            planRoles()
            try planPlugins()
            planAccounts()
            planSessions()
            planUsers()
        }

        // MARK: Sync server

        mutating func planSync() throws {
            let subscriptions = read.sync.filter { $0.reference.table == "subscriptions" && shape($0.reference.table).columns.contains("status") }
            let live = { (row: MergeRowImage) in MergePlanner.liveSubscriptionStatuses.contains(row["status"].string ?? "") }
            let targetLive = subscriptions.flatMap(\.target).filter(live), sourceLive = subscriptions.flatMap(\.source).filter(live)
            var cancel: Set<String> = []
            if !targetLive.isEmpty && !sourceLive.isEmpty {
                let describe = { (rows: [MergeRowImage]) in rows.map { "\($0["id"].string ?? "?") (\($0["plan"].string ?? "?"), \($0["status"].string ?? "?"))" }.joined(separator: ", ") }
                let decision: String?
                switch decisions.keepSubscription {
                case .target?:
                    decision = "U1's stays; U2's is marked canceled here (cancel it with the payment provider too)"
                    cancel = Set(sourceLive.map(\.fingerprintText))
                case .source?:
                    decision = "U2's stays (moved to U1); U1's is marked canceled here (cancel it with the payment provider too)"
                    cancel = Set(targetLive.map(\.fingerprintText))
                case nil:
                    decision = nil
                }
                conflicts.append(MergeConflict(kind: .subscription, message: "both users have a live subscription: U1 \(describe(targetLive)); U2 \(describe(sourceLive))",
                                               decision: decision))
            } else if !sourceLive.isEmpty {
                warnings.append("U2 has a live subscription; it moves to U1")
            }
            guard let sourceSync = read.sourceSync else { return }
            let targetSub = read.targetID.syncSub.rawValue
            if let targetSync = read.targetSync {
                for referencing in read.sync {
                    let reference = referencing.reference
                    let group = "sync:\(reference.table)"
                    for row in referencing.source {
                        var set = reference.pointing(at: targetSync)
                        if cancel.contains(row.fingerprintText) { set["status"] = .text("canceled") }
                        update(group, row, set: set, "\(reference) moves from U2's users row to U1's" + (set["status"] != nil ? "; marked canceled" : ""))
                    }
                    for row in referencing.target where cancel.contains(row.fingerprintText) {
                        update(group, row, set: ["status": .text("canceled")], "U1's subscription: marked canceled (\(field: .keepSubscription) source)")
                    }
                }
                delete("sync:users", sourceSync, "U2's users row is removed: a token with sub better_auth|\(u2) fails closed")
            } else {
                // Only U2 is provisioned: its row becomes U1's. References by id stay; references by sub follow.
                for referencing in read.sync where referencing.reference.parentColumns.contains("sub") {
                    try follow(referencing.reference, referencing.source, to: sourceSync.with(["sub": MergeValue(.text(targetSub))]),
                               because: "U1 has no users row: U2's is re-keyed to sub \(targetSub)",
                               otherwise: "give U1 a users row first (then U2's rows move to it by id)", group: "sync:\(referencing.reference.table)")
                }
                update("sync:users", sourceSync, set: ["sub": .text(targetSub)],
                       "U1 has no users row: U2's is re-keyed to sub \(targetSub) (its id and everything referencing it stay; no row keeps better_auth|\(u2))")
            }
        }

        mutating func planRoles() {
            guard read.rolesTable != nil else { return }
            let held = Set(read.targetRoles.compactMap { $0["role"].string })
            if read.sourceRoles.contains(where: { $0["role"].string == "admin" }) { warnings.append("U2 is an admin (allow_list)") }
            for row in read.sourceRoles {
                let role = row["role"].string ?? "?"
                if held.contains(role) {
                    delete("roles", row, "U2's role \(role): U1 already has it")
                    continue
                }
                conflicts.append(MergeConflict(kind: .role, message: "U2 has the allow-list role \(role); U1 does not",
                                               decision: decisions.carryRoles ? "granted to U1 (\(field: .carryRoles))" : "dropped (pass \(field: .carryRoles) to grant it to U1)"))
                if decisions.carryRoles {
                    update("roles", row, set: ["sub": .text(read.targetID.syncSub.rawValue)], "U2's role \(role) is granted to U1 (\(field: .carryRoles))")
                } else {
                    delete("roles", row, "U2's role \(role) is dropped (not carried)")
                }
            }
        }

        // MARK: Better Auth

        mutating func planPlugins() throws {
            // U1's row as the merge leaves it: with U2's email when it takes it.
            let finalTarget = read.targetUser.with(targetUserChanges.mapValues(MergeValue.init))
            for referencing in read.plugins {
                let reference = referencing.reference
                let group = "plugin:\(reference.table)"
                if !Set(reference.parentColumns).isDisjoint(with: targetUserChanges.keys) {
                    try follow(reference, referencing.target + referencing.source, to: finalTarget,
                               because: "U1 takes U2's email (\(field: .keepEmail) source)",
                               otherwise: "keep U1's email (\(field: .keepEmail) target)", group: group)
                    continue
                }
                guard !referencing.source.isEmpty else { continue }
                if !referencing.target.isEmpty {
                    warnings.append("both users have rows in \(reference.table); if it allows one row per user, apply refuses")
                }
                for row in referencing.source {
                    update(group, row, set: reference.pointing(at: read.targetUser), "\(reference) moves to U1")
                }
            }
        }

        /// The columns of U1's user row the merge changes, with their new values: U2's email and its verification
        /// when U1 takes it (`planUsers`).
        var targetUserChanges: [String: SQLValue] {
            guard decisions.keepEmail == .source else { return [:] }
            let email = column(schema.user, .email), verified = column(schema.user, .emailVerified)
            return [email: .text(read.sourceUser[email].string ?? ""), verified: read.sourceUser[verified]]
        }

        /// Points `rows` (children through `reference`) at `parent` as the merge leaves it, when the merge changes a
        /// column their key holds (U1 taking U2's email, U2's users row re-keyed to U1's sub). Such a row can only
        /// follow when its key is checked at the commit: the old parent values are gone by then and the new ones
        /// exist. A key checked at each statement (Postgres, not `DEFERRABLE`) cannot be kept true on the way, so
        /// the plan refuses it by name.
        mutating func follow(_ reference: ReferenceGraph.Reference, _ rows: [MergeRowImage], to parent: MergeRowImage,
                             because change: String, otherwise: String, group: String) throws {
            guard !rows.isEmpty else { return }
            guard reference.deferrable else {
                throw GatehouseError.conflict(
                    "\(rows.count) row(s) of \(reference.table) point at a value this merge changes (\(change)) through the key \(reference), "
                        + "which the store checks at each statement (it is not DEFERRABLE), so they cannot follow it; nothing was planned",
                    fix: "\(otherwise), declare the key DEFERRABLE "
                        + "(ALTER TABLE \(SQL.quote(reference.table)) ALTER CONSTRAINT … DEFERRABLE), or move those rows by hand")
            }
            for row in rows {
                let set = reference.pointing(at: parent)
                guard set.contains(where: { row[$0.key] != $0.value }) else { continue }
                update(group, row, set: set, "\(reference) follows: \(change)")
            }
        }

        mutating func planAccounts() {
            let account = schema.account
            let provider = column(account, .providerId), userID = column(account, .userId), accountID = column(account, .accountId)
            let touch: [String: DateEncoding] = account.has(.updatedAt) ? [column(account, .updatedAt): account.encoding(.updatedAt)] : [:]
            let targetProviders = Set(read.targetAccounts.compactMap { $0[provider].string })
            var sameProviderNoted: Set<String> = []
            for row in read.sourceAccounts {
                let name = row[provider].string ?? "?"
                if name == "credential" && targetProviders.contains("credential") {
                    let decision: String?
                    switch decisions.keepPassword {
                    case .target?: decision = "U1's password stays; U2's credential account is deleted"
                    case .source?: decision = "U1's credential account takes U2's password hash; U2's credential account is deleted"
                    case nil: decision = nil
                    }
                    conflicts.append(MergeConflict(kind: .password, message: "both users have a password (credential account)", decision: decision))
                    if decisions.keepPassword == .source, account.has(.password),
                       let mine = read.targetAccounts.first(where: { $0[provider].string == "credential" }) {
                        update("accounts", mine, set: [column(account, .password): row[column(account, .password)]], touch: touch,
                               "U1's credential account takes U2's password (\(field: .keepPassword) source)")
                    }
                    delete("accounts", row, "U2's credential account is deleted (one password per user)")
                    continue
                }
                if name != "credential" && targetProviders.contains(name) {
                    if !sameProviderNoted.contains(name) {
                        sameProviderNoted.insert(name)
                        let decision: String?
                        switch decisions.sameProvider {
                        case .both?: decision = "both \(name) accounts stay on U1; either signs in"
                        case .target?: decision = "U1's \(name) account stays; U2's is deleted"
                        case .source?: decision = "U2's \(name) account moves to U1; U1's is deleted"
                        case nil: decision = nil
                        }
                        conflicts.append(MergeConflict(kind: .provider, message: "both users have a \(name) account", decision: decision))
                        if decisions.sameProvider == .source {
                            for mine in read.targetAccounts where mine[provider].string == name {
                                delete("accounts", mine, "U1's \(name) account is deleted (\(field: .sameProvider) source)")
                            }
                        }
                    }
                    if decisions.sameProvider == .target {
                        delete("accounts", row, "U2's \(name) account is deleted (\(field: .sameProvider) target)")
                        continue
                    }
                }
                var set: [String: SQLValue] = [userID: .text(u1)]
                // Better Auth names a credential account by its user id.
                if name == "credential" && row[accountID].string == u2 { set[accountID] = .text(u1) }
                update("accounts", row, set: set, touch: touch, "U2's \(name) account moves to U1")
            }
        }

        mutating func planSessions() {
            for (reference, rows) in read.sessionDependents {
                for row in rows { delete("sessions", row, "\(reference): belongs to a session of U2 that is deleted") }
            }
            if !read.sourceSessions.isEmpty {
                warnings.append("U2's \(read.sourceSessions.count) session(s) are deleted: those devices sign in again and land on U1")
            }
            for row in read.sourceSessions { delete("sessions", row, "U2's session is deleted") }
            for row in read.verifications { delete("verification", row, "a verification row for U2's email is dropped") }
        }

        mutating func planUsers() {
            let user = schema.user
            let email = column(user, .email)
            let targetEmail = read.targetUser[email].string ?? "", sourceEmail = read.sourceUser[email].string ?? ""
            let required = LinkSimulator.isRelayAddress(targetEmail) && !LinkSimulator.isRelayAddress(sourceEmail)
            let decision: String?
            switch decisions.keepEmail {
            case .source?: decision = "U1 takes U2's email \(sourceEmail)"
            case .target?: decision = "U1 keeps \(targetEmail)"
            case nil: decision = required ? nil : "U1 keeps \(targetEmail) (default)"
            }
            conflicts.append(MergeConflict.email(target: targetEmail, source: sourceEmail, relayRequired: required, decision: decision))
            if user.has(.role), let role = read.sourceUser[column(user, .role)].string, role.contains("admin") {
                warnings.append("U2 is an admin (user.role = \(role)); U1 does not become one by this merge")
            }
            delete("user", read.sourceUser, "U2's user row is deleted")
            if decisions.keepEmail == .source {
                var touch: [String: DateEncoding] = [:]
                if user.has(.updatedAt) { touch[column(user, .updatedAt)] = user.encoding(.updatedAt) }
                update("user", read.targetUser, set: targetUserChanges, touch: touch,
                       "U1 takes U2's email (\(field: .keepEmail) source)")
            }
        }
    }
}
