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
final class SecondConnection<Value: Sendable> {
    private let job: BackgroundJob<Result<Value, Error>>

    /// Wraps work already started; an engine's own way of reading on a second connection starts it
    /// (`init(_:postgresSnapshot:_:)`).
    init(job: BackgroundJob<Result<Value, Error>>) {
        self.job = job
    }

    /// Starts `body` at once on another thread; with `snapshot` (the default), inside one read transaction.
    init(_ location: StoreLocation, snapshot: Bool = true, _ body: @escaping @Sendable (SQLDatabase) throws -> Value) {
        job = BackgroundJob {
            Result {
                let db = try location.connect(readOnly: true)
                return snapshot ? try db.read { try body(db) } : try body(db)
            }
        }
    }

    /// What `body` returned or threw, once it has finished.
    func wait() throws -> Value {
        try job.wait().get()
    }
}
