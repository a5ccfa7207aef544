import Foundation
import JOSE
import Locking
import Storage

/// Asks Apple, account by account, for what a transfer needs: `collect` gets each Apple account's transfer
/// identifier from the sending team (`sub` + `target`, signed with the sending team's key), `exchange` gets each
/// transfer identifier's new `sub`, `email` and `is_private_email` from the recipient team (signed with its key).
///
/// - **Resumable.** Answers are written to the store every `flushInterval` as they come, so a run killed part-way
///   loses at most the answers of that interval and the calls in flight; the next run asks only for what has no
///   answer yet.
/// - **Rate-aware.** `concurrency` calls at once (default 4); a 429 pauses every worker for its `Retry-After`; an
///   access token is reused for its hour and fetched again once when Apple answers `invalid_grant`.
/// - **Per-account failures** (`invalid_request`: the person revoked the app) are recorded and listed, and the run goes
///   on; a call with no usable answer (5xx, timeout) is tried `attempts` times, then recorded as `unavailable`,
///   which the next run asks again. `invalid_client`, or `invalid_grant` to a fresh token, stops the run: every other
///   call would be refused too.
///
/// The identifiers fetched are personal data: they go to Gatehouse's tables and nowhere else (no log, no output but
/// counts).
public struct AppleTransferRunner {
    public enum Side: String, Sendable, Codable {
        case collect, exchange
    }

    /// A run's progress, for a terminal's progress line.
    public struct Progress: Sendable {
        public let done: Int
        public let total: Int
        public let failed: Int
        public let perSecond: Double
        public var secondsLeft: Double? { perSecond > 0 ? Double(total - done) / perSecond : nil }
    }

    /// What a run did.
    public struct Summary: Sendable, Codable {
        public let side: Side
        /// Accounts still to ask when the run began (after `limit`).
        public let asked: Int
        public let answered: Int
        /// Accounts Apple refused (recorded; listed by `status`).
        public let refused: Int
        /// Accounts with no usable answer after every try (asked again by the next run).
        public let unavailable: Int
        /// Accounts still without an answer after this run (beyond `limit`, or unavailable).
        public let remaining: Int
        /// 429s answered, and access tokens fetched again after `invalid_grant`.
        public let rateLimited: Int
        public let tokenRenewals: Int
        public let seconds: Double
        public let requestsPerSecond: Double
    }

    public let store: Store
    /// Apple's base URL: the one given, else `GATEHOUSE_APPLE_BASE_URL`, else Apple's.
    public var baseURL: String?
    /// Calls at once.
    public var concurrency = 4
    public static let concurrencyRange = 1...64
    /// At most this many accounts this run (nil: all).
    public var limit: Int?
    /// Ask again for accounts Apple refused before, not only those without an answer.
    public var retryRefused = false
    /// Tries per account when no usable answer comes.
    public var attempts = 3
    /// How often answers are written to the store.
    public var flushInterval = 0.25
    public var actor = Actor("gatehouse")
    /// Called on the caller's thread after each write of answers.
    public var progress: ((Progress) -> Void)?

    public init(store: Store) { self.store = store }

    /// One account to ask about: its row's key and what is sent.
    private struct Item: Sendable {
        let accountID: String
        let ask: String
    }

    private enum Outcome: Sendable {
        case collected(String)
        case exchanged(sub: String, email: String?, isPrivate: Bool?)
        case refused(String)
        case unavailable
    }

    /// The state the workers share with the writer.
    private final class Shared: @unchecked Sendable {
        let lock = NSLock()
        var next = 0
        var results: [(Item, Outcome)] = []
        var pauseUntil = Date.distantPast
        var fatal: Error?
        var rateLimited = 0
    }

    /// Runs `side` for the open transfer.
    public func run(_ side: Side, now: Timestamp = .now()) throws -> Summary {
        guard Self.concurrencyRange.contains(concurrency) else {
            throw GatehouseError.invalid("--concurrency \(concurrency) is outside \(Self.concurrencyRange.lowerBound)…\(Self.concurrencyRange.upperBound)",
                                         fix: "pass a small number such as 4 (Apple rate-limits; more calls at once mostly earn 429s)")
        }
        let transfers = AppleTransferStore(store: store)
        let transfer = try transfers.open(at: now)
        let (key, privateKey): (AppleKey, P256PrivateKeyBox)
        switch side {
        case .collect:
            guard !transfer.imported else {
                throw GatehouseError.invalid("this store holds an imported transfer (the recipient's side): its transfer identifiers came from the sending team's export",
                                             fix: "run `gatehouse apple transfer exchange` here; collect runs on the sending team's store")
            }
            try transfers.addAccounts(transfer, now: now)
            let signing = try transfers.signingKey(team: transfer.fromTeam, side: "sending")
            (key, privateKey) = (signing.0, P256PrivateKeyBox(signing.1))
        case .exchange:
            guard !transfer.recipientElsewhere else {
                throw GatehouseError.invalid("this transfer's recipient runs its own store (started with --recipient-elsewhere): the exchange happens there",
                                             fix: "`gatehouse apple transfer export --out FILE` here, then `import FILE` and `exchange` on the recipient's store")
            }
            let signing = try transfers.signingKey(team: transfer.toTeam, side: "recipient")
            (key, privateKey) = (signing.0, P256PrivateKeyBox(signing.1))
        }
        let total = min(try pendingCount(side, transfer, retrying: retryRefused), limit ?? Int.max)
        let client = AppleMigrationClient(baseURL: baseURL, clientID: transfer.clientID, key: key, privateKey: privateKey.key)
        let shared = Shared()
        let started = Date()
        var answered = 0, refused = 0, unavailable = 0, asked = 0
        func flush() throws {
            let batch: [(Item, Outcome)] = shared.lock.withLock { let taken = shared.results; shared.results.removeAll(keepingCapacity: true); return taken }
            guard !batch.isEmpty else { return }
            try write(batch, side: side, transfer: transfer)
            for (_, outcome) in batch {
                switch outcome {
                case .collected, .exchanged: answered += 1
                case .refused: refused += 1
                case .unavailable: unavailable += 1
                }
            }
            let elapsed = max(Date().timeIntervalSince(started), 0.001)
            let done = answered + refused + unavailable
            progress?(Progress(done: done, total: total, failed: refused + unavailable, perSecond: Double(done) / elapsed))
        }
        // Page by page (account id order), so that a million accounts are never held at once; within a page,
        // `concurrency` workers take the next account as they finish one, and answers are written as they come.
        var after = ""
        pages: while asked < total {
            let items = try page(side, transfer, after: after, limit: min(Self.pageItems, total - asked))
            guard let last = items.last else { break }
            after = last.accountID
            asked += items.count
            shared.lock.withLock { shared.next = 0 }
            let finished = DispatchGroup()
            for _ in 0..<min(concurrency, items.count) {
                finished.enter()
                let thread = Thread { [attempts] in
                    Self.work(items: items, side: side, target: transfer.toTeam.rawValue, client: client, shared: shared, attempts: attempts)
                    finished.leave()
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
            var writeError: Error?
            while finished.wait(timeout: .now() + flushInterval) == .timedOut {
                do { try flush() } catch {
                    // The store cannot take answers: stop asking, and keep what was written.
                    shared.lock.withLock { if shared.fatal == nil { shared.fatal = error } }
                    writeError = error
                    break
                }
            }
            if writeError != nil { finished.wait(); break pages }
            try flush()
            if shared.lock.withLock({ shared.fatal }) != nil { break }
        }
        let seconds = Date().timeIntervalSince(started)
        let done = answered + refused + unavailable
        let remaining = try pendingCount(side, transfer, retrying: false)
        try store.audit.append(store.db, actor: actor, action: "apple.transfer.\(side.rawValue)", subject: transfer.toTeam.rawValue, details: [
            "transfer_id": .int(transfer.id), "asked": .int(Int64(done)), "answered": .int(Int64(answered)), "refused": .int(Int64(refused)),
            "unavailable": .int(Int64(unavailable)), "remaining": .int(Int64(remaining)), "key_id": .string(key.keyID.rawValue),
        ], at: .now())
        if let fatal = shared.lock.withLock({ shared.fatal }) {
            if let error = fatal as? GatehouseError {
                throw GatehouseError("\(error.message) (\(done) answer(s) of this run were kept; \(remaining) account(s) still to ask)", fix: error.fix, code: error.code)
            }
            throw fatal
        }
        return Summary(side: side, asked: total, answered: answered, refused: refused, unavailable: unavailable, remaining: remaining,
                       rateLimited: shared.lock.withLock { shared.rateLimited }, tokenRenewals: client.renewals,
                       seconds: seconds, requestsPerSecond: seconds > 0 ? Double(done) / seconds : 0)
    }

    /// Accounts asked about per page.
    static let pageItems = 5_000

    /// Which accounts are still to ask about: those without an answer, and those Apple gave no usable answer for;
    /// with `retrying`, those Apple refused too.
    private func pendingCondition(_ side: Side, retrying: Bool) -> (condition: String, ask: String) {
        switch side {
        case .collect:
            return ("transfer_sub IS NULL" + (retrying ? "" : " AND (collect_error IS NULL OR collect_error = 'unavailable')"), "old_sub")
        case .exchange:
            return ("transfer_sub IS NOT NULL AND new_sub IS NULL" + (retrying ? "" : " AND (exchange_error IS NULL OR exchange_error = 'unavailable')"), "transfer_sub")
        }
    }

    /// The next page of accounts to ask about after `after`, in account id order.
    private func page(_ side: Side, _ transfer: AppleTransfer, after: String, limit: Int) throws -> [Item] {
        let (condition, ask) = pendingCondition(side, retrying: retryRefused)
        return try store.db.rows("""
            SELECT account_id, \(ask) AS ask FROM gatehouse_apple_transfer_accounts
            WHERE transfer_id = ? AND \(condition) AND account_id > ? ORDER BY account_id LIMIT \(limit)
            """, [transfer.id, after]).compactMap { row in
            guard let id = row.optionalString("account_id"), let ask = row.optionalString("ask") else { return nil }
            return Item(accountID: id, ask: ask)
        }
    }

    /// How many accounts are still to ask about.
    private func pendingCount(_ side: Side, _ transfer: AppleTransfer, retrying: Bool) throws -> Int {
        let (condition, _) = pendingCondition(side, retrying: retrying)
        return Int(try store.db.scalar("SELECT count(*) FROM gatehouse_apple_transfer_accounts WHERE transfer_id = ? AND \(condition)", [transfer.id]).int64 ?? 0)
    }

    /// A worker: takes the next account, asks Apple, hands the outcome to the writer, until none is left or the run stops.
    private static func work(items: [Item], side: Side, target: String, client: AppleMigrationClient, shared: Shared, attempts: Int) {
        while true {
            let index: Int? = shared.lock.withLock {
                guard shared.fatal == nil, shared.next < items.count else { return nil }
                defer { shared.next += 1 }
                return shared.next
            }
            guard let index else { return }
            let item = items[index]
            var tries = 0, waits = 0
            while true {
                let pause = shared.lock.withLock { shared.pauseUntil.timeIntervalSinceNow }
                if pause > 0 { Thread.sleep(forTimeInterval: pause) }
                let answer: AppleMigrationClient.Answer
                do {
                    switch side {
                    case .collect: answer = try client.migrationInfo([("sub", item.ask), ("target", target)])
                    case .exchange: answer = try client.migrationInfo([("transfer_sub", item.ask)])
                    }
                } catch {
                    shared.lock.withLock { if shared.fatal == nil { shared.fatal = error } }
                    return
                }
                var outcome: Outcome?
                switch answer {
                case .fields(let fields):
                    outcome = Self.outcome(side, fields) ?? (tries + 1 >= attempts ? .unavailable : nil)
                case .refused(let code):
                    outcome = .refused(code)
                case .retryAfter(let seconds):
                    waits += 1
                    shared.lock.withLock {
                        shared.rateLimited += 1
                        let until = Date().addingTimeInterval(seconds)
                        if until > shared.pauseUntil { shared.pauseUntil = until }
                    }
                    if waits > 50 { outcome = .unavailable }
                    else { continue }
                case .unavailable:
                    if tries + 1 >= attempts { outcome = .unavailable }
                }
                if let outcome {
                    shared.lock.withLock { shared.results.append((item, outcome)) }
                    break
                }
                tries += 1
                Thread.sleep(forTimeInterval: min(0.2 * pow(2, Double(tries)), 3))
            }
        }
    }

    /// The outcome an answer's fields give, or nil when they are not what Apple documents (asked again).
    private static func outcome(_ side: Side, _ fields: [String: JSONValue]) -> Outcome? {
        func identifier(_ name: String) -> String? {
            guard let text = fields[name]?.stringValue, !text.isEmpty, text.count <= 255,
                  text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else { return nil }
            return text
        }
        switch side {
        case .collect:
            return identifier("transfer_sub").map(Outcome.collected)
        case .exchange:
            guard let sub = identifier("sub") else { return nil }
            let email = identifier("email").flatMap { $0.contains("@") && $0.count <= 320 ? $0 : nil }
            let isPrivate: Bool? = fields["is_private_email"]?.boolValue ?? fields["is_private_email"]?.stringValue.flatMap { ["true": true, "false": false][$0.lowercased()] }
            return .exchanged(sub: sub, email: email, isPrivate: isPrivate)
        }
    }

    /// Writes answers in writes of at most the engine's rows per write.
    private func write(_ batch: [(Item, Outcome)], side: Side, transfer: AppleTransfer) throws {
        let now = Timestamp.now().iso8601
        let statements: [SQLStatement] = batch.map { item, outcome in
            let key: [SQLBindable] = [now, transfer.id, item.accountID]
            let keyed = "updated_at = ? WHERE transfer_id = ? AND account_id = ?"
            switch (side, outcome) {
            case (_, .collected(let transferSub)):
                return SQLStatement("UPDATE gatehouse_apple_transfer_accounts SET transfer_sub = ?, collect_error = NULL, \(keyed)", [transferSub] + key)
            case (_, .exchanged(let sub, let email, let isPrivate)):
                return SQLStatement("UPDATE gatehouse_apple_transfer_accounts SET new_sub = ?, new_email = ?, is_private_email = ?, exchange_error = NULL, \(keyed)",
                                    [sub, email.map(SQLValue.text) ?? .null, isPrivate.map { SQLValue.integer($0 ? 1 : 0) } ?? .null] + key)
            case (.collect, .refused(let code)), (.exchange, .refused(let code)):
                return SQLStatement("UPDATE gatehouse_apple_transfer_accounts SET \(side == .collect ? "collect_error" : "exchange_error") = ?, \(keyed)", [code] + key)
            case (_, .unavailable):
                return SQLStatement("UPDATE gatehouse_apple_transfer_accounts SET \(side == .collect ? "collect_error" : "exchange_error") = 'unavailable', \(keyed)", key)
            }
        }
        for chunk in statements.chunked(by: store.engine.rowsPerWrite ?? statements.count) {
            try store.db.write { _ = try store.db.batch(Array(chunk)) }
        }
    }
}

/// A P-256 private key carried across threads (it is only read).
struct P256PrivateKeyBox: @unchecked Sendable {
    let key: P256.PrivateKey
    init(_ key: P256.PrivateKey) { self.key = key }
}
