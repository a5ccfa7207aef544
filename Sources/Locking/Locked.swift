import Foundation

/// A value that threads share, reachable only while its lock is held: the one lock type of the code base.
///
///     let hits = Locked(0)
///     hits.withLock { $0 += 1 }
///     let seen = hits.value
///
/// `tryWithLock` runs only when the lock is free, for callers that have something better to do than wait.
///
/// A `Locked` is `Sendable` only when its value is: the lock keeps two threads from touching the value at once, but a
/// value that is not `Sendable` (a class with its own mutable state, say) could still be handed out by `withLock` and
/// used by two threads after the lock is released.
public final class Locked<Value> {
    private let lock = NSLock()
    private var protected: Value

    public init(_ value: Value) {
        protected = value
    }

    /// Runs `body` with the value while holding the lock.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&protected)
    }

    /// Runs `body` with the value if the lock is free now; nil (without running it) when another thread holds it.
    public func tryWithLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard lock.try() else { return nil }
        defer { lock.unlock() }
        return try body(&protected)
    }

    /// A copy of the value, read under the lock.
    public var value: Value { withLock { $0 } }
}

// `protected` is read and written only with `lock` held, and a `Sendable` value may be handed to any thread.
extension Locked: @unchecked Sendable where Value: Sendable {}
