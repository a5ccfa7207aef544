import Gatehouse
import Storage

/// The stores a request's handler reads and writes through: the console's pool, plus the request's token check
/// when it waits for the handler's first read (`TokenCheck`): a store checked out while the check is unanswered
/// carries it as its connection's `SnapshotPrelude`, so the check and the first snapshot share one round trip.
public struct RequestStores: Sendable {
    let pool: StorePool
    let check: TokenCheck?
    /// The request's deadline for every wait on the store (`WaitDeadline`), from when it was taken up: each store
    /// checked out gets what is left of it, so a request answers "busy" once, within the busy timeout.
    let deadline: WaitDeadline?

    init(pool: StorePool, check: TokenCheck?, deadline: WaitDeadline?) {
        self.pool = pool
        self.check = check
        self.deadline = deadline
    }

    /// Runs `body` with a store no other thread uses until it returns.
    public func withStore<T>(_ body: (Store) throws -> T) throws -> T {
        try pool.withStore(deadline: deadline) { store in
            guard let check, !check.isAnswered else { return try body(store) }
            check.hold(store)
            defer { check.hold(nil) }
            return try store.carrying(check.prelude()) { try body(store) }
        }
    }
}
