/// A statement to answer together with the next `SQLDatabase.snapshot` on a connection: put ahead of that
/// snapshot's statements, read from the same snapshot, and sent in the same round trip. The console sends its token
/// check so: a page's reads and the check that allows them cost one trip to a Postgres server, not two.
///
/// The prelude is taken by the first snapshot after it is set (whether that snapshot succeeds or not) and answered
/// with its rows when it does; a caller that needs the answer regardless asks `isAnswered` and runs the statement
/// itself when nothing took it. Nothing else on the connection waits for it: the caller must not act on what it
/// reads before the answer allows it.
///
///     db.prelude = SnapshotPrelude(SQLStatement("SELECT role FROM admins WHERE token = ?", [hash])) { rows in check(rows) }
///     let results = try db.snapshot(pageReads)   // one round trip; check(rows) ran before this returns
public final class SnapshotPrelude {
    public let statement: SQLStatement
    private let answer: ([Row]) -> Void
    /// Whether a snapshot read the statement and handed over its rows.
    public private(set) var isAnswered = false

    public init(_ statement: SQLStatement, answer: @escaping ([Row]) -> Void) {
        self.statement = statement
        self.answer = answer
    }

    func deliver(_ rows: [Row]) {
        isAnswered = true
        answer(rows)
    }
}

extension SQLDatabase {
    /// Runs `read` for the statements of a snapshot, with a waiting `prelude` put first and handed its rows.
    package func answeringPrelude(_ statements: [SQLStatement], _ read: ([SQLStatement]) throws -> [[Row]]) throws -> [[Row]] {
        guard let prelude else { return try read(statements) }
        self.prelude = nil
        let results = try read([prelude.statement] + statements)
        prelude.deliver(results[0])
        return Array(results.dropFirst())
    }
}
