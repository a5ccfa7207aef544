import Foundation

/// State that threads share and wait on: `Locked`'s rule (the state is reachable only while the lock is held) plus a
/// condition to wait for. The one waiting primitive of the code base: a pool's free slot, a queue's next item, a
/// worker's result, a sweeper's stop.
///
///     let queue = Monitor([Int]())
///     queue.update { $0.append(1) }                                   // wakes the waiters
///     let first = queue.wait(until: { !$0.isEmpty }) { $0.removeFirst() }
///
/// Every change made through `update` or `wait(until:then:)` wakes every waiter, which then re-checks its own
/// condition: simple, and correct however many kinds of waiter there are.
///
/// Like `Locked`, a `Monitor` is `Sendable` only when its state is.
public final class Monitor<State> {
    private let condition = NSCondition()
    private var state: State

    public init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with the state while holding the lock, waking nobody: for reads and changes no waiter waits for.
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    /// Runs `body` with the state while holding the lock, then wakes every waiter.
    public func update<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&state)
    }

    /// Waits until `ready` holds for the state, then runs `body` with it under the same hold of the lock and wakes
    /// every waiter. With a `deadline`, gives up when it passes: nil, and `body` does not run.
    public func wait<Result>(until ready: (State) -> Bool, deadline: Date? = nil,
                             then body: (inout State) throws -> Result) rethrows -> Result? {
        condition.lock()
        defer { condition.unlock() }
        while !ready(state) {
            if let deadline {
                guard condition.wait(until: deadline) || ready(state) else { return nil }
            } else {
                condition.wait()
            }
        }
        defer { condition.broadcast() }
        return try body(&state)
    }

    /// A copy of the state, read under the lock.
    public var value: State { withLock { $0 } }
}

// `state` is read and written only with `condition` locked, and a `Sendable` state may be handed to any thread.
extension Monitor: @unchecked Sendable where State: Sendable {}
