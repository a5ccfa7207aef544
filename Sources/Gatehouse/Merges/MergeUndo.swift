import Foundation
import Storage

/// Undoes an applied merge in one `BEGIN IMMEDIATE` transaction: every updated row gets its old values
/// back and every deleted row is inserted again exactly as it was (with its rowid when that is free),
/// in reverse order. It first checks that nothing touched the merged rows since: an updated row must
/// still be exactly as the merge left it, a deleted row's key must still be free. Otherwise it
/// refuses and names the rows that diverged.
///
///     try MergeUndo(store: store).undo(mergeID: "7", reason: "wrong person, SUP-1240", actor: actor)
public struct MergeUndo {
    /// The store.
    public let store: Store

    /// The longest reason accepted.
    public static let maxReasonLength = 2000
    /// How many diverged rows a refusal names.
    static let namedDivergences = 20

    public init(store: Store) { self.store = store }

    /// What an undo did.
    public struct Result: Sendable, Codable {
        public let mergeID: Int64
        public let source: String
        public let target: String
        public let undoneAt: Timestamp
        public let rowsRestored: Int
    }

    /// Undoes merge `mergeID`.
    public func undo(mergeID: String, reason: String, actor: Actor, now: Timestamp = .now()) throws -> Result {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else { throw GatehouseError.invalid("\(field: .reason) is empty", fix: "say why the merge is undone, e.g. \(field: .reason) \"wrong person, SUP-1240\"") }
        guard reason.count <= Self.maxReasonLength else {
            throw GatehouseError.invalid("\(field: .reason) is \(reason.count) characters; at most \(Self.maxReasonLength)")
        }
        _ = try OperatorText.check(reason, field: "\(field: .reason)", multiline: true)
        let db = store.db
        return try db.write {
            try db.execute(db.dialect.deferForeignKeys)
            guard let number = Int64(mergeID), let row = try db.row("SELECT * FROM gatehouse_merges WHERE id = ?", [number]) else {
                let shown = mergeID.count > 40 ? String(mergeID.prefix(40)) + "…" : mergeID
                throw GatehouseError.notFound("no merge \"\(shown)\"", fix: "list merges with \(command: .mergeList)")
            }
            if row["status"].string == "undone" {
                throw GatehouseError.conflict("merge \(number) was already undone at \(row["undone_at"].string ?? "?") by \(row["undone_by"].string ?? "?")")
            }
            let data = try MergeRecords.undoData(row)
            var writer = MergeStepWriter(db: db)
            var diverged: [String] = []
            for entry in data.steps {
                let step = entry.step
                switch step.operation {
                case .update:
                    let now = try writer.after(step)
                    guard let now else { diverged.append("\(step.table) \(step.key) was deleted since the merge"); continue }
                    if let after = entry.after, now != after {
                        diverged.append("\(step.table) \(step.key) changed since the merge (\(now.differences(from: after).joined(separator: ", ")))")
                    }
                case .delete:
                    let shape = try writer.shape(step.table)
                    if try shape.current(db, key: step.key) != nil {
                        diverged.append("\(step.table) \(step.key) exists again since the merge")
                    }
                }
            }
            if !diverged.isEmpty {
                let named = diverged.prefix(Self.namedDivergences).map { "  - \($0)" }.joined(separator: "\n")
                let more = diverged.count > Self.namedDivergences ? "\n  … and \(diverged.count - Self.namedDivergences) more" : ""
                throw GatehouseError.conflict("merge \(number) cannot be undone: \(diverged.count) row(s) it touched changed since:\n\(named)\(more)",
                                              fix: "restore those rows by hand (or from a backup) first; nothing was changed")
            }
            try writer.findFreeRowids(for: data.steps.map(\.step))
            for entry in data.steps.reversed() { try writer.reverse(entry.step) }
            try db.execute("UPDATE gatehouse_merges SET status = 'undone', undone_at = ?, undone_by = ?, undo_reason = ? WHERE id = ?",
                           [now.iso8601, actor.name, reason, number])
            let source = try row.string("source_user_id"), target = try row.string("target_user_id")
            try store.audit.append(db, actor: actor, action: "merge.undo", subject: String(number), details: [
                "reason": .string(reason), "plan_id": .string(row["plan_id"].string ?? ""), "ticket": .string(row["ticket"].string ?? ""),
                "source_user_id": .string(source), "target_user_id": .string(target), "rows_restored": .int(Int64(data.steps.count)),
            ], at: now)
            return Result(mergeID: number, source: source, target: target, undoneAt: now, rowsRestored: data.steps.count)
        }
    }
}
