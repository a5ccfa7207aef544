import Gatehouse
import HTTPServer

/// `GET /api/status`: version, store path, schema and row counts.
///
/// Public for now: `gatehouse serve`'s end-to-end test and monitoring read it without a token. It
/// reveals row counts and the store path to anyone who can reach 127.0.0.1 (no other origin can read
/// it: no CORS, Host checked). To require a login, change `addPublic` to `add(..., role: .viewer)`.
enum StatusRoutes {
    static func register(on router: inout Router) {
        router.addPublic("GET", "/api/status") { context in
            try JSONBody.response(try context.stores.withStore { try StoreStatus.read($0) })
        }
    }
}
