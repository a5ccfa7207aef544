import Foundation
import JOSE
import Storage

/// A plan as one SQL script for a remote copy of the store (a D1 database, say), runnable by any
/// SQLite shell: `sqlite3 copy.sqlite < merge.sql`.
///
/// The guard technique, in plain SQLite:
/// 1. `BEGIN IMMEDIATE`, foreign-key checks deferred to the commit.
/// 2. A temp table `gatehouse_merge_ready` gets one row per chunk of checks that holds: every row the
///    plan changes or relies on is exactly as planned (every column, `IS` so NULLs match) and every
///    person-referencing column holds as many rows for each user as when planned.
/// 3. Each statement names its row by key **and** by every column's planned value, and runs only while
///    `gatehouse_merge_ready` has all its rows: on a copy that differs, nothing runs at all.
/// 4. Checks insert into the temp table `gatehouse_merge_check`, whose temp trigger runs
///    `RAISE(ROLLBACK, …)` unless every row ended exactly as planned and every count is as planned.
///    The rollback undoes everything, temp tables included; the statements after it then fail on the
///    missing temp tables, changing nothing, and `COMMIT` reports that no transaction is active.
public enum MergeSQLEmitter {
    /// Checks per statement (an `AND` chain deepens SQLite's expression tree by one per term).
    static let checksPerStatement = 100

    /// The script for `plan`, with date columns the plan touches set to `time`.
    public static func script(for plan: MergePlan, at time: Timestamp, engine: SQLDialect.Engine = .sqlite) throws -> String {
        guard engine == .sqlite else {
            // The guards rest on SQLite's RAISE(ROLLBACK) in a temp trigger; a Postgres script would need its own.
            throw GatehouseError("the merge script is written in SQLite's SQL; the plan is stored, and on this \(engine.displayName) store it is applied in one transaction with the same checks",
                                 fix: "apply the stored plan (its id is above) on this store instead")
        }
        guard let id = plan.id else {
            throw GatehouseError.conflict("the plan has undecided conflicts; no SQL is emitted", fix: "decide them (see the plan) and plan again")
        }
        var out = """
            -- Gatehouse merge \(id): user \(oneLine(plan.source.rawValue)) (U2) into \(oneLine(plan.target.rawValue)) (U1).
            -- Planned \(plan.createdAt.iso8601) by \(oneLine(plan.actor)); emitted \(time.iso8601); fingerprint \(plan.fingerprint).
            -- One transaction. Every statement changes nothing unless its row is exactly as planned, and the
            -- checks at the end roll everything back (RAISE(ROLLBACK)) unless the result is exactly as planned.
            -- Run it on the copy the plan describes: sqlite3 COPY.sqlite < this.sql

            BEGIN IMMEDIATE;
            PRAGMA defer_foreign_keys = ON;
            CREATE TEMP TABLE gatehouse_merge_ready (ok INTEGER NOT NULL);
            CREATE TEMP TABLE gatehouse_merge_check (ok INTEGER);
            CREATE TEMP TRIGGER gatehouse_merge_check_abort BEFORE INSERT ON gatehouse_merge_check WHEN NEW.ok IS NOT 1
            BEGIN SELECT RAISE(ROLLBACK, 'gatehouse merge \(id): the rows are not as planned; nothing was changed'); END;

            -- The planned before-state.

            """
        // Every row the plan changes, and every row it relies on, exactly as planned; every count as planned.
        // (Checking only each statement's own row is not enough: a delete's ON DELETE CASCADE could sweep
        // away a row that differs from the plan, and the result would look as planned.)
        var before = (plan.unchanged + plan.steps.map(\.before)).map { "EXISTS (SELECT 1 FROM \(SQLDialect.quote($0.table)) WHERE \(match($0)))" }
        before += plan.counts.map { "(SELECT count(*) FROM \(SQLDialect.quote($0.table)) WHERE \(SQLDialect.quote($0.column)) = \(literal($0.value.sql))) = \($0.before)" }
        let chunks = stride(from: 0, to: max(before.count, 1), by: checksPerStatement).map { Array(before[$0..<min(before.count, $0 + checksPerStatement)]) }
        for chunk in chunks {
            out += "INSERT INTO gatehouse_merge_ready (ok) SELECT 1 WHERE " + (chunk.isEmpty ? "1" : chunk.joined(separator: "\n  AND ")) + ";\n"
        }
        out += "\n"
        out += "-- The merge, row by row.\n"
        let ready = "(SELECT count(*) FROM temp.gatehouse_merge_ready) = \(chunks.count)"
        var after: [String] = ["\(ready)"]
        for step in plan.steps {
            let table = SQLDialect.quote(step.table)
            out += "-- \(oneLine(step.reason))\n"
            switch step.operation {
            case .delete:
                out += "DELETE FROM \(table) WHERE \(match(step.before)) AND \(ready);\n"
                after.append("NOT EXISTS (SELECT 1 FROM \(table) WHERE \(keyMatch(step.key)))")
            case .update:
                let assignments = step.assignments(at: time).sorted { $0.key < $1.key }
                    .map { "\(SQLDialect.quote($0.key)) = \(literal($0.value.sql))" }.joined(separator: ", ")
                out += "UPDATE \(table) SET \(assignments) WHERE \(match(step.before)) AND \(ready);\n"
                if let image = step.after(at: time) { after.append("EXISTS (SELECT 1 FROM \(table) WHERE \(match(image)))") }
            }
        }
        after += plan.counts.map { "(SELECT count(*) FROM \(SQLDialect.quote($0.table)) WHERE \(SQLDialect.quote($0.column)) = \(literal($0.value.sql))) = \($0.after)" }
        out += "\n-- The result must be exactly as planned, or everything is rolled back.\n"
        for start in stride(from: 0, to: after.count, by: checksPerStatement) {
            let chunk = after[start..<min(after.count, start + checksPerStatement)]
            out += "INSERT INTO gatehouse_merge_check (ok) SELECT " + chunk.joined(separator: "\n  AND ") + ";\n"
        }
        out += """
            DROP TABLE temp.gatehouse_merge_check;
            DROP TABLE temp.gatehouse_merge_ready;
            COMMIT;

            """
        return out
    }

    /// Every column of the image, by value: `"a" IS 'x' AND "b" IS NULL …`.
    static func match(_ image: MergeRowImage) -> String {
        image.values.keys.sorted().map { "\(SQLDialect.quote($0)) IS \(literal(image[$0]))" }.joined(separator: " AND ")
    }

    static func keyMatch(_ key: MergeRowKey) -> String {
        zip(key.columns, key.values).map { ($0 == "rowid" ? "rowid" : SQLDialect.quote($0)) + " IS " + literal($1.sql) }.joined(separator: " AND ")
    }

    /// A SQL literal that reads back as the same stored value.
    static func literal(_ value: SQLValue) -> String {
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

    static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : Character($0) })
    }
}
