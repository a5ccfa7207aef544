import Storage

/// Open stores (one connection each) for code that runs on several threads at once, such as the
/// console's request handlers. Each store is used by one thread at a time.
///
///     let pool = try StorePool(path: path, size: 4)
///     let status = try pool.withStore { try StoreStatus.read($0) }
public final class StorePool: Sendable {
    /// The store file.
    public let path: String
    /// The busy timeout its stores were opened with: a request's budget for every wait (`requestDeadline`).
    public let busyMilliseconds: Int
    private let pool: ResourcePool<Store>

    /// Opens the first store now, so that a bad path or an unready store fails at start-up. A store whose connection
    /// broke (its server restarted, its backend was ended) is dropped and a new one opened on the next request; a
    /// request waits at most the busy timeout for a store another thread holds.
    public init(path: String, configurationPath: String? = nil, size: Int = 4, timeouts: StoreTimeouts = .command) throws {
        self.path = path
        busyMilliseconds = timeouts.busyMilliseconds
        pool = try ResourcePool(size: size, waitTimeout: Double(timeouts.busyMilliseconds) / 1000,
                                make: { try Store.open(path: path, configurationPath: configurationPath, timeouts: timeouts) },
                                tidy: { $0.db.rollBackAbandonedTransaction() }, isUsable: { $0.db.isUsable })
    }


    /// Refuses to go on when the store's server cannot give `count` connections to this process (the pool's first
    /// is open already), as its engine counts them (`StoreEngine.freeConnections`: on Postgres, `max_connections` less
    /// the superuser reserve and the connections open now, or the role's own `CONNECTION LIMIT`). A file has no limit.
    public func requireServerConnections(_ count: Int, fix: String) throws {
        try withStore { store in
            guard let free = try store.engine.freeConnections(store.db) else { return }
            guard free < count - 1 else { return }
            throw GatehouseError("the \(store.db.dialect.name) server of \(store.path) can give this process \(max(free, 0) + 1) connection(s) (max_connections, those open now, or the role's CONNECTION LIMIT); the console needs \(count)",
                                 fix: "\(fix), or raise max_connections / the role's connection limit")
        }
    }

    /// A request's deadline for every wait on a lock or a connection: the busy timeout from `start` (a `DispatchTime`
    /// uptime in nanoseconds: when the request arrived, so its wait for a handler thread counts), or from now.
    public func requestDeadline(since start: UInt64? = nil) -> WaitDeadline {
        start.map { WaitDeadline(milliseconds: busyMilliseconds, after: $0) } ?? WaitDeadline(milliseconds: busyMilliseconds)
    }

    /// Runs `body` with a store no other thread uses until it returns. With a `deadline` (a request's), the wait for
    /// a store and every lock wait in `body` share it: the request gives up once, when it passes.
    public func withStore<T>(deadline: WaitDeadline? = nil, _ body: (Store) throws -> T) throws -> T {
        try pool.withResource(deadline: deadline) { store in
            // Each use starts from its own deadline (none: a wait's budget starts at its first wait).
            store.db.waitDeadline = deadline
            defer { store.db.waitDeadline = nil }
            return try body(store)
        }
    }
}
