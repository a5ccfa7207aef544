import Storage

/// Open stores (one connection each) for code that runs on several threads at once, such as the
/// console's request handlers. Each store is used by one thread at a time.
///
///     let pool = try StorePool(path: path, size: 4)
///     let status = try pool.withStore { try StoreStatus.read($0) }
public final class StorePool: Sendable {
    /// The store file.
    public let path: String
    private let pool: ResourcePool<Store>

    /// Opens the first store now, so that a bad path or an unready store fails at start-up.
    public init(path: String, configurationPath: String? = nil, size: Int = 4) throws {
        self.path = path
        pool = try ResourcePool(size: size, make: { try Store.open(path: path, configurationPath: configurationPath) },
                                tidy: { $0.db.rollBackAbandonedTransaction() })
    }

    /// Runs `body` with a store no other thread uses until it returns.
    public func withStore<T>(_ body: (Store) throws -> T) throws -> T {
        try pool.withResource(body)
    }
}
