import Gatehouse
import JOSE
import Storage

/// The merge script in SQLite's SQL (`MergeSQLEmitter`): one `BEGIN IMMEDIATE` transaction whose temp trigger rolls
/// everything back unless the rows are as planned.
extension MergeSQLEmitter {
    /// SQLite's NULL-safe equality and literals.
    package static let sqliteFlavor = Flavor(literal: literal, same: "IS")

    package static func sqliteScript(for plan: MergePlan, at time: Timestamp) throws -> String {
        let id = plan.id ?? ""
        let (before, changes, counts) = parts(of: plan, at: time, sqliteFlavor)
        var out = header(plan, id, at: time, rollback: "RAISE(ROLLBACK)", run: "sqlite3 COPY.sqlite < this.sql") + """

            BEGIN IMMEDIATE;
            PRAGMA defer_foreign_keys = ON;
            CREATE TEMP TABLE gatehouse_merge_ready (ok INTEGER NOT NULL);
            CREATE TEMP TABLE gatehouse_merge_check (ok INTEGER);
            CREATE TEMP TRIGGER gatehouse_merge_check_abort BEFORE INSERT ON gatehouse_merge_check WHEN NEW.ok IS NOT 1
            BEGIN SELECT RAISE(ROLLBACK, 'gatehouse merge \(id): the rows are not as planned; nothing was changed'); END;

            -- The planned before-state.

            """
        let chunks = before.isEmpty ? [["1"]] : chunked(before)
        for chunk in chunks {
            out += "INSERT INTO gatehouse_merge_ready (ok) SELECT 1 WHERE " + chunk.joined(separator: "\n  AND ") + ";\n"
        }
        out += "\n"
        out += "-- The merge, row by row.\n"
        let ready = "(SELECT count(*) FROM temp.gatehouse_merge_ready) = \(chunks.count)"
        for change in changes {
            out += "-- \(oneLine(change.reason))\n\(change.statement) AND \(ready);\n"
        }
        let after = [ready] + changes.compactMap(\.check) + counts
        out += "\n-- The result must be exactly as planned, or everything is rolled back.\n"
        for chunk in chunked(after) {
            out += "INSERT INTO gatehouse_merge_check (ok) SELECT " + chunk.joined(separator: "\n  AND ") + ";\n"
        }
        out += """
            DROP TABLE temp.gatehouse_merge_check;
            DROP TABLE temp.gatehouse_merge_ready;
            COMMIT;

            """
        return out
    }

    /// A SQL literal that reads back as the same stored value.
    package static func literal(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let number): return String(number)
        case .real(let number):
            // %.17g round-trips every double; a trailing ".0" keeps it a REAL.
            let text = String(format: "%.17g", number)
            return text.contains(where: { $0 == "." || $0 == "e" || $0 == "n" || $0 == "i" }) ? text : text + ".0"
        case .text(let text):
            if text.utf8.contains(0) { return "CAST(X'\(Hex.encode(Array(text.utf8)))' AS TEXT)" }
            return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let bytes): return "X'\(Hex.encode(bytes))'"
        }
    }

}
