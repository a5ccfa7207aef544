import Dispatch
import Locking

/// A closure running on another thread (the second core) while the caller does something else; `wait()`
/// gives its value. The closure gets only `Sendable` values, so nothing it touches is shared mutably.
///
///     let half = BackgroundJob { work(on: secondHalf) }
///     let mine = work(on: firstHalf)
///     let all = mine + half.wait()
package final class BackgroundJob<Value: Sendable>: Sendable {
    private let result = Monitor<Value?>(nil)

    /// Starts `body` at once on a global queue.
    package init(_ body: @escaping @Sendable () -> Value) {
        DispatchQueue.global().async { [result] in
            let value = body()
            result.update { $0 = value }
        }
    }

    /// The closure's value, once it has returned.
    func wait() -> Value {
        result.wait(until: { $0 != nil }) { $0! }!
    }
}
