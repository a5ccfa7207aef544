import Storage

/// Work that reads the store on a connection of its own, on another thread, so that a whole-store scan can
/// use the second core while the calling thread scans something else. The connection is opened, used and
/// closed on the worker thread (a connection never crosses threads), read-only, inside one read transaction
/// unless the work needs none. Fast path kept for ops/bench's `users duplicates` (< 10 s), `accounts check` (< 5 s) and
/// `gatehouse health` (< 2 s) rows on 1,000,000 users.
///
///     let sessions = SecondConnection(store.location) { db in try SessionKeys.read(db, schema: schema) }
///     … // scan something else on the caller's own connection
///     let keys = try sessions.wait()
package final class SecondConnection<Value: Sendable> {
    private let job: BackgroundJob<Result<Value, Error>>
    /// The connection of the operation this work is part of: the two share one budget for lock waits
    /// (`WaitDeadline`), so a lock wait that ran out here is not waited out again there.
    private let caller: SQLDatabase?

    /// Wraps work already started; an engine's own way of reading on a second connection starts it
    /// (`init(_:postgresSnapshot:caller:_:)`).
    package init(job: BackgroundJob<Result<Value, Error>>, caller: SQLDatabase? = nil) {
        self.job = job
        self.caller = caller
    }

    /// Starts `body` at once on another thread; with `snapshot` (the default), inside one read transaction. Its
    /// lock waits end by the `caller`'s deadline.
    package init(_ location: StoreLocation, snapshot: Bool = true, caller: SQLDatabase? = nil, _ body: @escaping @Sendable (SQLDatabase) throws -> Value) {
        let deadline = caller?.waitDeadline
        job = BackgroundJob {
            Result {
                let db = try location.connect(readOnly: true)
                db.waitDeadline = deadline
                return snapshot ? try db.read { try body(db) } : try body(db)
            }
        }
        self.caller = caller
    }

    /// What `body` returned or threw, once it has finished. A lock wait that ran out spends the caller's budget
    /// too: what the caller then reads itself (a fallback onto its own connection) gives up at once.
    package func wait() throws -> Value {
        let result = job.wait()
        if case .failure(let error) = result, let caller, GatehouseError.operatorFacing(error)?.code == .busy {
            caller.waitDeadline = .now
        }
        return try result.get()
    }
}
