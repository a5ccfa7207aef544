import Gatehouse
import HTTPServer

/// Every route of the JSON API. Each feature registers its routes from its own file.
enum APIRoutes {
    static func register(on router: inout Router) {
        StatusRoutes.register(on: &router)
    }
}

/// `GET /api/status`: version, store path, schema and counts.
enum StatusRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/status") { context in
            try JSONBody.response(try context.stores.withStore { try StoreStatus.read($0) })
        }
    }
}
