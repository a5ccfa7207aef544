/// What a Postgres database holds, read from `pg_catalog`: the Postgres side of `Database.tableExists` and
/// `Database.columns(of:)`.
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

    /// The columns of a table, in order; empty when the table does not exist. `declaredType` is Postgres's own
    /// spelling of the type (`format_type`): `text`, `uuid`, `boolean`, `timestamp with time zone`,
    /// `timestamp(3) without time zone`, `bigint`, ...
    public func columns(of table: String) throws -> [ColumnInfo] {
        try rows("""
            SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
                   coalesce(array_position(i.indkey::int2[], a.attnum), 0) AS pk
            FROM pg_attribute a
            LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
            WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY a.attnum
            """, [PostgresConnection.quote(table)]).map {
            ColumnInfo(name: try $0.string("name"), declaredType: try $0.string("type"), notNull: $0.bool("notnull"),
                       primaryKeyPosition: try $0.int("pk"))
        }
    }

    /// The names of the tables in the connection's current schema (the first of its `search_path` that exists).
    public func tableNames() throws -> [String] {
        try rows("SELECT c.relname AS name FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1")
            .map { try $0.string("name") }
    }
}
