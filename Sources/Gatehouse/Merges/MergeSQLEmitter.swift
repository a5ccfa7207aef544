import Foundation
import JOSE
import Storage

/// A plan as one SQL script for a remote copy of the store, in the SQL of the engine the plan was made on (each
/// engine writes its own, `StoreEngine.mergeScript`, from the parts here): SQLite's for a SQLite store
/// (`sqlite3 copy.sqlite < merge.sql`), Postgres's for a Postgres store (`psql -v ON_ERROR_STOP=1 -f merge.sql URI`).
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
    package static let checksPerStatement = 100

    /// The script for `plan` in the SQL of `store`'s engine (`StoreEngine.mergeScript`), with date columns the plan
    /// touches set to `time`.
    public static func script(for plan: MergePlan, at time: Timestamp, on store: Store) throws -> String {
        guard plan.id != nil else {
            throw GatehouseError.conflict("the plan has undecided conflicts; no SQL is emitted", fix: "decide them (see the plan) and plan again")
        }
        return try store.engine.mergeScript(plan, at: time)
    }

    /// How one engine's SQL spells a value and a NULL-safe comparison.
    package struct Flavor: Sendable {
        let literal: @Sendable (SQLValue) -> String
        /// The NULL-safe equality: NULL matches NULL (`IS`, `IS NOT DISTINCT FROM`).
        let same: String

        package init(literal: @escaping @Sendable (SQLValue) -> String, same: String) {
            self.literal = literal
            self.same = same
        }

        /// Every column of the image, by value: `"a" IS 'x' AND "b" IS NULL …`.
        func match(_ image: MergeRowImage) -> String {
            image.values.keys.sorted().map { "\(SQL.quote($0)) \(same) \(literal(image[$0]))" }.joined(separator: " AND ")
        }

        func keyMatch(_ key: MergeRowKey) -> String {
            zip(key.columns, key.values).map { ($0 == "rowid" ? "rowid" : SQL.quote($0)) + " \(same) " + literal($1.sql) }.joined(separator: " AND ")
        }

        func count(_ count: MergeCount, is expected: Int) -> String {
            let condition = count.matches.map { "\(SQL.quote($0.column)) = \(literal($0.value.sql))" }.joined(separator: " AND ")
            return "(SELECT count(*) FROM \(SQL.quote(count.table)) WHERE \(condition)) = \(expected)"
        }
    }

    /// One change of the plan: its reason, its statement (no `;`, ending in its `WHERE` row match), and the
    /// condition that holds once it ran.
    package struct Change {
        package let reason: String
        package let statement: String
        package let check: String?
    }

    /// The checks before (every row the plan changes or relies on exactly as planned, every count as planned), the
    /// changes, and the checks after (every count as planned; each change's own check is in its `Change`).
    /// Checking only each statement's own row is not enough: a delete's ON DELETE CASCADE could sweep away a row
    /// that differs from the plan, and the result would look as planned.
    package static func parts(of plan: MergePlan, at time: Timestamp, _ flavor: Flavor) -> (before: [String], changes: [Change], after: [String]) {
        var before = (plan.unchanged + plan.steps.map(\.before)).map { "EXISTS (SELECT 1 FROM \(SQL.quote($0.table)) WHERE \(flavor.match($0)))" }
        before += plan.counts.map { flavor.count($0, is: $0.before) }
        let changes = plan.steps.map { step -> Change in
            let table = SQL.quote(step.table)
            switch step.operation {
            case .delete:
                return Change(reason: step.reason, statement: "DELETE FROM \(table) WHERE \(flavor.match(step.before))",
                              check: "NOT EXISTS (SELECT 1 FROM \(table) WHERE \(flavor.keyMatch(step.key)))")
            case .update:
                let assignments = step.assignments(at: time).sorted { $0.key < $1.key }
                    .map { "\(SQL.quote($0.key)) = \(flavor.literal($0.value.sql))" }.joined(separator: ", ")
                return Change(reason: step.reason, statement: "UPDATE \(table) SET \(assignments) WHERE \(flavor.match(step.before))",
                              check: step.after(at: time).map { "EXISTS (SELECT 1 FROM \(table) WHERE \(flavor.match($0)))" })
            }
        }
        return (before, changes, plan.counts.map { flavor.count($0, is: $0.after) })
    }

    package static func chunked(_ checks: [String]) -> [[String]] {
        stride(from: 0, to: checks.count, by: checksPerStatement).map { Array(checks[$0..<min(checks.count, $0 + checksPerStatement)]) }
    }

    package static func header(_ plan: MergePlan, _ id: String, at time: Timestamp, rollback: String, run: String) -> String {
        """
        -- Gatehouse merge \(id): user \(oneLine(plan.source.rawValue)) (U2) into \(oneLine(plan.target.rawValue)) (U1).
        -- Planned \(plan.createdAt.iso8601) by \(oneLine(plan.actor)); emitted \(time.iso8601); fingerprint \(plan.fingerprint).
        -- One transaction. Every statement changes nothing unless its row is exactly as planned, and the
        -- checks at the end roll everything back (\(rollback)) unless the result is exactly as planned.
        -- Run it on the copy the plan describes: \(run)

        """
    }

    package static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : Character($0) })
    }
}
