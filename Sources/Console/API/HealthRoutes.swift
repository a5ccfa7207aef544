import Gatehouse
import HTTPServer

/// The secret-health checks, over `HealthRunner`:
///
/// - `GET /api/health` → every check run now, with the default thresholds; the run is not recorded
///   (recording is the timer's job, so the stopped-timer check stays honest) (viewer); 503 `store_replaced`
///   when the store file was removed or replaced since the console opened it (see `StoreFileWatch`)
/// - `GET /api/health/history?limit` → recorded runs, newest first (viewer)
enum HealthRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/health", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { HealthRunner().run($0, HealthContext(now: ctx.now)) })
        }
        router.add("GET", "/api/health/history", role: .viewer) { ctx in
            let limit = try ctx.integerQuery("limit", default: 50, range: 1...1000)
            return try JSONBody.response(try ctx.stores.withStore { try HealthRunner.history($0, limit: limit) })
        }
    }
}
