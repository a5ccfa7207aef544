import Dispatch
import Foundation
import Locking

extension HTTPServer {
    /// Blocks the calling thread until the process receives SIGINT or SIGTERM, and returns that signal.
    ///
    /// Both signals are set to be ignored (so they no longer end the process) and are delivered through
    /// dispatch signal sources instead; they stay ignored afterwards, so a second Ctrl-C during shutdown does not
    /// cut it short. Typical use in a `serve` command:
    ///
    /// ```swift
    /// try server.start()
    /// HTTPServer.waitForTermination()
    /// server.stop()
    /// ```
    @discardableResult
    public static func waitForTermination() -> Int32 {
        // A nil timeout waits forever, so a signal is always returned.
        waitForTermination(timeout: nil) ?? SIGTERM
    }

    /// Like ``waitForTermination()``, but gives up after `timeout` and returns `nil`.
    static func waitForTermination(timeout: DispatchTimeInterval?) -> Int32? {
        let received = ReceivedSignal()
        let queue = DispatchQueue(label: "HTTPServer.waitForTermination")
        let sources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { received.record(number) }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        if let timeout {
            guard received.semaphore.wait(timeout: .now() + timeout) == .success else { return nil }
        } else {
            received.semaphore.wait()
        }
        return received.first
    }
}

/// The first termination signal seen, shared between the signal queue and the waiting thread.
private final class ReceivedSignal: @unchecked Sendable {
    let semaphore = DispatchSemaphore(value: 0)
    private let number = Locked<Int32?>(nil)

    var first: Int32? { number.value }

    func record(_ signal: Int32) {
        let isFirst = number.withLock { number -> Bool in
            guard number == nil else { return false }
            number = signal
            return true
        }
        if isFirst { semaphore.signal() }
    }
}
