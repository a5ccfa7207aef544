import Foundation
import Gatehouse
import JOSE
import Storage

/// The merge script in Postgres's SQL (`MergeSQLEmitter.script(for:at:on:)`): Gatehouse's writer lock, checks in
/// `DO` blocks, values as untyped literals.
extension MergeSQLEmitter {
    /// Postgres's script. A check is a `DO` block that raises unless its conditions hold: the raise aborts the
    /// transaction, every later statement fails ("current transaction is aborted"), and `COMMIT` rolls back — with
    /// or without psql's ON_ERROR_STOP. The script first takes Gatehouse's writer lock, so it waits for (and holds
    /// off) Gatehouse's own writes to the same database. Values are untyped literals, read by each column's type
    /// (a `boolean` reads '1', a `bytea` '\x…', a `timestamptz` its ISO text with offset).
    static func postgresScript(for plan: MergePlan, at time: Timestamp) throws -> String {
        let id = plan.id ?? ""
        let (before, changes, counts) = parts(of: plan, at: time, Flavor(literal: postgresLiteral, same: "IS NOT DISTINCT FROM"))
        let refusal = postgresLiteral(.text("gatehouse merge \(id): the rows are not as planned; nothing was changed"))
        // A check's body is dollar-quoted: its tag must not occur in the body (values are the rows' own text).
        func check(_ conditions: [String]) -> String {
            let body = "BEGIN\n  IF NOT (\(conditions.joined(separator: "\n    AND "))) THEN\n    RAISE EXCEPTION USING MESSAGE = \(refusal);\n  END IF;\nEND"
            var tag = "$gatehouse$", serial = 0
            while body.contains(tag) { serial += 1; tag = "$gatehouse\(serial)$" }
            return "DO \(tag)\n\(body)\n\(tag);\n"
        }
        var out = header(plan, id, at: time, rollback: "an exception aborts the transaction",
                         run: "psql -X -v ON_ERROR_STOP=1 -f this.sql 'postgresql://…/COPY'") + """

            BEGIN ISOLATION LEVEL READ COMMITTED;
            SET LOCAL standard_conforming_strings = on;
            SET CONSTRAINTS ALL DEFERRED;
            SELECT pg_advisory_xact_lock(\(PostgresConnection.writerLockKey));

            -- The planned before-state.

            """
        for chunk in chunked(before) { out += check(chunk) }
        out += "\n-- The merge, row by row.\n"
        for change in changes {
            out += "-- \(oneLine(change.reason))\n\(change.statement);\n"
        }
        out += "\n-- The result must be exactly as planned, or everything is rolled back.\n"
        for chunk in chunked(changes.compactMap(\.check) + counts) { out += check(chunk) }
        out += "COMMIT;\n"
        return out
    }

    /// A Postgres literal that the column it meets reads back as the same stored value: NULL, or an untyped string
    /// (the column's type decides how it is read, so an integer 1 meets a `boolean` as true and an `integer` as 1).
    static func postgresLiteral(_ value: SQLValue) -> String {
        let text: String
        switch value {
        case .null: return "NULL"
        case .integer(let number): text = String(number)
        case .real(let number): text = PostgresConnection.text(of: number)
        case .text(let string): text = string
        case .blob(let bytes): text = "\\x" + Hex.encode(bytes)
        }
        return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
