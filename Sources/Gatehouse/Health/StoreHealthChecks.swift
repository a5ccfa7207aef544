import Storage

/// The store itself: SQLite's own consistency check, the schema, and the audit chain.
public struct StoreHealthChecks: HealthCheckProvider {
    public let group = "store"
    public init() {}

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        [try integrity(store, deep: context.deep), schema(store), try auditChain(store)]
    }

    func integrity(_ store: Store, deep: Bool) throws -> HealthCheck {
        let pragma = deep ? "integrity_check" : "quick_check"
        let problems = try Store.withStoreErrors(store.path) {
            try store.db.rows("PRAGMA \(pragma)(20)").compactMap { $0[0].string }.filter { $0 != "ok" }
        }
        guard problems.isEmpty else {
            return HealthCheck(id: "store.integrity", status: .critical,
                               summary: "PRAGMA \(pragma) found \(problems.count) problem(s); first: \(problems[0].prefix(200))",
                               action: "stop writers, copy the store aside, restore from the last good backup")
        }
        return HealthCheck(id: "store.integrity", status: .ok, summary: "PRAGMA \(pragma): ok")
    }

    func schema(_ store: Store) -> HealthCheck {
        // Opening the store already refused pending or edited migrations and missing Better Auth columns.
        HealthCheck(id: "store.schema", status: .ok, summary: "migrations current; \(store.schema.shape)")
    }

    func auditChain(_ store: Store) throws -> HealthCheck {
        let result = try Store.withStoreErrors(store.path) { try store.audit.verify(store.db) }
        guard result.isIntact else {
            return HealthCheck(id: "store.audit_chain", status: .critical,
                               summary: "audit chain broken: \(result.problems.first ?? "?")",
                               action: "treat as tampering: preserve the store, run `gatehouse audit verify` and investigate who changed it")
        }
        return HealthCheck(id: "store.audit_chain", status: .ok, summary: "audit chain intact (\(result.entries) entries)")
    }
}
