import Storage

/// Reads the merge records (`gatehouse_merges`, owned by the merge feature) that account inspection shows.
///
/// Only identifying columns are read (ids, users, times, actor, ticket, reason): a merge record also holds
/// the rows needed to undo it, which include token values that must never be printed.
enum MergeLedger {
    static let table = "gatehouse_merges"

    /// The summary columns, in the order they are shown.
    static let historySQL = """
        SELECT id, plan_id, source_user_id, target_user_id, status, ticket, actor, planned_at, applied_at, undone_at, undone_by, undo_reason
        FROM gatehouse_merges WHERE source_user_id = ? OR target_user_id = ? ORDER BY id LIMIT 100
        """

    /// The user's merge records, as source or target.
    static func history(_ db: SQLDatabase, user: BetterAuthUserID) throws -> MergeHistory {
        history(try db.rows(historySQL, [user.rawValue, user.rawValue]))
    }

    /// The records `historySQL` read.
    static func history(_ rows: [Row]) -> MergeHistory {
        MergeHistory(available: true, records: rows.map { row in
            var fields: [String: String] = [:]
            for (name, value) in row.pairs {
                guard let text = value.string else { continue }
                fields[name] = text.count > 200 ? String(text.prefix(200)) + "…" : text
            }
            return MergeRecordSummary(fields: fields)
        })
    }

    /// Every user id named in a merge that is still applied (an undone merge split them again).
    static func mergedUserIDs(_ db: SQLDatabase) throws -> Set<String> {
        var ids = Set<String>()
        try db.forEach("SELECT source_user_id, target_user_id FROM gatehouse_merges WHERE status = 'applied'") { row in
            if let source = row[0].string { ids.insert(source) }
            if let target = row[1].string { ids.insert(target) }
        }
        return ids
    }
}
