import Gatehouse
import HTTPServer

/// The secret-health checks, over `HealthRunner`:
///
/// - `GET /api/health` → every check run now, with the default thresholds; the run is not recorded
///   (recording is the timer's job, so the stopped-timer check stays honest) (viewer); 503 `store_replaced`
///   when the store file was removed or replaced since the console opened it (see `StoreFileWatch`)
/// - `GET /api/health/history?limit` → recorded runs, newest first (viewer)
/// - `GET /api/health/deadlines?days&check` → {days, since, series}: each deadline the checks watch (days left for the
///   Apple client secret, the membership, the transfer window; the key's age), one point per recorded run over the
///   last `days` (1 to 366, default 30), with its warning and critical lines (viewer)
enum HealthRoutes {
    /// The answer of `GET /api/health/deadlines`.
    struct Deadlines: Encodable {
        let days: Int
        let since: Timestamp
        let series: [HealthGaugeSeries]
    }

    static func register(on router: inout Router) {
        router.add("GET", "/api/health", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { HealthRunner().run($0, HealthContext(now: ctx.now)) })
        }
        router.add("GET", "/api/health/history", role: .viewer) { ctx in
            let limit = try ctx.integerQuery("limit", default: 50, range: 1...1000)
            return try JSONBody.response(try ctx.stores.withStore { try HealthRunner.history($0, limit: limit) })
        }
        router.add("GET", "/api/health/deadlines", role: .viewer) { ctx in
            let days = try ctx.integerQuery("days", default: 30, range: 1...366)
            let check = try ctx.textQuery("check", maxLength: 200)
            let since = ctx.now.adding(seconds: -Int64(days) * 86_400)
            let series = try ctx.stores.withStore { try HealthGaugeHistory.series($0, since: since, check: check) }
            return try JSONBody.response(Deadlines(days: days, since: since, series: series))
        }
    }
}
