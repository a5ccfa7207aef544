import Gatehouse
import Storage

extension SecondConnection {
    /// Starts `body` at once on another thread, on a Postgres connection reading the snapshot `id` another
    /// connection exported (`PostgresConnection.exportSnapshot`): the two see exactly the same rows.
    /// Its lock waits end by the `caller`'s deadline.
    convenience init(_ location: StoreLocation, postgresSnapshot id: String, caller: SQLDatabase? = nil,
                     _ body: @escaping @Sendable (SQLDatabase) throws -> Value) {
        let deadline = caller?.waitDeadline
        self.init(job: BackgroundJob {
            Result {
                let db = try location.connect(readOnly: true)
                db.waitDeadline = deadline
                guard let postgres = db as? PostgresConnection else {
                    throw GatehouseError("a Postgres snapshot can only be read on a Postgres store")
                }
                return try postgres.read(snapshot: id) { try body(postgres) }
            }
        }, caller: caller)
    }
}
