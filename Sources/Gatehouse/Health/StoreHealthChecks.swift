import Storage

/// The store itself: SQLite's own consistency check (amcheck's on Postgres, `PostgresIndexCheck`), the schema, and the
/// audit chain.
///
/// The consistency check is the one whole-store scan of a run: it runs on a second connection (the other
/// core) while the other providers' checks run on the store's own connection.
public struct StoreHealthChecks: HealthCheckProvider {
    public let group = "store"
    public init() {}

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        try start(store, context)()
    }

    public func start(_ store: Store, _ context: HealthContext) -> () throws -> [HealthCheck] {
        guard store.db.engine == .sqlite else {
            // quick_check reads SQLite's file format; on a server, amcheck checks Better Auth's indexes when the
            // database has it, on a second connection while the other checks run on this one.
            let check = PostgresIndexCheck(schema: store.schema), readOnly = store.db.isReadOnly
            let background = SecondConnection(store.location, snapshot: false) { db in try check.run(db) }
            let others = Result { [schema(store), try searchPath(store), try auditChain(store)] }
            return {
                let outcome: PostgresIndexCheck.Outcome
                do { outcome = try background.wait() } catch { outcome = try check.run(store.db) }
                return [PostgresIndexCheck.healthCheck(outcome, readOnly: readOnly)] + (try others.get())
            }
        }
        let sweep: IntegritySweep, tables: [String]
        do {
            var planned = IntegritySweep(budget: context.integrityBudget, previous: try IntegritySweep.previousVerdicts(store.db))
            planned.deep = context.deep
            (sweep, tables) = (planned, try store.db.tableNames())
        } catch {
            return { throw error }
        }
        let now = context.now
        // Each table's check is its own statement: no snapshot across them, and no transaction for damage
        // to fail the COMMIT of.
        let background = SecondConnection(store.location, snapshot: false) { db in try sweep.run(db, tables: tables, now: now) }
        let others = Result { [schema(store), try auditChain(store)] }
        return {
            let outcome: IntegritySweep.Outcome
            do {
                outcome = try background.wait()
            } catch {
                // No second connection (a read-only folder without the WAL index, say): check on this one.
                outcome = try sweep.run(store.db, tables: tables, now: now)
            }
            return [integrity(outcome, now: now)] + (try others.get())
        }
    }

    func integrity(_ outcome: IntegritySweep.Outcome, now: Timestamp) -> HealthCheck {
        let samples = outcome.verdicts.sorted { $0.key < $1.key }.map {
            HealthSample(metric: IntegritySweep.metric, labels: ["table": $0.key], value: Double($0.value),
                         help: "When PRAGMA quick_check last found the table and its indexes clean.")
        }
        guard outcome.problems.isEmpty else {
            return HealthCheck(id: "store.integrity", status: .critical,
                               summary: "PRAGMA \(outcome.pragma) found \(outcome.problems.count) problem(s); first: \(outcome.problems[0].prefix(200))",
                               action: "stop writers, copy the store aside, restore from the last good backup", samples: samples)
        }
        let count = outcome.tables.count
        if outcome.checked.count == count {
            let scope = outcome.pragma == "integrity_check" ? "the whole file" : "all \(count) tables and their indexes"
            return HealthCheck(id: "store.integrity", status: .ok, summary: "PRAGMA \(outcome.pragma): ok (\(scope))", samples: samples)
        }
        let unchecked = outcome.tables.filter { outcome.verdicts[$0] == nil }
        var summary = "PRAGMA quick_check: ok on \(outcome.checked.joined(separator: ", ")) (\(outcome.checked.count) of \(count) tables this run; "
        if unchecked.isEmpty, let oldest = outcome.verdicts.min(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
            summary += "the others were clean in earlier runs; the oldest verdict, \(oldest.key)'s, is \(Seconds(max(0, now.seconds - oldest.value))) old)"
        } else {
            summary += "\(unchecked.count) not checked yet: later recorded runs sweep them, \(field: .deep) checks all)"
        }
        return HealthCheck(id: "store.integrity", status: .ok, summary: summary, samples: samples)
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
