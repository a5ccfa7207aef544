import Storage

/// Applied merges as `merge list` and `merge show` present them: who, when, which ticket, which rows,
/// never the rows' values (they may hold tokens and password hashes).
public struct MergeRecords {
    /// The store.
    public let store: Store

    public init(store: Store) { self.store = store }

    /// Row counts per group of a merge.
    public struct Summary: Sendable, Codable, Equatable {
        public let updated: [String: Int]
        public let deleted: [String: Int]

        init(steps: [MergeStep]) {
            var updated: [String: Int] = [:], deleted: [String: Int] = [:]
            for step in steps {
                if step.operation == .update { updated[step.group, default: 0] += 1 } else { deleted[step.group, default: 0] += 1 }
            }
            self.updated = updated
            self.deleted = deleted
        }
    }

    /// One applied (or undone) merge.
    public struct Record: Sendable, Codable {
        public let id: Int64
        public let planID: String
        public let source: String
        public let target: String
        public let ticket: String
        public let actor: String
        public let status: String
        public let plannedAt: String
        public let appliedAt: String
        public let undoneAt: String?
        public let undoneBy: String?
        public let undoReason: String?
        public let summary: Summary
        /// With `show`: every row touched, as `operation table key (columns)`; no values.
        public let rows: [String]?
    }

    /// Merges, newest first.
    public func list(limit: Int = 100) throws -> [Record] {
        try store.db.rows("SELECT * FROM gatehouse_merges ORDER BY id DESC LIMIT ?", [max(0, limit)]).map { try record($0, rows: false) }
    }

    /// One merge by id.
    public func show(_ id: String) throws -> Record {
        guard let number = Int64(id), let row = try store.db.row("SELECT * FROM gatehouse_merges WHERE id = ?", [number]) else {
            let shown = id.count > 40 ? String(id.prefix(40)) + "…" : id
            throw GatehouseError.notFound("no merge \"\(shown)\"", fix: "list merges with \(command: .mergeList)")
        }
        return try record(row, rows: true)
    }

    /// Who a merge joined, by name and email; no other value of a row.
    public struct People: Sendable, Codable, Equatable {
        public let sourceName: String?
        public let sourceEmail: String?
        public let targetName: String?
        public let targetEmail: String?
    }

    /// Who merge `id` joined: U2's name and email from the user row it deleted, U1's from its user row before the
    /// merge changed it, or as that row is now when the merge left it alone (nil when that user is gone).
    public func people(of id: Int64) throws -> People {
        guard let row = try store.db.row("SELECT id, target_user_id, undo_data FROM gatehouse_merges WHERE id = ?", [id]) else {
            throw GatehouseError.notFound("no merge \"\(id)\"", fix: "list merges with \(command: .mergeList)")
        }
        let user = store.schema.user
        let (nameColumn, emailColumn) = (user.column(.name), user.column(.email))
        let userSteps = try Self.undoData(row).steps.map(\.step).filter { $0.table == "user" }
        let source = userSteps.first { $0.operation == .delete }?.before
        if let target = userSteps.first(where: { $0.operation == .update })?.before {
            return People(sourceName: source?[nameColumn].string, sourceEmail: source?[emailColumn].string,
                          targetName: target[nameColumn].string, targetEmail: target[emailColumn].string)
        }
        let targetID = try row.string("target_user_id")
        let now = try UserDirectory(store: store).search(targetID, by: .id, limit: 1).users.first { $0.id.rawValue == targetID }
        return People(sourceName: source?[nameColumn].string, sourceEmail: source?[emailColumn].string,
                      targetName: now?.name, targetEmail: now?.email)
    }

    /// The stored undo data of a merge.
    static func undoData(_ row: Row) throws -> MergeUndoData {
        try MergeJSON.decode(MergeUndoData.self, try row.string("undo_data"), what: "undo data of merge \(row["id"].int64 ?? 0)")
    }

    private func record(_ row: Row, rows withRows: Bool) throws -> Record {
        let summary = try MergeJSON.decode(Summary.self, row["summary_json"].string ?? "{}", what: "merge summary")
        let rows = withRows ? try Self.undoData(row).steps.map { entry in
            let step = entry.step
            return "\(step.operation.rawValue) \(step.table) \(step.key)" + (step.operation == .update ? " (\(step.changedColumns.joined(separator: ", ")))" : "")
        } : nil
        return Record(id: row["id"].int64 ?? 0, planID: try row.string("plan_id"), source: try row.string("source_user_id"),
                      target: try row.string("target_user_id"), ticket: try row.string("ticket"), actor: try row.string("actor"),
                      status: try row.string("status"), plannedAt: try row.string("planned_at"), appliedAt: try row.string("applied_at"),
                      undoneAt: row.optionalString("undone_at"), undoneBy: row.optionalString("undone_by"),
                      undoReason: row.optionalString("undo_reason"), summary: summary, rows: rows)
    }
}
