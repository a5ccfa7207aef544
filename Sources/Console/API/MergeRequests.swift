import Gatehouse

/// `POST /api/merges/plan`: {from, into, keepEmail?, keepSubscription?, keepPassword?, sameProvider?, carryRoles?}.
///
/// `from` is U2 (merged away) and `into` is U1 (kept), each a Better Auth user id, an exact email or a sub
/// `better_auth|<id>`. A decision left out (or empty) is undecided; the planner says which ones it needs.
struct MergePlanRequest: Decodable, Sendable {
    let from: String
    let into: String
    let keepEmail: String?
    let keepSubscription: String?
    let keepPassword: String?
    let sameProvider: String?
    let carryRoles: Bool?

    /// The decisions, each checked against the values `MergeDecisions` knows.
    func decisions() throws -> MergeDecisions {
        MergeDecisions(keepEmail: try APIError.choice(keepEmail, field: "\"keepEmail\"", as: MergeDecisions.Side.self),
                       keepSubscription: try APIError.choice(keepSubscription, field: "\"keepSubscription\"", as: MergeDecisions.Side.self),
                       keepPassword: try APIError.choice(keepPassword, field: "\"keepPassword\"", as: MergeDecisions.Side.self),
                       sameProvider: try APIError.choice(sameProvider, field: "\"sameProvider\"", as: MergeDecisions.SameProvider.self),
                       carryRoles: carryRoles ?? false)
    }

}

/// `POST /api/merges/:planId/apply`: {ticket}.
struct MergeApplyRequest: Decodable, Sendable {
    let ticket: String
}

/// `POST /api/merges/:id/undo`: {reason}.
struct MergeUndoRequest: Decodable, Sendable {
    let reason: String
}

/// What `POST /api/merges/plan` answers: the plan exactly as `gatehouse merge plan --json` prints it
/// (no token value, no password hash), and for each kind of conflict in it the request field that
/// decides it and the values that field takes, so the page can offer them as choices.
struct MergePlanResponse: Encodable, Sendable {
    /// A request field that decides a kind of conflict.
    struct Decision: Encodable, Sendable {
        /// The conflict's kind: `email`, `subscription`, `password`, `provider`, `role`.
        let kind: String
        /// The request field: `keepEmail`, `keepSubscription`, `keepPassword`, `sameProvider`, `carryRoles`.
        let field: String
        /// The values it takes (`target`, `source`; `both` too for `sameProvider`; `true`, `false` for `carryRoles`).
        let values: [String]
        /// The value this plan was made with, nil while undecided.
        let chosen: String?
    }

    let plan: MergePlanView
    let decisions: [Decision]

    /// The answer for a plan, with a decision entry for each kind of conflict it found.
    init(_ plan: MergePlan) {
        let view = MergePlanView(plan)
        var kinds: [MergeConflict.Kind] = []
        for conflict in view.conflicts where !kinds.contains(conflict.kind) { kinds.append(conflict.kind) }
        self.plan = view
        decisions = kinds.map { kind in
            Decision(kind: kind.rawValue, field: kind.field.rawValue, values: kind.field.values, chosen: kind.field.chosen(in: view.decisions))
        }
    }
}

/// A merge as `GET /api/merges` and `GET /api/merges/:id` answer it: the record as `gatehouse merge list --json` prints
/// it, with who it joined by name and email (`sourceName`, `sourceEmail`, `targetName`, `targetEmail`), so the console
/// names people rather than ids alone.
struct MergeRecordResponse: Encodable, Sendable {
    let record: MergeRecords.Record
    let people: MergeRecords.People

    init(_ record: MergeRecords.Record, in records: MergeRecords) throws {
        self.record = record
        people = try records.people(of: record.id)
    }

    func encode(to encoder: Encoder) throws {
        try record.encode(to: encoder)
        try people.encode(to: encoder)
    }
}
