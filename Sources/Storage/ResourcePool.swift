import Foundation

/// Up to `size` resources (connections, open stores), each used by one thread at a time.
///
/// `make` opens a new resource on demand; `checkIn` tidies one up before it goes back (for a
/// connection: roll back a transaction a caller left open, so its lock cannot leak).
public final class ResourcePool<Resource>: @unchecked Sendable {
    private let size: Int
    private let make: () throws -> Resource
    private let tidy: (Resource) -> Void
    private let condition = NSCondition()
    private var idle: [Resource] = []
    private var open = 0

    /// Opens the first resource now, so that a bad path fails at start-up rather than on first use.
    public init(size: Int, make: @escaping () throws -> Resource, tidy: @escaping (Resource) -> Void = { _ in }) throws {
        self.size = max(1, size)
        self.make = make
        self.tidy = tidy
        idle.append(try make())
        open = 1
    }

    /// Runs `body` with a resource no other thread uses until it returns.
    public func withResource<T>(_ body: (Resource) throws -> T) throws -> T {
        let resource = try checkOut()
        defer { checkIn(resource) }
        return try body(resource)
    }

    private func checkOut() throws -> Resource {
        condition.lock()
        while idle.isEmpty && open >= size { condition.wait() }
        if let resource = idle.popLast() {
            condition.unlock()
            return resource
        }
        open += 1
        condition.unlock()
        do {
            return try make()
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ resource: Resource) {
        tidy(resource)
        condition.lock()
        idle.append(resource)
        condition.signal()
        condition.unlock()
    }
}
