import Foundation
import JOSE
import Storage

/// The Apple transfer of a store (`gatehouse_apple_transfers` and one row per Apple account in
/// `gatehouse_apple_transfer_accounts`): start it, follow where it stands, and hand its transfer identifiers to a
/// recipient that runs its own store (export, import). Asking Apple is `AppleTransferRunner`; the rewrite is
/// `AppleTransferPlanner` and `AppleTransferApplier`.
///
///     let transfer = try AppleTransferStore(store: store).start(toTeam: try TeamID("NEWTEAM123"), actor: actor, now: .now())
public struct AppleTransferStore {
    public let store: Store
    /// How many failed accounts `status` lists.
    public static let listedFailures = 100

    public init(store: Store) { self.store = store }

    // MARK: reading

    /// The latest transfer, open or not.
    public func latest() throws -> AppleTransfer? {
        try store.db.row("SELECT * FROM gatehouse_apple_transfers ORDER BY id DESC LIMIT 1").map(AppleTransfer.from)
    }

    /// The latest transfer; `notFound` naming `apple transfer start` when there is none.
    public func required() throws -> AppleTransfer {
        guard let transfer = try latest() else {
            throw GatehouseError.notFound("no Apple transfer is recorded in this store",
                                          fix: "start one with `gatehouse apple transfer start --to-team TEAMID` (ops/runbooks/apple-transfer.md)")
        }
        return transfer
    }

    /// The latest transfer, refused once its 60 days are over: Apple's endpoints no longer answer for it.
    public func open(at now: Timestamp) throws -> AppleTransfer {
        let transfer = try required()
        guard transfer.isOpen(at: now) else {
            throw GatehouseError.conflict("the transfer to team \(transfer.toTeam) closed on \(transfer.deadline.iso8601) (60 days after \(transfer.transferredAt.iso8601)); Apple's migration endpoints no longer answer for it",
                                          fix: "TN3159: transfer the app back to the sending team, then start a new transfer")
        }
        return transfer
    }

    /// The live key of `team` that signs its side's requests: the active key when it is that team's, else the newest
    /// key of the team that is not revoked.
    func signingKey(team: TeamID, side: String) throws -> (AppleKey, P256.PrivateKey) {
        let ring = AppleKeyRing(store: store)
        let keys = try ring.list().filter { $0.teamID == team && $0.isLive }
        guard let key = keys.first(where: { $0.state == .active }) ?? keys.first else {
            throw GatehouseError.invalid("no key of team \(team) is in the key ring, and the \(side) side signs its requests with that team's key",
                                         fix: "import it: `gatehouse apple key import AuthKey_<KEYID>.p8 --team-id \(team)` (it stays staged; the transfer uses it for its side only)")
        }
        return (key, try ring.privateKey(key))
    }

    // MARK: start

    /// Records a transfer from the active key's team to `toTeam`, on `transferredAt` (default now). Refuses a
    /// recipient that is the sending team, a transfer whose 60 days are already over, a second open transfer, and,
    /// unless the recipient runs its own store (`recipientElsewhere`), a recipient team with no key in the ring.
    public func start(toTeam: TeamID, transferredAt: Timestamp? = nil, clientID explicitClientID: String? = nil, recipientElsewhere: Bool = false,
                      actor: Actor, now: Timestamp) throws -> AppleTransfer {
        guard let active = try AppleKeyRing(store: store).activeKey() else {
            throw GatehouseError.invalid("no Apple key is active, and the sending team is the active key's team",
                                         fix: "import and activate the sending team's key: `gatehouse apple key import AuthKey_<KEYID>.p8 --team-id TEAMID`, then `gatehouse apple key activate <KEYID>`")
        }
        let fromTeam = active.teamID
        guard toTeam != fromTeam else {
            throw GatehouseError.invalid("the recipient team \(toTeam) is the sending team itself (the active key \(active.keyID)'s team); Apple answers invalid_request to a transfer to oneself",
                                         fix: "pass the Team ID of the team the app is transferred to, as App Store Connect shows it")
        }
        let date = transferredAt ?? now
        guard date.adding(seconds: AppleTransfer.window.value) > now else {
            throw GatehouseError.invalid("a transfer on \(date.iso8601) closed on \(date.adding(seconds: AppleTransfer.window.value).iso8601): Apple's migration endpoints answer for 60 days after the transfer",
                                         fix: "TN3159: transfer the app back to the sending team, then start again; or correct --transferred-at")
        }
        guard date <= now.adding(seconds: 366 * 86_400) else {
            throw GatehouseError.invalid("the transfer date \(date.iso8601) is more than a year away", fix: "pass the date the transfer completes in App Store Connect")
        }
        try refuseSecondOpen(now: now)
        let clientID = try self.clientID(explicitClientID)
        if !recipientElsewhere { _ = try signingKey(team: toTeam, side: "recipient") }
        let deadline = date.adding(seconds: AppleTransfer.window.value)
        let id: Int64 = try store.change(actor: actor, action: "apple.transfer.start", subject: toTeam.rawValue, details: [
            "from_team": .string(fromTeam.rawValue), "to_team": .string(toTeam.rawValue), "client_id": .string(clientID),
            "transferred_at": .string(date.iso8601), "deadline": .string(deadline.iso8601), "recipient_elsewhere": .bool(recipientElsewhere),
        ]) {
            try refuseSecondOpen(now: now)
            let id = try store.db.nextID(in: "gatehouse_apple_transfers")
            try store.db.execute("""
                INSERT INTO gatehouse_apple_transfers (id, from_team, to_team, client_id, transferred_at, deadline_at, recipient_elsewhere, imported, started_at, started_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
                """, [id, fromTeam.rawValue, toTeam.rawValue, clientID, date.iso8601, deadline.iso8601, recipientElsewhere ? 1 : 0, now.iso8601, actor.name])
            return id
        }
        guard let row = try store.db.row("SELECT * FROM gatehouse_apple_transfers WHERE id = ?", [id]) else { throw GatehouseError("the transfer just started cannot be read back") }
        return try AppleTransfer.from(row)
    }

    private func refuseSecondOpen(now: Timestamp) throws {
        if let open = try latest(), open.isOpen(at: now) {
            throw GatehouseError.conflict("a transfer to team \(open.toTeam) is already open (started \(open.startedAt.iso8601), deadline \(open.deadline.iso8601))",
                                          fix: "follow it with `gatehouse apple transfer status`; one transfer at a time")
        }
    }

    private func clientID(_ explicit: String?) throws -> String {
        if let explicit {
            guard let checked = try ProviderConfiguration.identifier(explicit, option: "--client-id", kind: "client id", empty: false) else {
                throw GatehouseError.invalid("--client-id is empty")
            }
            return checked
        }
        let settings = try ProviderConfiguration(store: store).apple()
        guard let id = settings.bundleID ?? settings.servicesID else {
            throw GatehouseError.invalid("no Apple client id to send: the app's bundle id (or Services ID) goes with every migration request",
                                         fix: "pass --client-id com.example.app, or configure it: `gatehouse providers set apple --bundle-id com.example.app`")
        }
        return id
    }

    // MARK: the accounts

    /// Adds a row for every Apple account not yet in the transfer, in pages, leaving out accounts made on or after the
    /// transfer date (a new-team sub: Better Auth made it for a sign-in after the transfer). Returns how many it added.
    @discardableResult
    func addAccounts(_ transfer: AppleTransfer, now: Timestamp) throws -> Int {
        let account = store.schema.account
        let page = min(store.engine.rowsPerWrite ?? 5_000, 5_000)
        var after = "", added = 0
        while true {
            let rows = try store.db.rows("""
                SELECT \(account.col(.id)) AS id, \(account.col(.accountId)) AS sub, \(account.col(.userId)) AS user_id, \(account.col(.createdAt)) AS created_at
                FROM \(account.sql) WHERE \(account.col(.providerId)) = 'apple' AND \(account.col(.id)) > ? ORDER BY \(account.col(.id)) LIMIT \(page)
                """, [after])
            guard let last = rows.last?.optionalString("id") else { break }
            after = last
            var candidates: [(id: String, sub: String, user: String)] = []
            for row in rows {
                guard let id = row.optionalString("id"), let sub = row.optionalString("sub"), !sub.isEmpty, let user = row.optionalString("user_id") else { continue }
                if let created = DateEncoding.decode(row["created_at"]), created >= transfer.transferredAt { continue }
                candidates.append((id, sub, user))
            }
            var known = Set<String>()
            for chunk in candidates.chunked(by: 90) {
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                for row in try store.db.rows("SELECT account_id FROM gatehouse_apple_transfer_accounts WHERE transfer_id = ? AND account_id IN (\(marks))",
                                             [transfer.id] + chunk.map(\.id)) {
                    if let id = row.optionalString("account_id") { known.insert(id) }
                }
            }
            let missing = candidates.filter { !known.contains($0.id) }
            if !missing.isEmpty {
                try store.db.write {
                    _ = try store.db.batch(missing.map {
                        SQLStatement("INSERT INTO gatehouse_apple_transfer_accounts (transfer_id, account_id, user_id, old_sub, updated_at) VALUES (?, ?, ?, ?, ?)",
                                     [transfer.id, $0.id, $0.user, $0.sub, now.iso8601])
                    })
                }
                added += missing.count
            }
            if rows.count < page { break }
        }
        return added
    }

    // MARK: status

    /// Where the latest transfer stands.
    public func status(now: Timestamp) throws -> AppleTransferStatus {
        let transfer = try required()
        let row = try store.db.row("""
            SELECT count(*) AS accounts, count(transfer_sub) AS collected, count(new_sub) AS exchanged,
                   sum(CASE WHEN applied_plan IS NOT NULL THEN 1 ELSE 0 END) AS applied,
                   sum(CASE WHEN collect_error IS NOT NULL THEN 1 ELSE 0 END) AS collect_failed,
                   sum(CASE WHEN exchange_error IS NOT NULL THEN 1 ELSE 0 END) AS exchange_failed,
                   sum(CASE WHEN collect_error = 'unavailable' THEN 1 ELSE 0 END) AS collect_unavailable,
                   sum(CASE WHEN exchange_error = 'unavailable' THEN 1 ELSE 0 END) AS exchange_unavailable
            FROM gatehouse_apple_transfer_accounts WHERE transfer_id = ?
            """, [transfer.id])
        func count(_ name: String) -> Int { Int(row?[name].int64 ?? 0) }
        let accounts = count("accounts"), collected = count("collected"), exchanged = count("exchanged"), applied = count("applied")
        let collectFailed = count("collect_failed"), exchangeFailed = count("exchange_failed")
        // An account Apple gave no usable answer for is asked again by the next run: its step is not done.
        let collectRefused = collectFailed - count("collect_unavailable"), exchangeRefused = exchangeFailed - count("exchange_unavailable")
        let failures = try store.db.rows("""
            SELECT user_id, account_id, collect_error, exchange_error FROM gatehouse_apple_transfer_accounts
            WHERE transfer_id = ? AND (collect_error IS NOT NULL OR exchange_error IS NOT NULL) ORDER BY account_id LIMIT \(Self.listedFailures)
            """, [transfer.id]).map { row in
            AppleTransferStatus.Failure(userId: row.optionalString("user_id") ?? "", accountId: row.optionalString("account_id") ?? "",
                                        step: row["collect_error"].isNull ? "exchange" : "collect",
                                        error: row.optionalString("collect_error") ?? row.optionalString("exchange_error") ?? "")
        }
        let plan = try AppleTransferPlanner(store: store).latestPlan(transfer)
        // Exchanged accounts the latest plan does not cover (exchanged after it was made) call for a new plan.
        let unplanned = Int(try store.db.scalar("""
            SELECT count(*) FROM gatehouse_apple_transfer_accounts
            WHERE transfer_id = ? AND new_sub IS NOT NULL AND applied_plan IS NULL AND (plan_id IS NULL OR plan_id <> ?)
            """, [transfer.id, plan?.planId ?? ""]).int64 ?? 0)
        let stage: String, next: String
        let planStatus = plan?.status
        if !transfer.imported && (accounts == 0 || collected + collectRefused < accounts) {
            (stage, next) = ("collecting", "gatehouse apple transfer collect")
        } else if transfer.recipientElsewhere {
            if let exported = try exportedAt(transfer) {
                (stage, next) = ("exported", "nothing here: the identifiers were exported \(exported.iso8601); the recipient's store exchanges, plans and applies, and its health follows the deadline")
            } else {
                (stage, next) = ("exporting", "gatehouse apple transfer export --out transfer.json, and hand the file to the recipient team")
            }
        } else if exchanged + exchangeRefused < collected {
            (stage, next) = ("exchanging", "gatehouse apple transfer exchange")
        } else if planStatus == nil || planStatus == "undone" || planStatus == "superseded" || (planStatus == "applied" && unplanned > 0) {
            (stage, next) = ("planning", "gatehouse apple transfer plan")
        } else if planStatus == "planned" || planStatus == "applying" {
            (stage, next) = ("applying", "gatehouse apple transfer apply \(plan!.planId) --ticket REF --yes")
        } else {
            (stage, next) = ("applied", plan.map { $0.stragglers > 0 ? "merge the \($0.stragglers) straggler pair(s) the plan names (`gatehouse apple transfer plan`)" : "nothing: every exchanged account is rewritten" } ?? "nothing")
        }
        let expired = !transfer.isOpen(at: now) && stage != "applied" && stage != "exported"
        return AppleTransferStatus(stage: expired ? "expired" : stage, transferID: transfer.id, fromTeam: transfer.fromTeam.rawValue, toTeam: transfer.toTeam.rawValue,
                                   clientId: transfer.clientID, transferredAt: transfer.transferredAt.iso8601, deadline: transfer.deadline.iso8601,
                                   daysLeft: transfer.daysLeft(at: now), recipientElsewhere: transfer.recipientElsewhere, imported: transfer.imported,
                                   counts: .init(accounts: accounts, collected: collected, exchanged: exchanged, applied: applied, failed: collectFailed + exchangeFailed),
                                   failed: failures, plan: plan,
                                   next: expired ? "the 60 days are over: TN3159 says transfer the app back to the sending team and start again" : next)
    }
}

extension AppleTransferStore {
    /// When this (the sending) store last exported the transfer's identifiers, if that export holds every identifier
    /// collected (none was collected after it): the audit log's `apple.transfer.export`, the one record of it.
    func exportedAt(_ transfer: AppleTransfer) throws -> Timestamp? {
        guard let at = try store.db.scalar("""
            SELECT max(at) FROM gatehouse_audit WHERE action = 'apple.transfer.export' AND subject = ? AND at >= ?
            """, [transfer.toTeam.rawValue, transfer.startedAt.iso8601]).string.flatMap(Timestamp.init(iso8601:)) else { return nil }
        let collected = try store.db.scalar("SELECT max(updated_at) FROM gatehouse_apple_transfer_accounts WHERE transfer_id = ? AND transfer_sub IS NOT NULL",
                                            [transfer.id]).string.flatMap(Timestamp.init(iso8601:))
        guard let collected, collected <= at else { return nil }
        return at
    }
}

extension Array {
    /// The array in consecutive pieces of at most `size` elements.
    func chunked(by size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: Swift.max(size, 1)).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
