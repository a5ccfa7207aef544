import Gatehouse
import Storage

extension MigrationCatalog {
    /// Applies this catalog (the Postgres one) to a Postgres database: pending migrations in order, each once, a
    /// migration whose `unless-table` exists (a Better Auth table under its `configuration` name) recorded without
    /// running. Returns the migrations applied, skipped ones included; `PostgresMigrator().applied` says which ran.
    @discardableResult
    public func migrate(postgres db: PostgresConnection, configuration: StoreConfiguration, now: String) throws -> [Migration] {
        let shouldRun = shouldRun(configuration: configuration)
        return try PostgresMigrator().migrate(db, migrations, now: now) { migration, db in try shouldRun(migration, db) }
    }
}

extension StoreTimeouts {
    /// The limits of a Postgres session opened with these timeouts.
    var postgres: PostgresSessionLimits {
        PostgresSessionLimits(lockTimeoutMilliseconds: busyMilliseconds, statementTimeoutMilliseconds: statementMilliseconds)
    }
}
