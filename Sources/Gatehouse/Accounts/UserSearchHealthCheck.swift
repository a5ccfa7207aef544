import Storage

/// Whether name search goes through its index (`UserSearchIndex`): absent or stale (a user-table trigger gone,
/// so changes may have been missed) sends every name search back to the whole-table scan; many pending users
/// make each search read them all. Reads the schema and the pending count only.
public struct UserSearchHealthCheck: HealthCheckProvider {
    public let group = "search"
    /// Pending users beyond which the check warns (searches then skip the index: `NameSearch.maxPending`).
    public static var pendingWarning: Int { NameSearch.maxPending }
    public init() {}

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        let status = try UserSearchIndex.status(store.db, schema: store.schema)
        let sample = HealthSample(metric: "gatehouse_user_search_pending", value: Double(status.pending),
                                  help: "Users added, renamed or deleted since the name search index was last folded.")
        let id = "accounts.search_index", fix = "\(run: .accountsIndex)"
        switch status.state {
        case .current where status.pending > Self.pendingWarning:
            return [HealthCheck(id: id, status: .warning,
                                summary: "\(status.pending) users changed since the name search index was folded: name searches scan the user table",
                                action: fix, samples: [sample])]
        case .current:
            return [HealthCheck(id: id, status: .ok, summary: "name search is indexed (\(status.pending) recent change(s) read directly)", samples: [sample])]
        case .absent:
            return [HealthCheck(id: id, status: .warning, summary: "no name search index: name searches scan the user table", action: fix, samples: [sample])]
        case .stale:
            return [HealthCheck(id: id, status: .warning,
                                summary: "the name search index is out of date, so name searches scan the user table: \(status.reason ?? "a trigger is missing")",
                                action: fix + " (rebuilds it)", samples: [sample])]
        case .unsupported:
            return [HealthCheck(id: id, status: .ok, summary: "name searches scan the user table: \(status.reason ?? "this store cannot keep a name search index")", samples: [sample])]
        }
    }
}
