import Foundation
import Locking

/// Up to `size` resources (connections, open stores), each used by one thread at a time.
///
/// `make` opens a new resource on demand; `checkIn` tidies one up before it goes back (for a
/// connection: roll back a transaction a caller left open, so its lock cannot leak).
///
/// A resource that is no longer usable (`isUsable`: a server connection the server closed, or one cut off
/// mid-pipeline) is dropped, at check-out or check-in, and a new one is made in its place on demand. While the
/// server cannot be reached, `make` is not tried again for a short, growing pause (`Backoff`): requests in that
/// pause fail at once with the last error instead of each waiting out a connect timeout. Waiting for a resource that
/// others hold is bounded too (`waitTimeout`, or less: what is left of the caller's `WaitDeadline`), ending in
/// `ResourcePoolTimeout`.
public final class ResourcePool<Resource>: @unchecked Sendable { // a resource is reached by one thread at a time: idle, only under `state`'s lock; checked out, only by its caller until check-in
    private let size: Int
    private let make: @Sendable () throws -> Resource
    private let tidy: @Sendable (Resource) -> Void
    private let isUsable: @Sendable (Resource) -> Bool
    private let waitTimeout: Double
    private let state: Monitor<State>

    /// What the threads share: the idle resources, how many are open, and the pause after a failed `make`.
    private struct State {
        var idle: [Resource] = []
        var open = 0
        var backoff = ResourcePoolBackoff()
    }

    /// What a check-out does once it holds the lock: use an idle resource, fail fast, or make a new one.
    private enum Step {
        case use(Resource)
        case fail(Error)
        case make
    }

    /// Opens the first resource now, so that a bad path fails at start-up rather than on first use. A check-out waits
    /// at most `waitTimeout` seconds for a resource another thread holds.
    public init(size: Int, waitTimeout: Double = 15, make: @escaping @Sendable () throws -> Resource,
                tidy: @escaping @Sendable (Resource) -> Void = { _ in }, isUsable: @escaping @Sendable (Resource) -> Bool = { _ in true }) throws {
        self.size = max(1, size)
        self.waitTimeout = waitTimeout
        self.make = make
        self.tidy = tidy
        self.isUsable = isUsable
        state = Monitor(State(idle: [try make()], open: 1))
    }

    /// Runs `body` with a resource no other thread uses until it returns. A check-out waits at most `waitTimeout`
    /// for one, and never past `deadline`: the operation's budget for every wait.
    public func withResource<T>(deadline: WaitDeadline? = nil, _ body: (Resource) throws -> T) throws -> T {
        let resource = try checkOut(deadline: deadline)
        defer { checkIn(resource) }
        return try body(resource)
    }

    private static var now: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    private func checkOut(deadline operationDeadline: WaitDeadline?) throws -> Resource {
        let seconds = min(waitTimeout, operationDeadline?.remainingSeconds ?? waitTimeout)
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            let step = state.wait(until: { !$0.idle.isEmpty || $0.open < size }, deadline: deadline) { state -> Step in
                if let resource = state.idle.popLast() { return .use(resource) }
                if let error = state.backoff.failingFast(now: Self.now) { return .fail(error) }
                state.open += 1
                return .make
            }
            switch step {
            case nil:
                throw ResourcePoolTimeout(size: size, seconds: seconds)
            case .use(let resource):
                if isUsable(resource) { return resource }
                // Gone stale while idle (its server restarted, its backend was ended): drop it, try the next.
                state.update { $0.open -= 1 }
            case .fail(let error):
                throw error
            case .make:
                do {
                    let resource = try make()
                    state.withLock { $0.backoff.succeeded() }
                    return resource
                } catch {
                    state.update { state in
                        state.open -= 1
                        state.backoff.failed(error, now: Self.now)
                    }
                    throw error
                }
            }
        }
    }

    private func checkIn(_ resource: Resource) {
        tidy(resource)
        let usable = isUsable(resource)
        state.update { state in
            if usable { state.idle.append(resource) } else { state.open -= 1 }
        }
    }
}

/// Every resource of a pool stayed in use for as long as a caller may wait for one.
public struct ResourcePoolTimeout: Error, CustomStringConvertible, Sendable {
    /// The pool's size.
    public let size: Int
    /// How long the caller waited.
    public let seconds: Double

    public var description: String {
        "all \(size) connection(s) to the store stayed in use for \(Int(seconds)) s"
    }
}

/// The pause between attempts to make a resource after one failed: 100 ms, doubling up to 2 s, reset by a success.
struct ResourcePoolBackoff {
    static let first = 0.1, longest = 2.0
    private(set) var lastError: Error?
    private var retryAt = 0.0
    private var pause = 0.0

    /// The error to fail with now without trying, while the pause after a failure lasts.
    func failingFast(now: Double) -> Error? { now < retryAt ? lastError : nil }

    mutating func failed(_ error: Error, now: Double) {
        pause = pause == 0 ? Self.first : min(pause * 2, Self.longest)
        lastError = error
        retryAt = now + pause
    }

    mutating func succeeded() { self = ResourcePoolBackoff() }
}
