import Storage

/// Secondary indexes and foreign keys of some tables, set aside for a bulk load inside one transaction and built
/// again before it commits: Postgres builds an index over rows already there (sorted, in parallel) and validates a
/// foreign key with one anti-join many times faster than it maintains them row by row, where every row of a
/// child table costs a trigger that locks its parent row.
///
/// Set aside: the foreign keys declared on the tables, their indexes that back no constraint, and their unique
/// constraints that no foreign key relies on. Kept: primary keys (an `ON CONFLICT` needs its arbiter) and anything
/// another table's foreign key references. The definitions come from the server (`pg_get_indexdef`,
/// `pg_get_constraintdef`), so what is rebuilt is what was there, names, methods, predicates and options included.
///
/// Postgres changes its schema in transactions: dropping takes the tables to this transaction alone (ACCESS
/// EXCLUSIVE) until it ends, and a failure anywhere, the rebuild included (a duplicate the unique index finds, a
/// child row without its parent), rolls the load back with the indexes as they were. Meant for tables that this
/// transaction fills and nobody else is using yet.
///
///     try db.write {
///         let deferred = try db.deferIndexes(on: ["user", "session"])
///         … COPY …
///         try deferred.rebuild()
///     }
public struct PostgresDeferredIndexes {
    private let db: PostgresConnection
    /// The DDL that puts back what was dropped, in order: indexes, then unique constraints, then foreign keys.
    public let rebuildStatements: [String]

    fileprivate init(db: PostgresConnection, rebuildStatements: [String]) {
        self.db = db
        self.rebuildStatements = rebuildStatements
    }

    /// Builds everything that was set aside, in the transaction that set it aside.
    public func rebuild() throws {
        for statement in rebuildStatements { try db.execute(statement) }
    }
}

extension PostgresConnection {
    /// Drops the secondary indexes, spare unique constraints and foreign keys of `tables` (unquoted names, through
    /// the `search_path`; a table that does not exist is skipped) and returns what rebuilds them. Call inside a
    /// transaction: outside one, there is no rollback to give them back on a failure.
    public func deferIndexes(on tables: [String]) throws -> PostgresDeferredIndexes {
        guard isInTransaction else {
            throw PostgresError(kind: .statement, message: "indexes can only be set aside inside a transaction", sql: nil, store: uri.redacted)
        }
        var drops: [String] = [], indexes: [String] = [], uniques: [String] = [], foreignKeys: [String] = []
        for table in tables {
            let relation = [PostgresConnection.quote(table)] as [SQLBindable]
            // Foreign keys declared on the table (it is the referencing side).
            for row in try rows("""
                SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', c.conrelid::regclass, c.conname) AS drop,
                       format('ALTER TABLE %s ADD CONSTRAINT %I %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid)) AS make
                FROM pg_constraint c WHERE c.conrelid = to_regclass(?) AND c.contype = 'f' ORDER BY c.conname
                """, relation) {
                drops.append(try row.string("drop"))
                foreignKeys.append(try row.string("make"))
            }
            // Unique constraints that no foreign key (of any table) references.
            for row in try rows("""
                SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', c.conrelid::regclass, c.conname) AS drop,
                       format('ALTER TABLE %s ADD CONSTRAINT %I %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid)) AS make
                FROM pg_constraint c WHERE c.conrelid = to_regclass(?) AND c.contype = 'u'
                  AND NOT EXISTS (SELECT 1 FROM pg_constraint f WHERE f.contype = 'f' AND f.conindid = c.conindid)
                ORDER BY c.conname
                """, relation) {
                drops.append(try row.string("drop"))
                uniques.append(try row.string("make"))
            }
            // Indexes that back no constraint and that no foreign key references.
            for row in try rows("""
                SELECT format('DROP INDEX %s', i.indexrelid::regclass) AS drop, pg_get_indexdef(i.indexrelid) AS make
                FROM pg_index i WHERE i.indrelid = to_regclass(?) AND NOT i.indisprimary
                  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
                ORDER BY i.indexrelid::regclass::text
                """, relation) {
                drops.append(try row.string("drop"))
                indexes.append(try row.string("make"))
            }
        }
        // Each table's foreign keys before its unique constraints; a unique constraint another table's foreign key
        // references is never among them.
        for statement in drops { try execute(statement) }
        return PostgresDeferredIndexes(db: self, rebuildStatements: indexes + uniques + foreignKeys)
    }
}
