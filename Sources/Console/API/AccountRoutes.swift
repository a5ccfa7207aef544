import Gatehouse
import HTTPServer

/// `GET /api/accounts/check` → the integrity findings of users, accounts, sessions and sync rows,
/// with counts and samples (viewer), from `IntegrityChecker`.
enum AccountRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/accounts/check", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { try IntegrityChecker(store: $0).run(now: ctx.now) })
        }
    }
}
