import Gatehouse
import Storage

/// The demo seed on SQLite: a larger page cache and no fsync while it loads (demo data can be seeded again), and, for
/// a store created for this seed, the rollback journal in memory instead of the WAL, which writes every page twice
/// (about 25% of the seed's time). A failed batch still rolls back, and an interrupt stops between batches; only a
/// crash inside a batch could damage the file, which held no user data. Switching needs the store to itself: with
/// another connection open it stays in WAL. Such a bulk load builds the name search index once at the end instead of
/// marking every user pending.
final class SQLiteDemoSeedLoad: DemoSeedLoad {
    private let db: SQLDatabase
    /// The journal is in memory for this seed (put back to WAL at the end).
    private var bulk = false

    init(_ store: Store, firstPerson: Int, createdForTheSeed: Bool) throws {
        db = store.db
        // A bigger page cache for the bulk load; the default 2 MB would thrash the random-key indexes.
        try db.execute("PRAGMA cache_size = -65536")
        do {
            // Demo data can be seeded again; it is not worth an fsync per checkpoint while a bulk load runs.
            try db.execute("PRAGMA synchronous = OFF")
            bulk = createdForTheSeed && firstPerson == 0 && (try? db.scalar("PRAGMA journal_mode = MEMORY").string?.lowercased()) == "memory"
            if bulk { try UserSearchIndex.drop(db, schema: store.schema) }
        } catch {
            end()
            throw error
        }
    }

    var buildsNameKeys: Bool { false }
    var isOneTransaction: Bool { false }

    func load(_ inserter: SeedInserter, batches: () throws -> Void) throws { try batches() }

    /// Built with the default page cache: SQLite's sorter (the index on the keys) may use as much as the cache.
    func beforeIndexing() throws {
        try db.execute("PRAGMA cache_size = -2000")
    }

    func end() {
        if bulk { _ = try? db.scalar("PRAGMA journal_mode = WAL") }
        bulk = false
        try? db.execute("PRAGMA cache_size = -2000")
        try? db.execute("PRAGMA synchronous = NORMAL")
    }
}

extension SQLiteStoreEngine {
    func demoSeedLoad(_ store: Store, tables: [String], firstPerson: Int, createdForTheSeed: Bool) throws -> any DemoSeedLoad {
        try SQLiteDemoSeedLoad(store, firstPerson: firstPerson, createdForTheSeed: createdForTheSeed)
    }
}
