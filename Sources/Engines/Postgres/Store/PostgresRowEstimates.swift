import Gatehouse
import Storage

extension PostgresStoreEngine: RowCountEstimating {
    /// The planner's own estimate: the density of the last VACUUM, ANALYZE or CREATE INDEX (`pg_class.reltuples`
    /// over `relpages`) times the table's size now, as the planner scales it, so a table that grew since its last
    /// ANALYZE is not under-counted. A table never analyzed has the statistics collector's live-row count
    /// (`pg_stat_user_tables.n_live_tup`); nil when neither is known. Reads the catalog only.
    func estimatedRows(_ db: SQLDatabase, table: String) throws -> Int? {
        let estimate = try db.row("""
            SELECT CASE
                WHEN c.reltuples >= 0 AND c.relpages > 0
                    THEN round(c.reltuples::float8 / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::bigint))::bigint
                WHEN c.reltuples >= 0 AND pg_relation_size(c.oid) = 0 THEN 0
                ELSE s.n_live_tup END
            FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = to_regclass(?)
            """, [SQL.quote(table)])
        return estimate?[0].int64.map { Int(max(0, $0)) }
    }
}
