import Gatehouse
import Storage

/// Postgres's bulk appender for the demo seed: `COPY … FROM STDIN`, no statement to plan and no parameter to parse
/// per row.
struct PostgresBulkAppender: BulkAppender {
    let db: PostgresConnection
    let table: String, columns: [String]

    func append(_ values: [SQLValue]) throws {
        if !values.isEmpty { try db.copy(into: table, columns: columns, values: values[...]) }
    }
}

extension PostgresStoreEngine {
    func bulkAppender(_ db: SQLDatabase, table: String, columns: [String], many: String, one: String, chunk: Int) throws -> (any BulkAppender)? {
        guard let postgres = db as? PostgresConnection else { return nil }
        return PostgresBulkAppender(db: postgres, table: table, columns: columns)
    }
}
