import Storage

extension SecondConnection {
    /// Starts `body` at once on another thread, on a Postgres connection reading the snapshot `id` another
    /// connection exported (`PostgresConnection.exportSnapshot`): the two see exactly the same rows.
    convenience init(_ location: StoreLocation, postgresSnapshot id: String, _ body: @escaping @Sendable (SQLDatabase) throws -> Value) {
        self.init(job: BackgroundJob {
            Result {
                let db = try location.connect(readOnly: true)
                guard let postgres = db as? PostgresConnection else {
                    throw GatehouseError("a Postgres snapshot can only be read on a Postgres store")
                }
                return try postgres.read(snapshot: id) { try body(postgres) }
            }
        })
    }
}
