import Gatehouse

/// The stores a request's handler reads and writes through: the console's pool, plus the request's token check
/// when it waits for the handler's first read (`TokenCheck`): a store checked out while the check is unanswered
/// carries it as its connection's `SnapshotPrelude`, so the check and the first snapshot share one round trip.
public struct RequestStores: Sendable {
    let pool: StorePool
    let check: TokenCheck?

    /// Runs `body` with a store no other thread uses until it returns.
    public func withStore<T>(_ body: (Store) throws -> T) throws -> T {
        try pool.withStore { store in
            guard let check, !check.isAnswered else { return try body(store) }
            check.current.withLock { $0 = store }
            store.db.prelude = check.prelude()
            defer {
                store.db.prelude = nil
                check.current.withLock { $0 = nil }
            }
            return try body(store)
        }
    }
}
