import Dispatch

/// A closure running on another thread (the second core) while the caller does something else; `wait()`
/// gives its value. The closure gets only `Sendable` values, so nothing it touches is shared mutably.
///
///     let half = BackgroundJob { work(on: secondHalf) }
///     let mine = work(on: firstHalf)
///     let all = mine + half.wait()
final class BackgroundJob<Value: Sendable>: @unchecked Sendable {
    // Written by the worker before `done` is signalled; read by the caller only after `done.wait()`.
    private var value: Value?
    private let done = DispatchSemaphore(value: 0)

    /// Starts `body` at once on a global queue.
    init(_ body: @escaping @Sendable () -> Value) {
        DispatchQueue.global().async { [self] in
            value = body()
            done.signal()
        }
    }

    /// The closure's value, once it has returned.
    func wait() -> Value {
        done.wait()
        return value!
    }
}
