import Foundation
import Gatehouse
import Storage

/// The demo seed on Postgres. Each batch's commit does not wait for its flush (`synchronous_commit = off`). A store
/// without users, whose tables this role owns, is loaded as the Postgres manual's "Populating a Database" advises: one
/// transaction that sets the seeded tables' secondary indexes and foreign keys aside (`PostgresDeferredIndexes`), loads
/// every batch (each a savepoint, `COPY`ed) and builds them again before it commits. Better Auth's tables are this
/// transaction's alone until it ends: a sign-up meanwhile waits for the seed (a store without users has nobody else to
/// keep waiting). A failure anywhere leaves the store as it was; an interrupt commits the batches loaded so far,
/// indexes rebuilt. Setting indexes aside needs the tables' owner: another role seeds batch by batch, and so does a
/// seed that cannot have every table to itself within a few seconds (`lockEveryTable`).
final class PostgresDemoSeedLoad: DemoSeedLoad {
    private let db: PostgresConnection
    private let schema: AuthSchema
    private let tables: [String]
    /// The connection of a bulk load (one transaction), or nil for batch by batch.
    private var bulk: PostgresConnection?

    init(_ store: Store, db: PostgresConnection, tables: [String], firstPerson: Int) throws {
        self.db = db
        schema = store.schema
        self.tables = tables + SyncRecord.tables
        try db.execute("SET synchronous_commit = off")
        bulk = firstPerson == 0 && (try? Self.ownsEvery(db, self.tables)) == true ? db : nil
    }

    var buildsNameKeys: Bool { bulk != nil }
    var isOneTransaction: Bool { bulk != nil }

    func load(_ inserter: SeedInserter, batches: () throws -> Void) throws {
        guard let bulk else { return try batches() }
        struct TablesInUse: Error {}
        do {
            try bulk.write {
                guard try Self.lockEveryTable(bulk, tables + [UserSearchIndex.namesTable, UserSearchIndex.pendingTable]) else { throw TablesInUse() }
                try bulkLoad(bulk, inserter, batches)
            }
        } catch is TablesInUse {
            self.bulk = nil
            inserter.nameKeys = nil
            try batches()
        }
    }

    private func bulkLoad(_ bulk: PostgresConnection, _ inserter: SeedInserter, _ batches: () throws -> Void) throws {
        // The name search index is written with the users when the user table is still empty under the writer
        // lock (another seed may have filled it meanwhile); otherwise dropped and built again at the end, instead
        // of marking every user pending. Either way before the commit: no other process finds the store without it
        // (and builds it itself).
        let empty = try bulk.scalar("SELECT NOT EXISTS (SELECT 1 FROM \(schema.user.sql))").int64 == 1
        if empty { try PostgresNameIndex.beginBulk(bulk, schema: schema) } else { try UserSearchIndex.drop(bulk, schema: schema) }
        inserter.nameKeys = empty ? { keys in _ = try PostgresNameIndex.copyKeys(keys, db: bulk) } : nil
        try Self.truncateIfEmpty(bulk, tables)
        let deferred = try bulk.deferIndexes(on: tables)
        try batches()
        try deferred.rebuild()
        if empty { try PostgresNameIndex.finishBulk(bulk, schema: schema) } else { try UserSearchIndex.ensure(bulk, schema: schema) }
    }

    /// Takes every one of `tables` that exists for this transaction alone, all at once and never waiting while it holds
    /// some: a reader's snapshot holds its tables one after another, so a load that took them one by one (`TRUNCATE`,
    /// dropping indexes) could wait for a reader that waits for it — a deadlock, one of the two cancelled. Tried for up
    /// to `lockTries` × 100 ms; false when readers kept some table the whole time (the seed then goes batch by batch).
    static func lockEveryTable(_ db: PostgresConnection, _ tables: [String]) throws -> Bool {
        let marks = tables.map { _ in "?" }.joined(separator: ", ")
        let present = try db.rows("SELECT t FROM unnest(ARRAY[\(marks)]::text[]) AS t WHERE to_regclass(quote_ident(t)) IS NOT NULL",
                                  tables).compactMap { $0[0].string }
        guard !present.isEmpty else { return true }
        let lock = "LOCK TABLE \(present.map(SQL.quote).joined(separator: ", ")) IN ACCESS EXCLUSIVE MODE NOWAIT"
        // NOWAIT's refusal is no wait that ran out: the command's wait budget stays as it was for the seed after it.
        let budget = db.waitDeadline
        for attempt in 1...lockTries {
            do {
                try db.write { try db.execute(lock) }
                return true
            } catch let error as PostgresError where error.sqlState == PostgresSQLState.lockNotAvailable && attempt < lockTries {
                db.waitDeadline = budget
                usleep(100_000)
            } catch let error as PostgresError where error.sqlState == PostgresSQLState.lockNotAvailable {
                db.waitDeadline = budget
                return false
            }
        }
        return false
    }

    static let lockTries = 30

    func beforeIndexing() throws {}

    func end() {
        try? db.execute("SET synchronous_commit = on")
    }

    /// Whether the connection's role owns (or is a member of the owner of) every one of the tables that exists.
    static func ownsEvery(_ db: PostgresConnection, _ tables: [String]) throws -> Bool {
        let marks = tables.map { _ in "to_regclass(?)" }.joined(separator: ", ")
        return try db.scalar("SELECT coalesce(bool_and(pg_has_role(relowner, 'USAGE')), false) FROM pg_class WHERE oid IN (\(marks))",
                             tables.map { PostgresConnection.quote($0) }).int64 == 1
    }

    /// Truncates the tables when every one is empty, which changes nothing but their files: a table whose file
    /// this transaction created is loaded without WAL on a server with `wal_level = minimal` (the Postgres manual's
    /// "Populating a Database"), and written to WAL as usual on any other. Skipped (in a savepoint) when another
    /// table's foreign key refers to one of them, which TRUNCATE refuses.
    static func truncateIfEmpty(_ db: PostgresConnection, _ tables: [String]) throws {
        let quoted = tables.map(SQL.quote)
        let empty = "SELECT " + quoted.map { "NOT EXISTS (SELECT 1 FROM \($0))" }.joined(separator: " AND ")
        guard try db.scalar(empty).int64 == 1 else { return }
        do {
            try db.write { try db.execute("TRUNCATE " + quoted.joined(separator: ", ")) }
        } catch is PostgresError {
            // Referred to from elsewhere (or not ours to truncate): load into the tables as they are.
        }
    }
}

extension PostgresStoreEngine {
    func demoSeedLoad(_ store: Store, tables: [String], firstPerson: Int, createdForTheSeed: Bool) throws -> any DemoSeedLoad {
        guard let postgres = store.db as? PostgresConnection else { return BatchSeedLoad() }
        return try PostgresDemoSeedLoad(store, db: postgres, tables: tables, firstPerson: firstPerson)
    }
}
