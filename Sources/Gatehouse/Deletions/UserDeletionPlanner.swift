import Foundation
import JOSE
import Storage

/// Plans deleting a user on request (a support ticket, Apple's `account-delete`): reads every row of theirs in one
/// snapshot (`UserDeletionReadSet`), and stores and audits the plan under an id that apply names.
///
///     let plan = try UserDeletionPlanner(store: store).plan(user: "ana@example.com", ticket: "SUP-1234", actor: actor)
public struct UserDeletionPlanner {
    /// The store.
    public let store: Store

    public init(store: Store) { self.store = store }

    /// Plans the deletion of the user `input` names (a user id, an exact email or a sub).
    public func plan(user input: String, ticket: String, actor: Actor, now: Timestamp = .now()) throws -> UserDeletionPlan {
        let ticket = try MergeApplier.validate(ticket: ticket)
        let userID = try store.db.read { try resolve(input) }
        let read = try store.db.read { try UserDeletionReadSet.read(store, user: userID) }
        var plan = try build(read, ticket: ticket, actor: actor, now: now)
        // A plan applied and then undone is spent (`UserDeletionApplier` refuses it); the same rows and ticket planned
        // again get the next round's id, so that "plan again" gives a plan that can be applied.
        var round = 0
        while try store.db.scalar("SELECT count(*) FROM gatehouse_user_deletions WHERE plan_id = ? AND status = 'undone'", [plan.planID]).int64 ?? 0 > 0 {
            round += 1
            plan = try build(read, ticket: ticket, actor: actor, now: now, round: round)
        }
        try store.change(actor: actor, action: "user.delete.plan", subject: plan.planID, details: [
            "user_id": .string(userID.rawValue), "ticket": .string(ticket), "rows": .int(Int64(plan.rows.count)),
            "apple_tokens_revocable": .bool(plan.canRevokeAppleTokens),
        ]) {
            try store.db.execute("""
                INSERT INTO gatehouse_user_deletion_plans (id, fingerprint, user_id, ticket, created_at, actor, plan)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """, [plan.planID, plan.fingerprint, userID.rawValue, ticket, now.iso8601, actor.name, try MergeJSON.string(plan)])
        }
        return plan
    }

    /// The user `input` names, as `MergeUserResolver` finds one (id, sub, exact email), named in errors as the
    /// USER argument it is rather than as an option.
    public func resolve(_ input: String) throws -> BetterAuthUserID {
        let text = input.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.count <= MergeUserResolver.maxLength, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw GatehouseError.invalid("the user to delete is not a user id, an email or a sub (\(text.count) characters, or control characters)",
                                         fix: "pass a Better Auth user id, an exact email or a sub better_auth|<id>")
        }
        let user = store.schema.user
        func exists(_ id: String) throws -> Bool {
            try store.db.scalar("SELECT count(*) FROM \(user.sql) WHERE \(user.col(.id)) = ?", [id]).int64 ?? 0 > 0
        }
        if let id = SyncSub(text).userID, try exists(id.rawValue) { return id }
        if try exists(text) { return BetterAuthUserID(text) }
        if text.contains("@"), let id = try store.db.scalar("SELECT \(user.col(.id)) FROM \(user.sql) WHERE \(user.col(.email)) = ?",
                                                           [JavaScriptString.toLowerCase(text)]).string {
            return BetterAuthUserID(id)
        }
        let shown = OperatorText.visible(text.count > 60 ? String(text.prefix(60)) + "…" : text)
        throw GatehouseError.notFound("user \"\(shown)\" matches no user (tried: Better Auth user id, sub better_auth|<id>, exact email)",
                                      fix: "find the user first, e.g. \(command: .usersSearch, "\(shown.prefix(30))")")
    }

    /// The plan for a read set: pure. `round` counts the plans of the same rows and ticket that were applied and
    /// undone before (part of the id from the first such re-plan on).
    func build(_ read: UserDeletionReadSet, ticket: String, actor: Actor, now: Timestamp, round: Int = 0) throws -> UserDeletionPlan {
        let schema = store.schema
        let steps = read.steps()
        var tables: [String: Int] = [:]
        for step in steps { tables[step.table, default: 0] += 1 }
        let accounts = read.groups.first { $0.label == "accounts" }?.rows ?? []
        func holds(_ row: MergeRowImage, _ field: AuthSchema.Field) -> Bool {
            guard schema.account.has(field) else { return false }
            switch row[schema.account.column(field)] {
            case .null: return false
            case .text(let text): return !text.isEmpty
            default: return true
            }
        }
        let apple = accounts.filter { $0[schema.account.column(.providerId)].string == "apple" }.map {
            UserDeletionPlan.AppleAccount(accountID: $0[schema.account.column(.id)].string ?? "?", hasRefreshToken: holds($0, .refreshToken),
                                          hasAccessToken: holds($0, .accessToken))
        }
        let graph = read.graph
        var plan = UserDeletionPlan(planID: "dp_" + String(SHA256.hex("\(read.fingerprint)|\(ticket)" + (round > 0 ? "|round=\(round)" : "")).prefix(24)),
                                fingerprint: read.fingerprint,
                                groupHashes: read.groupHashes, userID: read.userID, sub: read.userID.syncSub.rawValue, ticket: ticket,
                                createdAt: now, actor: actor.name, tables: tables,
                                rows: steps.map { UserDeletionPlan.Row(group: $0.group, table: $0.table, key: $0.key.description, reason: $0.reason) },
                                appleAccounts: apple, references: (graph.toSyncUsers + graph.toAuthUser + graph.toAuthSession).map(\.description))
        plan.round = round > 0 ? round : nil
        return plan
    }

    /// The user's email as the store holds it now, for the console's typed confirmation (not kept in the plan).
    public func currentEmail(of userID: BetterAuthUserID) throws -> String? {
        let user = store.schema.user
        return try store.db.scalar("SELECT \(user.col(.email)) FROM \(user.sql) WHERE \(user.col(.id)) = ?", [userID.rawValue]).string
    }
}
