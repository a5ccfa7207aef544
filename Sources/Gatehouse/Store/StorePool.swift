import Foundation

/// Open stores (one connection each) for code that runs on several threads at once, such as the
/// console's request handlers. Each store is used by one thread at a time.
///
///     let pool = try StorePool(path: path, size: 4)
///     let status = try pool.withStore { try StoreStatus.read($0) }
public final class StorePool: @unchecked Sendable {
    /// The store file.
    public let path: String
    private let configurationPath: String?
    private let size: Int
    private let condition = NSCondition()
    private var idle: [Store] = []
    private var open = 0

    /// Opens the first store now, so that a bad path or an unready store fails at start-up.
    public init(path: String, configurationPath: String? = nil, size: Int = 4) throws {
        self.path = path
        self.configurationPath = configurationPath
        self.size = max(1, size)
        idle.append(try Store.open(path: path, configurationPath: configurationPath))
        open = 1
    }

    /// Runs `body` with a store no other thread uses until it returns.
    public func withStore<T>(_ body: (Store) throws -> T) throws -> T {
        let store = try checkOut()
        defer { checkIn(store) }
        return try body(store)
    }

    private func checkOut() throws -> Store {
        condition.lock()
        while idle.isEmpty && open >= size { condition.wait() }
        if let store = idle.popLast() {
            condition.unlock()
            return store
        }
        open += 1
        condition.unlock()
        do {
            return try Store.open(path: path, configurationPath: configurationPath)
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ store: Store) {
        condition.lock()
        if store.db.isInTransaction { try? store.db.executeScript("ROLLBACK") }
        idle.append(store)
        condition.signal()
        condition.unlock()
    }
}
