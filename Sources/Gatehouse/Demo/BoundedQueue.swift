import Foundation

/// A blocking hand-off between one producer thread and one consumer, holding at most `capacity` items:
/// the seeder builds the next batch of rows while the previous one is inserted.
final class BoundedQueue<Item: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Item] = []
    private let capacity: Int
    private var finished = false
    private var cancelled = false

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Adds an item, waiting while the queue is full. False when the consumer has cancelled.
    func push(_ item: Item) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    /// The next item, waiting for one; nil once the producer has finished and the queue is empty.
    func pop() -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !finished { condition.wait() }
        guard !items.isEmpty else { return nil }
        let item = items.removeFirst()
        condition.broadcast()
        return item
    }

    /// The producer has no more items.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// The consumer stops: the producer's next push returns false.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
