import Dispatch
import Storage

/// Work that reads the store on a connection of its own, on another thread, so that a whole-store scan can
/// use the second core while the calling thread scans something else. The connection is opened, used and
/// closed on the worker thread (a connection never crosses threads), read-only, inside one read transaction.
///
///     let sessions = SecondConnection(path: store.path) { db in try SessionKeys.read(db, schema: schema) }
///     … // scan something else on the caller's own connection
///     let keys = try sessions.wait()
final class SecondConnection<Value: Sendable>: @unchecked Sendable {
    // Written by the worker before `done` is signalled; read by the caller only after `wait()`.
    private var result: Result<Value, Error> = .failure(CancellationError())
    private let done = DispatchSemaphore(value: 0)

    /// Starts `body` at once on a global queue.
    init(path: String, _ body: @escaping @Sendable (Database) throws -> Value) {
        DispatchQueue.global().async { [self] in
            result = Result {
                let db = try Database(path: path, options: Database.Options(readOnly: true))
                return try db.read { try body(db) }
            }
            done.signal()
        }
    }

    /// What `body` returned or threw, once it has finished.
    func wait() throws -> Value {
        done.wait()
        return try result.get()
    }
}
