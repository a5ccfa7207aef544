import Foundation
import Gatehouse
import Locking
import Storage

/// An access token's check that rides along with the handler's first snapshot instead of taking a round trip of
/// its own (`SnapshotPrelude`): for cheap read routes (GET, registered `inline`), where the check and the page's
/// reads are each a few index lookups. Nothing is sent before the check allows it: `AuthMiddleware` asks `session()`
/// once the handler has returned (or thrown) and discards the handler's response when the token is refused; a
/// handler that needs the session earlier (`RequestContext.requireSession()`) gets the check run there and then.
/// Only inline routes defer, and their handlers get the store as a `ReadOnlyStore`, which has no write: a write can
/// never run on a token not yet checked.
public final class TokenCheck: Sendable {
    private enum Outcome {
        case accepted(AdminSession)
        case refused(Error)
    }

    private let lookupSQL: String
    private let lookupArguments: [SQLBindable]
    let required: AdminRole
    let factor: RouteFactorRule
    let stepUpWindow: Seconds
    let now: Timestamp
    private let pool: StorePool
    /// The request's deadline, for a check run on a store of its own.
    private let deadline: WaitDeadline?
    private let outcome = Locked<Outcome?>(nil)
    /// The store the handler holds now, if any (set by `RequestStores` on the handler's thread): a check run while
    /// the handler holds a store runs on it, never on a second one from the pool (which may be empty).
    private let held = Locked<HeldStore?>(nil)

    /// A store and the thread that checked it out. `@unchecked Sendable` because `Store` is not (a store is used by
    /// one thread at a time): `TokenCheck` hands the store back only to the thread that holds it
    /// (`storeHeldByThisThread`), so the store itself never reaches another thread.
    private struct HeldStore: @unchecked Sendable {
        let store: Store
        let thread: pthread_t
    }

    init(token: String, required: AdminRole, factor: RouteFactorRule = [], stepUpWindow: Seconds = AuthSettings.standardStepUpWindow,
         now: Timestamp, pool: StorePool, deadline: WaitDeadline? = nil) throws {
        let lookup = try TokenService.lookup(accessToken: token)
        lookupSQL = lookup.sql
        lookupArguments = lookup.arguments
        self.required = required
        self.factor = factor
        self.stepUpWindow = stepUpWindow
        self.now = now
        self.pool = pool
        self.deadline = deadline
    }

    var isAnswered: Bool { outcome.value != nil }

    /// Whether the token was found good (so far: false while unanswered).
    var isAccepted: Bool {
        if case .accepted? = outcome.value { return true }
        return false
    }

    /// The prelude that answers this check from a snapshot's first result.
    func prelude() -> SnapshotPrelude {
        SnapshotPrelude(SQLStatement(lookupSQL, lookupArguments)) { [self] rows in record(rows.first) }
    }

    /// Records the store the calling thread holds now (nil once it gives it back), for a check run meanwhile.
    func hold(_ store: Store?) {
        let holder = pthread_self()
        held.withLock { $0 = store.map { HeldStore(store: $0, thread: holder) } }
    }

    /// The store the calling thread holds, if any; nil on any other thread, which checks on a store of its own.
    private var storeHeldByThisThread: Store? {
        let caller = pthread_self()
        return held.withLock { held in held.flatMap { pthread_equal($0.thread, caller) != 0 ? $0.store : nil } }
    }

    /// The signed-in session, or the refusal (`TokenError`, or 403 for a role too low). Runs the lookup on its own
    /// when no snapshot carried it.
    func session() throws -> AdminSession {
        let decided: Outcome
        if let answered = outcome.value {
            decided = answered
        } else {
            let (sql, arguments) = (lookupSQL, lookupArguments)
            decided = record(try storeHeldByThisThread.map { try $0.db.row(sql, arguments) }
                             ?? pool.withStore(deadline: deadline) { try $0.db.row(sql, arguments) })
        }
        switch decided {
        case .accepted(let session): return session
        case .refused(let error): throw error
        }
    }

    /// Decides from the lookup's row, unless decided already; returns the decision that stands.
    @discardableResult
    private func record(_ row: Row?) -> Outcome {
        let decided: Outcome
        do {
            let session = try TokenService.session(from: row, now: now)
            if let refusal = AuthMiddleware.refusal(session, required: required)
                ?? AuthMiddleware.refusal(session, factor: factor, window: stepUpWindow, now: now) {
                decided = .refused(refusal)
            } else {
                decided = .accepted(session)
            }
        } catch {
            decided = .refused(error)
        }
        return outcome.withLock { stored in
            if stored == nil { stored = decided }
            return stored ?? decided
        }
    }
}
