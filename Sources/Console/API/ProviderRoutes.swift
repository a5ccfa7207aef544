import Gatehouse
import HTTPServer

/// `GET /api/providers` → the Apple and Google provider configuration, the ID-token audiences Better
/// Auth accepts under it, and its warnings (viewer), from `ProviderConfiguration.report()`.
enum ProviderRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/providers", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { try ProviderConfiguration(store: $0).report() })
        }
    }
}
