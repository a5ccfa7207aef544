import Storage

/// Reads merge records, once merges exist. The merge feature owns `gatehouse_merges`; until it lands
/// the table is absent and account inspection reports "no merge history" rather than creating it.
///
/// Only identifying columns are read (ids, users, times, actor, ticket): a merge record also holds the
/// rows needed to undo it, which may include token values that must never be printed.
enum MergeLedger {
    static let table = "gatehouse_merges"

    /// Columns naming a user in a merge record.
    static func userColumns(_ db: Database) throws -> [String]? {
        guard try db.tableExists(table) else { return nil }
        let names = try db.columns(of: table).map(\.name)
        let exact: Set<String> = ["source", "target", "from_id", "into_id", "source_id", "target_id", "survivor_id", "absorbed_id"]
        return names.filter { exact.contains($0.lowercased()) || $0.lowercased().contains("user") && !isBulky($0) }
    }

    /// Columns worth showing: identifiers, times and who/why.
    static func summaryColumns(_ db: Database) throws -> [String] {
        try db.columns(of: table).map(\.name).filter { name in
            let lower = name.lowercased()
            if isBulky(lower) { return false }
            return lower == "id" || lower.hasSuffix("_id") || lower.hasSuffix("id") || lower.hasSuffix("_at") || lower.contains("user")
                || ["actor", "ticket", "reason", "status", "state", "keep_email", "source", "target"].contains(lower)
        }
    }

    private static func isBulky(_ name: String) -> Bool {
        let lower = name.lowercased()
        return ["undo", "data", "rows", "snapshot", "json", "plan", "before", "after", "token", "secret"].contains { lower.contains($0) }
            && !lower.hasSuffix("_id") && !lower.hasSuffix("_at")
    }

    /// The user's merge records, or `available: false` when merges do not exist yet.
    static func history(_ db: Database, user: BetterAuthUserID) throws -> MergeHistory {
        guard let userColumns = try userColumns(db), !userColumns.isEmpty else {
            return MergeHistory(available: try db.tableExists(table), records: [])
        }
        let shown = try summaryColumns(db)
        let condition = userColumns.map { "\(Database.quote($0)) = ?" }.joined(separator: " OR ")
        let select = shown.isEmpty ? "rowid" : shown.map(Database.quote).joined(separator: ", ")
        let rows = try db.rows("SELECT \(select) FROM \(Database.quote(table)) WHERE \(condition) ORDER BY rowid LIMIT 100",
                               Array(repeating: user.rawValue, count: userColumns.count))
        return MergeHistory(available: true, records: rows.map { row in
            var fields: [String: String] = [:]
            for (name, value) in row.pairs {
                guard let text = value.string else { continue }
                fields[name] = text.count > 200 ? String(text.prefix(200)) + "…" : text
            }
            return MergeRecordSummary(fields: fields)
        })
    }

    /// Every user id named in a merge record (empty when merges do not exist yet).
    static func mergedUserIDs(_ db: Database) throws -> Set<String> {
        guard let columns = try userColumns(db) else { return [] }
        var ids = Set<String>()
        for column in columns {
            try db.forEach("SELECT DISTINCT \(Database.quote(column)) FROM \(Database.quote(table))") { row in
                if let id = row[0].string { ids.insert(id) }
            }
        }
        return ids
    }
}
