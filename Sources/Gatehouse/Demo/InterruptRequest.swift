import Dispatch
import Foundation
import Locking

/// Ctrl-C (SIGINT) or SIGTERM turned into a flag that long work asks between steps, instead of ending the
/// process in the middle of one: `demo seed` stops after the batch it is writing.
///
///     let interrupt = InterruptRequest()
///     seeder.shouldStop = { interrupt.isRequested }
///
/// While it exists both signals are delivered to it; when it is released they end the process again.
public final class InterruptRequest: @unchecked Sendable {
    private let requested = Locked(false)
    private var sources: [DispatchSourceSignal] = []

    public init() {
        let queue = DispatchQueue(label: "gatehouse.interrupt")
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in self?.request() }
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    /// Whether a signal has arrived.
    public var isRequested: Bool { requested.value }

    private func request() { requested.withLock { $0 = true } }
}
