import Gatehouse
import HTTPServer

/// Every route of the JSON API. Each feature registers its routes from its own file
/// (`API/<Feature>Routes.swift`, an enum with `static func register(on:)`), and is listed here once.
/// Each route declares its minimum role (`viewer`, `support`, `admin`) or `addPublic`; see `Router`.
enum APIRoutes {
    static func register(on router: inout Router) {
        StatusRoutes.register(on: &router)
        AuthRoutes.register(on: &router)
        SSORoutes.register(on: &router)
        MfaRoutes.register(on: &router)
        WebAuthnRoutes.register(on: &router)
        PolicyRoutes.register(on: &router)
        AuditRoutes.register(on: &router)
        AppleRoutes.register(on: &router)
        AppleTransferRoutes.register(on: &router)
        SecurityEventRoutes.register(on: &router)
        ProviderRoutes.register(on: &router)
        UserRoutes.register(on: &router)
        AccountRoutes.register(on: &router)
        HealthRoutes.register(on: &router)
        MergeRoutes.register(on: &router)
        UserDeletionRoutes.register(on: &router)
        GateRoutes.register(on: &router)
        ApprovalRoutes.register(on: &router)
        AdminRoutes.register(on: &router)
    }
}
