import Locking

/// A blocking hand-off between one producer thread and one consumer, holding at most `capacity` items:
/// the seeder builds the next batch of rows while the previous one is inserted.
final class BoundedQueue<Item: Sendable>: Sendable {
    private let capacity: Int
    private let state = Monitor(State())

    private struct State {
        var items: [Item] = []
        var finished = false
        var cancelled = false
    }

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Adds an item, waiting while the queue is full. False when the consumer has cancelled.
    func push(_ item: Item) -> Bool {
        state.wait(until: { $0.items.count < capacity || $0.cancelled }) { state in
            guard !state.cancelled else { return false }
            state.items.append(item)
            return true
        } ?? false
    }

    /// The next item, waiting for one; nil once the producer has finished and the queue is empty.
    func pop() -> Item? {
        state.wait(until: { !$0.items.isEmpty || $0.finished }) { state in
            state.items.isEmpty ? nil : state.items.removeFirst()
        } ?? nil
    }

    /// The producer has no more items.
    func finish() { state.update { $0.finished = true } }

    /// The consumer stops: the producer's next push returns false.
    func cancel() { state.update { $0.cancelled = true } }
}
