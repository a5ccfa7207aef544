import Storage

/// The store itself: the engine's own consistency check (`StoreEngine.startConsistencyCheck`: SQLite's swept
/// `quick_check`, amcheck's on Postgres), the schema, the search path where the engine has one, and the audit chain.
///
/// The consistency check is the one whole-store scan of a run: it runs on a second connection (the other
/// core) while the other providers' checks run on the store's own connection.
public struct StoreHealthChecks: HealthCheckProvider {
    /// The metric an engine's consistency check records each unit it checked under (when, as a Unix time), so that the
    /// next run goes on from the unit checked longest ago.
    package static let consistencyCheckedMetric = "gatehouse_store_integrity_checked_timestamp_seconds"
    public let group = "store"
    public init() {}

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        try start(store, context)()
    }

    public func start(_ store: Store, _ context: HealthContext) -> () throws -> [HealthCheck] {
        // The engine's consistency check starts first, on its second connection; the others run here meanwhile.
        let consistency = store.engine.startConsistencyCheck(store, context)
        let others = Result { [schema(store)] + (store.engine.hasSearchPath ? [try searchPath(store)] : []) + [try auditChain(store)] }
        return { [try consistency()] + (try others.get()) }
    }

    func schema(_ store: Store) -> HealthCheck {
        // Opening the store already refused pending or edited migrations and missing Better Auth columns.
        HealthCheck(id: "store.schema", status: .ok, summary: "migrations current; \(store.schema.shape)")
    }

    /// Objects another role made where a search path would find them before Gatehouse's own (a schema named after
    /// Gatehouse's role, a second `gatehouse_admins`): Gatehouse pins its search path past them, but whoever made
    /// them meant Gatehouse to read them, so they are reported. Warning for a stray copy, critical for the role-named
    /// schema of another owner (the shape of the attack).
    func searchPath(_ store: Store) throws -> HealthCheck {
        let shadows = try store.db.schemaShadows(prefix: "gatehouse_")
        guard let first = shadows.first else {
            return HealthCheck(id: "store.search_path", status: .ok, summary: "Gatehouse's tables are found in one schema only; no schema another role owns is named after Gatehouse's role")
        }
        return HealthCheck(id: "store.search_path", status: shadows.contains { $0.table == nil } ? .critical : .warning,
                           summary: "\(first)" + (shadows.count > 1 ? " (and \(shadows.count - 1) more)" : ""),
                           action: "find out who created it and why; drop it, and revoke CREATE on the database from roles that do not need it")
    }

    func auditChain(_ store: Store) throws -> HealthCheck {
        let result = try store.audit.verify(store.db)
        guard result.isIntact else {
            return HealthCheck(id: "store.audit_chain", status: .critical,
                               summary: "audit chain broken: \(result.problems.first ?? "?")",
                               action: "treat as tampering: preserve the store, run \(command: .auditVerify) and investigate who changed it")
        }
        return HealthCheck(id: "store.audit_chain", status: .ok, summary: "audit chain intact (\(result.entries) entries)")
    }
}
