import Gatehouse
import HTTPServer

/// `GET /api/status`: version, store path, schema and row counts, for signed-in admins (it names the
/// store's path and the size of the user base, which no anonymous local process needs to know).
enum StatusRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/status", role: .viewer) { context in
            // Estimates on a big store (`StoreStatus.countedBelow`), as `gatehouse status` gives them: a page view never counts
            // ten million rows.
            try JSONBody.response(try context.stores.withStore { try StoreStatus.read($0, exact: false) })
        }
    }
}
