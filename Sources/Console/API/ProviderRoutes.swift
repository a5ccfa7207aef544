import Gatehouse
import HTTPServer

/// The Apple and Google provider configuration, over `ProviderConfiguration`:
///
/// - `GET /api/providers` → the configuration, the ID-token audiences Better Auth accepts under it, and its
///   warnings (viewer), from `ProviderConfiguration.report()`
/// - `PUT /api/providers/apple` {teamId?, servicesId?, bundleId?, audience?: [id]} → the new report (admin, step-up):
///   the fields given change, the others keep their values; "" clears the Services ID or bundle id, [] the audience
/// - `PUT /api/providers/google` {clientIds: {ios|desktop|web: id}} → the new report (admin, step-up); "" removes a
///   platform's id
///
/// Validated as `providers set` validates them, and audited (`providers.set`).
enum ProviderRoutes {
    struct AppleRequest: Decodable {
        let teamId: String?
        let servicesId: String?
        let bundleId: String?
        let audience: [String]?
    }

    struct GoogleRequest: Decodable {
        let clientIds: [String: String]
    }

    static func register(on router: inout Router) {
        router.add("GET", "/api/providers", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { try ProviderConfiguration(store: $0).report() })
        }
        router.add("PUT", "/api/providers/apple", role: .admin, factor: .stepUp) { ctx in
            let body = try ctx.body(AppleRequest.self)
            let actor = try ctx.actor
            guard (body.audience?.count ?? 0) <= 32 else { throw GatehouseError.invalid("audience lists at most 32 client ids") }
            let change = AppleProviderChange(teamID: body.teamId.flatMap { $0.isEmpty ? nil : $0 }, servicesID: body.servicesId, bundleID: body.bundleId,
                                             audience: body.audience)
            return try JSONBody.response(try ctx.stores.withStore { try ProviderConfiguration(store: $0).setApple(change, actor: actor, now: ctx.now) })
        }
        router.add("PUT", "/api/providers/google", role: .admin, factor: .stepUp) { ctx in
            let body = try ctx.body(GoogleRequest.self)
            let actor = try ctx.actor
            var ids: [GoogleProviderSettings.Platform: String] = [:]
            for (name, id) in body.clientIds {
                guard let platform = GoogleProviderSettings.Platform(rawValue: name) else {
                    throw GatehouseError.invalid("clientIds: unknown platform \"\(OperatorText.visible(String(name.prefix(20))))\"",
                                                 fix: "platforms: \(GoogleProviderSettings.Platform.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                ids[platform] = id
            }
            return try JSONBody.response(try ctx.stores.withStore { try ProviderConfiguration(store: $0).setGoogle(ids, actor: actor, now: ctx.now) })
        }
    }
}
