import Gatehouse
import SQLiteEngine
import Storage

extension MergeSQLEmitter {
    /// The script for D1, which refuses `BEGIN` and temp triggers but runs a file as one batch, all or nothing
    /// (`wrangler d1 execute DB --remote --file merge.sql`): each check is a statement that fails — a JSON path error
    /// whose text says why — unless it holds, and the failure undoes the whole file.
    package static func d1Script(for plan: MergePlan, at time: Timestamp) throws -> String {
        let id = plan.id ?? ""
        let (before, changes, counts) = parts(of: plan, at: time, sqliteFlavor)
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
}
