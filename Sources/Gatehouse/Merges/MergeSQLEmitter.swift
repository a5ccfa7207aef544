import Foundation
import JOSE
import Storage

/// A plan as one SQL script for a remote copy of the store, in the SQL of the engine the plan was made on:
/// SQLite's for a SQLite store (a D1 database, say: `sqlite3 copy.sqlite < merge.sql`), Postgres's for a Postgres
/// store (`psql -v ON_ERROR_STOP=1 -f merge.sql URI`).
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
///
/// On Postgres the same checks are `DO` blocks that raise an exception: the transaction is then aborted, every
/// statement after it fails, and `COMMIT` rolls back. See `postgresScript`.
public enum MergeSQLEmitter {
    /// Checks per statement (an `AND` chain deepens SQLite's expression tree by one per term).
    static let checksPerStatement = 100

    /// The script for `plan` in `engine`'s SQL, with date columns the plan touches set to `time`.
    public static func script(for plan: MergePlan, at time: Timestamp, engine: SQLDialect.Engine = .sqlite) throws -> String {
        guard plan.id != nil else {
            throw GatehouseError.conflict("the plan has undecided conflicts; no SQL is emitted", fix: "decide them (see the plan) and plan again")
        }
        switch engine {
        case .sqlite: return try sqliteScript(for: plan, at: time)
        case .postgres: return try postgresScript(for: plan, at: time)
        case .d1: return try d1Script(for: plan, at: time)
        }
    }

    /// How one engine's SQL spells a value and a NULL-safe comparison.
    struct Flavor: Sendable {
        let literal: @Sendable (SQLValue) -> String
        /// `IS` in SQLite, `IS NOT DISTINCT FROM` in Postgres: NULL matches NULL.
        let same: String

        static let sqlite = Flavor(literal: MergeSQLEmitter.literal, same: "IS")
        static let postgres = Flavor(literal: MergeSQLEmitter.postgresLiteral, same: "IS NOT DISTINCT FROM")

        /// Every column of the image, by value: `"a" IS 'x' AND "b" IS NULL …`.
        func match(_ image: MergeRowImage) -> String {
            image.values.keys.sorted().map { "\(SQLDialect.quote($0)) \(same) \(literal(image[$0]))" }.joined(separator: " AND ")
        }

        func keyMatch(_ key: MergeRowKey) -> String {
            zip(key.columns, key.values).map { ($0 == "rowid" ? "rowid" : SQLDialect.quote($0)) + " \(same) " + literal($1.sql) }.joined(separator: " AND ")
        }

        func count(_ count: MergeCount, is expected: Int) -> String {
            let condition = count.matches.map { "\(SQLDialect.quote($0.column)) = \(literal($0.value.sql))" }.joined(separator: " AND ")
            return "(SELECT count(*) FROM \(SQLDialect.quote(count.table)) WHERE \(condition)) = \(expected)"
        }
    }

    /// One change of the plan: its reason, its statement (no `;`, ending in its `WHERE` row match), and the
    /// condition that holds once it ran.
    struct Change {
        let reason: String
        let statement: String
        let check: String?
    }

    /// The checks before (every row the plan changes or relies on exactly as planned, every count as planned), the
    /// changes, and the checks after (every count as planned; each change's own check is in its `Change`).
    /// Checking only each statement's own row is not enough: a delete's ON DELETE CASCADE could sweep away a row
    /// that differs from the plan, and the result would look as planned.
    static func parts(of plan: MergePlan, at time: Timestamp, _ flavor: Flavor) -> (before: [String], changes: [Change], after: [String]) {
        var before = (plan.unchanged + plan.steps.map(\.before)).map { "EXISTS (SELECT 1 FROM \(SQLDialect.quote($0.table)) WHERE \(flavor.match($0)))" }
        before += plan.counts.map { flavor.count($0, is: $0.before) }
        let changes = plan.steps.map { step -> Change in
            let table = SQLDialect.quote(step.table)
            switch step.operation {
            case .delete:
                return Change(reason: step.reason, statement: "DELETE FROM \(table) WHERE \(flavor.match(step.before))",
                              check: "NOT EXISTS (SELECT 1 FROM \(table) WHERE \(flavor.keyMatch(step.key)))")
            case .update:
                let assignments = step.assignments(at: time).sorted { $0.key < $1.key }
                    .map { "\(SQLDialect.quote($0.key)) = \(flavor.literal($0.value.sql))" }.joined(separator: ", ")
                return Change(reason: step.reason, statement: "UPDATE \(table) SET \(assignments) WHERE \(flavor.match(step.before))",
                              check: step.after(at: time).map { "EXISTS (SELECT 1 FROM \(table) WHERE \(flavor.match($0)))" })
            }
        }
        return (before, changes, plan.counts.map { flavor.count($0, is: $0.after) })
    }

    static func chunked(_ checks: [String]) -> [[String]] {
        stride(from: 0, to: checks.count, by: checksPerStatement).map { Array(checks[$0..<min(checks.count, $0 + checksPerStatement)]) }
    }

    static func header(_ plan: MergePlan, _ id: String, at time: Timestamp, rollback: String, run: String) -> String {
        """
        -- Gatehouse merge \(id): user \(oneLine(plan.source.rawValue)) (U2) into \(oneLine(plan.target.rawValue)) (U1).
        -- Planned \(plan.createdAt.iso8601) by \(oneLine(plan.actor)); emitted \(time.iso8601); fingerprint \(plan.fingerprint).
        -- One transaction. Every statement changes nothing unless its row is exactly as planned, and the
        -- checks at the end roll everything back (\(rollback)) unless the result is exactly as planned.
        -- Run it on the copy the plan describes: \(run)

        """
    }

    static func sqliteScript(for plan: MergePlan, at time: Timestamp) throws -> String {
        let id = plan.id ?? ""
        let (before, changes, counts) = parts(of: plan, at: time, .sqlite)
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

    /// The script for D1, which refuses `BEGIN` and temp triggers but runs a file as one batch, all or nothing
    /// (`wrangler d1 execute DB --remote --file merge.sql`): each check is a statement that fails — a JSON path error
    /// whose text says why — unless it holds, and the failure undoes the whole file.
    static func d1Script(for plan: MergePlan, at time: Timestamp) throws -> String {
        let id = plan.id ?? ""
        let (before, changes, counts) = parts(of: plan, at: time, .sqlite)
        let refusal = "gatehouse merge \(id): the rows are not as planned; nothing was changed"
        func guardStatement(_ chunk: [String]) -> String {
            "SELECT json_extract('{}', '\(refusal)' || (SELECT '' WHERE NOT (" + chunk.joined(separator: "\n  AND ") + ")));\n"
        }
        var out = header(plan, id, at: time, rollback: "a failing check undoes the whole file",
                         run: "wrangler d1 execute DATABASE --remote --file this.sql") + """

            PRAGMA defer_foreign_keys = ON;

            -- The planned before-state.

            """
        for chunk in chunked(before) { out += guardStatement(chunk) }
        out += "\n-- The merge, row by row.\n"
        for change in changes { out += "-- \(oneLine(change.reason))\n\(change.statement);\n" }
        out += "\n-- The result must be exactly as planned, or the whole file changes nothing.\n"
        for chunk in chunked(changes.compactMap(\.check) + counts) { out += guardStatement(chunk) }
        return out
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
