import Foundation
import Locking

/// The receiver's store side: verified events wait in a bounded queue and one thread records them (each in its own
/// write, deduplicated and acted on: `GoogleSecurityInbox.record`). A request thread waits for its event's write at
/// most `wait` seconds, so a busy or locked store never holds a connection for long: the sender is then told to
/// deliver again (a duplicate `jti` is recognised and acts once). Refusals are counted through the same queue and
/// dropped when it is full, so a flood of forged tokens cannot fill it.
public final class GoogleEventWriter: @unchecked Sendable {
    public static let capacity = 4096

    private final class Pending {
        enum Work {
            case event(GoogleSecurityEvent, fingerprint: String, transport: GoogleSecurityInbox.Transport)
            case refusal(GoogleRISCRefusal, transport: GoogleSecurityInbox.Transport, source: String?)
        }
        let work: Work
        var result: Result<GoogleSecurityInbox.Receipt, Error>?
        init(_ work: Work) { self.work = work }
    }

    private let condition = NSCondition()
    private var queue: [Pending] = []
    private var stopped = false
    private let pool: StorePool
    private let keys: GoogleRISCKeys
    private var thread: Thread?

    public init(pool: StorePool, keys: GoogleRISCKeys) {
        self.pool = pool
        self.keys = keys
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "google-risc-writer"
        self.thread = thread
        thread.start()
    }

    /// How many events and refusals wait for the writer now.
    var queued: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Queues `event` and waits up to `wait` seconds for its write: the receipt, or nil when the queue is full or the
    /// write did not finish in time.
    public func record(_ event: GoogleSecurityEvent, fingerprint: String, transport: GoogleSecurityInbox.Transport, wait: Double) throws -> GoogleSecurityInbox.Receipt? {
        let pending = Pending(.event(event, fingerprint: fingerprint, transport: transport))
        condition.lock()
        defer { condition.unlock() }
        guard queue.count < Self.capacity, !stopped else { return nil }
        queue.append(pending)
        condition.broadcast()
        let deadline = Date().addingTimeInterval(wait)
        while pending.result == nil {
            guard condition.wait(until: deadline) else { break }
        }
        return try pending.result?.get()
    }

    /// Counts a refusal, later; dropped when the queue is full.
    public func count(_ refusal: GoogleRISCRefusal, transport: GoogleSecurityInbox.Transport, source: String?) {
        condition.lock()
        defer { condition.unlock() }
        guard queue.count < Self.capacity / 2, !stopped else { return }
        queue.append(Pending(.refusal(refusal, transport: transport, source: source)))
        condition.broadcast()
    }

    /// The most events one write records: where the engine's transaction takes any number of rows, the events queued
    /// together are recorded in one transaction (each in a savepoint of its own), so 32 connections wait for a few
    /// commits, not 32 in a row.
    static let batch = 64

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopped { condition.wait() }
            if queue.isEmpty && stopped { condition.unlock(); return }
            let taken = Array(queue.prefix(Self.batch))
            queue.removeFirst(taken.count)
            condition.unlock()
            var results: [Result<GoogleSecurityInbox.Receipt, Error>] = []
            do {
                try pool.withStore { store in
                    // The master key once a batch (it seals what an event clears, for its undo), not once an event.
                    let inbox = GoogleSecurityInbox(store: store, keys: keys, masterKey: try? MasterKey.load(storePath: store.path))
                    func one(_ pending: Pending) -> Result<GoogleSecurityInbox.Receipt, Error> {
                        Result {
                            switch pending.work {
                            case .event(let event, let fingerprint, let transport):
                                return try inbox.record(event, fingerprint: fingerprint, transport: transport, now: .now())
                            case .refusal(let refusal, let transport, let source):
                                return try inbox.refuse(refusal, transport: transport, source: source, now: .now())
                            }
                        }
                    }
                    if taken.count > 1 && store.engine.rowsPerWrite == nil {
                        // A token named by its hash may need the hashes brought up to date: done before the batch's
                        // write, so Better Auth's own writes do not wait for it.
                        for pending in taken {
                            if case .event(let event, _, _) = pending.work, case .doubleSHA512(let hash)? = event.token {
                                _ = try? GoogleTokenHashes(store: store).account(hash: hash, columns: GoogleSecurityInbox.accountColumns(store.schema))
                            }
                        }
                        try store.db.write { results = taken.map(one) }
                    } else {
                        results = taken.map(one)
                    }
                }
            } catch {
                // The batch's transaction did not commit: none of its events is recorded.
                results = taken.map { _ in .failure(error) }
            }
            condition.lock()
            for (pending, result) in zip(taken, results) { pending.result = result }
            condition.broadcast()
            condition.unlock()
        }
    }
}
