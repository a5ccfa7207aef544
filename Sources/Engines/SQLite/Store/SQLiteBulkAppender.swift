import Gatehouse
import Storage

/// SQLite's bulk appender for the demo seed: the multi-row and one-row `INSERT`s prepared once and run again for each
/// chunk, skipping the statement cache's lookup per run.
struct SQLiteBulkAppender: BulkAppender {
    let many: Statement, one: Statement
    let width: Int, chunk: Int

    func append(_ values: [SQLValue]) throws {
        try BulkInsert.inChunks(values, width: width, chunk: chunk) { many, values in try (many ? self.many : one).execute(values) }
    }
}

extension SQLiteStoreEngine {
    func bulkAppender(_ db: SQLDatabase, table: String, columns: [String], many: String, one: String, chunk: Int) throws -> (any BulkAppender)? {
        guard let sqlite = db as? SQLiteDatabase else { return nil }
        return SQLiteBulkAppender(many: try sqlite.statement(many), one: try sqlite.statement(one), width: columns.count, chunk: chunk)
    }
}
