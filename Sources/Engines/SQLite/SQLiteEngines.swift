import Gatehouse

/// The store engines this target provides, for the executable (and the tests) to register (`StoreEngines.register`):
/// an offline copy (`FILE.sql`), then any other path, a SQLite file.
package enum SQLiteEngines {
    package static let all: [any StoreEngine.Type] = [SQLDumpStoreEngine.self, SQLiteStoreEngine.self]
}
