import Dispatch
import Foundation

extension HTTPServer {
    /// Blocks the calling thread until the process receives SIGINT or SIGTERM, and returns that signal.
    ///
    /// A signal that arrives before this call still ends the process; a server that announces itself (prints
    /// its address) before it waits should create ``TerminationSignals`` first and wait on that instead.
    @discardableResult
    public static func waitForTermination() -> Int32 {
        TerminationSignals().wait()
    }
}

/// SIGINT and SIGTERM, caught from the moment this is created: a signal that comes before `wait()` is kept for it,
/// and `received` tells long work between its steps whether one came.
///
/// Both signals get a handler that records the first one and posts a POSIX semaphore (both async-signal-safe),
/// installed with `signal()` before `init` returns. Dispatch signal sources would lose signals: one
/// registers on libdispatch's manager thread some time after `resume()`, and a SIGTERM that comes in between is
/// ignored; a second source made after the first is cancelled never fires. The handler stays installed after
/// the wait, so a second Ctrl-C during shutdown does not cut it short. One instance at a time per process: a new
/// one forgets a signal the previous one saw. Create it before the server says it is listening, since whoever
/// reads that line may send SIGTERM at once.
///
/// ```swift
/// let termination = TerminationSignals()
/// try server.start()
/// print("listening on \(server.port)")
/// termination.wait()
/// server.stop()
/// ```
public final class TerminationSignals: Sendable {
    /// The handler's state, on the heap: a signal handler may not touch a Swift global that the waiting thread is
    /// accessing (the exclusivity check would trap), and raw memory has no such check.
    private nonisolated(unsafe) static let semaphore: UnsafeMutablePointer<sem_t> = {
        let pointer = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(pointer, 0, 0)
        return pointer
    }()
    private nonisolated(unsafe) static let received: UnsafeMutablePointer<sig_atomic_t> = {
        let pointer = UnsafeMutablePointer<sig_atomic_t>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return pointer
    }()

    public init() {
        let semaphore = Self.semaphore, received = Self.received
        while sem_trywait(semaphore) == 0 {}
        received.pointee = 0
        for number in [SIGINT, SIGTERM] { signal(number, terminationHandler) }
    }

    /// The first signal since this was created, without waiting: for long work that stops between steps
    /// (`demo seed` finishes the batch it is writing).
    public var received: Int32? {
        let number = Self.received.pointee
        return number == 0 ? nil : Int32(number)
    }

    /// Waits for the first signal (one that came before this call counts) and returns it.
    @discardableResult
    public func wait() -> Int32 {
        // A nil timeout waits forever, so a signal is always returned.
        wait(timeout: nil) ?? SIGTERM
    }

    /// Like ``wait()``, but gives up after `timeout` and returns `nil`.
    public func wait(timeout: DispatchTimeInterval?) -> Int32? {
        let semaphore = Self.semaphore
        if let timeout {
            var deadline = timespec()
            clock_gettime(CLOCK_REALTIME, &deadline)
            let nanoseconds = Int(deadline.tv_nsec) + Self.nanoseconds(timeout)
            deadline.tv_sec += nanoseconds / 1_000_000_000
            deadline.tv_nsec = nanoseconds % 1_000_000_000
            while sem_timedwait(semaphore, &deadline) != 0 {
                guard errno == EINTR else { return nil }
            }
        } else {
            while sem_wait(semaphore) != 0 {}
        }
        // Posted again, so that a later wait sees the same signal.
        sem_post(semaphore)
        return Self.received.pointee
    }

    /// The interval in nanoseconds, at most ~146 years (so that adding it to a `timespec` cannot overflow).
    private static func nanoseconds(_ interval: DispatchTimeInterval) -> Int {
        let (value, unit): (Int, Int)
        switch interval {
        case .seconds(let seconds): (value, unit) = (seconds, 1_000_000_000)
        case .milliseconds(let milliseconds): (value, unit) = (milliseconds, 1_000_000)
        case .microseconds(let microseconds): (value, unit) = (microseconds, 1_000)
        case .nanoseconds(let nanoseconds): (value, unit) = (nanoseconds, 1)
        default: (value, unit) = (Int.max, 1)
        }
        let (product, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? Int.max / 2 : min(product, Int.max / 2)
    }

    /// Records the first signal and wakes the waiter: only async-signal-safe work.
    fileprivate static func record(_ number: Int32) {
        if received.pointee == 0 { received.pointee = sig_atomic_t(number) }
        sem_post(semaphore)
    }
}

/// The C handler for SIGINT and SIGTERM.
private let terminationHandler: @convention(c) (Int32) -> Void = { number in
    TerminationSignals.record(number)
}
