import Storage

/// What a Postgres database holds, read from `pg_catalog`: the Postgres side of `SQLDatabase`'s catalog.
///
/// A table is named as a query names it, unqualified, so it resolves through the connection's `search_path`
/// (`?options=-csearch_path%3Dauth` puts Better Auth's tables in schema `auth`): what these say exists is what
/// the statements run on the same connection will find.
extension PostgresConnection {
    /// Whether `name` (unquoted, exact case) is a table the connection's `search_path` reaches.
    public func tableExists(_ name: String) throws -> Bool {
        try scalar("SELECT count(*) FROM pg_class WHERE oid = to_regclass($1) AND relkind IN ('r', 'p')",
                   [PostgresConnection.quote(name)]).int64 ?? 0 > 0
    }

    /// Which of these tables exist, in one statement (`tableExists` for each name).
    public func existingTables(_ names: [String]) throws -> Set<String> {
        guard !names.isEmpty else { return [] }
        let marks = names.map { _ in "(SELECT count(*) FROM pg_class WHERE oid = to_regclass(?) AND relkind IN ('r', 'p'))" }
        guard let row = try row("SELECT " + marks.joined(separator: ", "), names.map(PostgresConnection.quote)) else { return [] }
        return Set(names.enumerated().filter { row[$0.offset].int64 ?? 0 > 0 }.map(\.element))
    }

    /// The columns of a table, in order; empty when the table does not exist. `declaredType` is Postgres's own
    /// spelling of the type (`format_type`): `text`, `uuid`, `boolean`, `timestamp with time zone`,
    /// `timestamp(3) without time zone`, `bigint`, ...
    public func columns(of table: String) throws -> [ColumnInfo] {
        try columns(ofEach: [table])[table] ?? []
    }

    /// The columns of each table (as `columns(of:)`), in one statement.
    public func columns(ofEach tables: [String]) throws -> [String: [ColumnInfo]] {
        guard !tables.isEmpty else { return [:] }
        var found: [String: [ColumnInfo]] = [:]
        for row in try rows("""
            SELECT t.n, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
                   coalesce((SELECT k.position FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
                             WHERE k.attnum = a.attnum), 0) AS pk
            FROM \(Self.tableList(tables.count))
            JOIN pg_attribute a ON a.attrelid = to_regclass(t.name)
            LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
            WHERE a.attnum > 0 AND NOT a.attisdropped
            ORDER BY t.n, a.attnum
            """, tables.map(PostgresConnection.quote)) {
            found[tables[try row.int("n")], default: []].append(
                ColumnInfo(name: try row.string("name"), declaredType: try row.string("type"), notNull: row.bool("notnull"),
                           primaryKeyPosition: try row.int("pk")))
        }
        return found
    }

    /// `(VALUES (0, ?), (1, ?), …) AS t(n, name)`: the tables a catalog statement asks about, numbered from 0.
    private static func tableList(_ count: Int) -> String {
        "(VALUES " + (0..<count).map { "(\($0), CAST(? AS text))" }.joined(separator: ", ") + ") AS t(n, name)"
    }

    /// The names of the tables in the connection's current schema (the first of its `search_path` that exists).
    public func tableNames() throws -> [String] {
        try rows("SELECT c.relname AS name FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1")
            .map { try $0.string("name") }
    }

    /// The foreign keys declared on a table, one entry per referencing column (a composite key gives one entry per
    /// column pair, as SQLite's `pragma_foreign_key_list` does), read from `pg_constraint`.
    public func foreignKeys(of table: String) throws -> [ForeignKeyInfo] {
        try foreignKeys(ofEach: [table])[table] ?? []
    }

    /// The foreign keys of each table (as `foreignKeys(of:)`), in one statement. The names are scalar subqueries, not
    /// joins: planning five catalog joins took 3-5 ms, more than a merge's whole read of the rows.
    public func foreignKeys(ofEach tables: [String]) throws -> [String: [ForeignKeyInfo]] {
        guard !tables.isEmpty else { return [:] }
        var found: [String: [ForeignKeyInfo]] = [:]
        for row in try rows("""
            SELECT t.n, c.conname AS constraint_name,
                   (SELECT p.relname FROM pg_class p WHERE p.oid = c.confrelid) AS parent,
                   (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = k.child_attnum) AS "from",
                   (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.confrelid AND a.attnum = k.parent_attnum) AS "to",
                   CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN 'SET DEFAULT'
                                      WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END AS on_delete,
                   c.condeferrable AS deferrable
            FROM \(Self.tableList(tables.count))
            JOIN pg_constraint c ON c.contype = 'f' AND c.conrelid = to_regclass(t.name)
            CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS k(child_attnum, parent_attnum, position)
            ORDER BY t.n, c.conname, k.position
            """, tables.map(PostgresConnection.quote)) {
            let table = tables[try row.int("n")]
            found[table, default: []].append(
                ForeignKeyInfo(table: table, column: try row.string("from"), referencedTable: try row.string("parent"),
                               referencedColumn: row.optionalString("to"), onDelete: try row.string("on_delete"),
                               constraint: try row.string("constraint_name"), deferrable: row.bool("deferrable")))
        }
        return found
    }

    /// The indexes on a table, from `pg_index`, key columns in order (an expression is `""`). The leading column is
    /// byte-ordered when its collation is "C" or "POSIX" (or the default of a database collated so), or not a
    /// collatable type at all.
    public func indexes(of table: String) throws -> [IndexInfo] {
        try rows("""
            SELECT c.relname AS name, i.indisunique AS is_unique,
                   coalesce((SELECT string_agg(coalesce(a.attname, ''), ',' ORDER BY k.position)
                             FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
                             LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                             WHERE k.position <= i.indnkeyatts), '') AS columns,
                   coalesce((SELECT co.collname IN ('C', 'POSIX')
                                    OR (co.collname = 'default' AND d.datcollate IN ('C', 'POSIX'))
                             FROM pg_collation co, pg_database d
                             WHERE co.oid = i.indcollation[0] AND d.datname = current_database()), true) AS byte_ordered
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = to_regclass($1)
            ORDER BY c.relname
            """, [PostgresConnection.quote(table)]).map {
            IndexInfo(name: try $0.string("name"), columns: try $0.string("columns").split(separator: ",", omittingEmptySubsequences: false).map(String.init),
                      unique: $0.bool("is_unique"), leadingColumnByteOrdered: $0.bool("byte_ordered"))
        }
    }

    /// Objects a statement naming `prefix`-named tables unqualified does not reach but another role may have meant it
    /// to: a table (or view) of that name in a schema other than the one the pinned `search_path` resolves it to, and a
    /// schema named after the session's role that the pin left out (owned by neither the role nor a superuser; see
    /// `pinnedSearchPath`), where `"$user"` would have found it first. Such schemas come first.
    /// A ctid changes when its row is updated: rows are named by their primary key.
    public func rowidNamesRows(of table: String) throws -> Bool { false }

    /// Only the table's owner (or a member of its role) may index it.
    public func mayCreateIndex(on table: String) throws -> Bool {
        try scalar("SELECT coalesce((SELECT pg_has_role(relowner, 'USAGE') FROM pg_class WHERE oid = to_regclass(?)), false)",
                   [SQL.quote(table)]).int64 == 1
    }

    public func schemaShadows(prefix: String) throws -> [SchemaShadow] {
        try rows("""
            SELECT n.nspname AS schema, c.relname AS name, pg_get_userbyid(c.relowner) AS owner
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND starts_with(c.relname, $1)
              AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND NOT starts_with(n.nspname, 'pg_')
              AND to_regclass(quote_ident(c.relname)) IS NOT NULL AND c.oid <> to_regclass(quote_ident(c.relname))
            UNION ALL
            SELECT n.nspname, NULL, pg_get_userbyid(n.nspowner)
            FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner
            WHERE n.nspname = current_user AND r.rolname <> current_user AND NOT r.rolsuper
            ORDER BY 2 NULLS FIRST, 1
            """, [prefix]).map {
            SchemaShadow(schema: try $0.string("schema"), table: $0.optionalString("name"), owner: try $0.string("owner"))
        }
    }
}
