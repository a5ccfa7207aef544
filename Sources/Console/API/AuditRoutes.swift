import Gatehouse
import HTTPServer

/// The audit log:
///
/// - `GET /api/audit?since&action&actor&subject&limit` → entries, newest first (viewer). `since` is
///   ISO-8601 or a duration (`24h`); `action` is exact or a prefix ending in `*` (`policy.*`).
/// - `GET /api/audit/verify` → whether the hash chain is intact (viewer)
enum AuditRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/audit", role: .viewer) { ctx in
            let query = AuditLog.Query(since: try ctx.timeQuery("since"), action: try ctx.textQuery("action"), actor: try ctx.textQuery("actor"),
                                       subject: try ctx.textQuery("subject"), limit: try ctx.integerQuery("limit", default: 50, range: 1...1000))
            return try JSONBody.response(try ctx.stores.withStore { try $0.audit.entries($0.db, query) })
        }
        router.add("GET", "/api/audit/verify", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { try $0.audit.verify($0.db) })
        }
    }
}
