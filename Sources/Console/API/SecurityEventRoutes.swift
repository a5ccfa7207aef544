import Gatehouse
import HTTPServer

/// One inbox of Apple's and Google's security events, over `SecurityEventInbox` and `GoogleSecurityInbox`:
///
/// - `GET /api/security/events?provider=apple|google&event=TYPE&since=ISO&limit=N` → the events, newest first (viewer)
/// - `GET /api/security/refusals?provider=apple|google` → the refused tokens' counters, the latest first (viewer)
/// - `POST /api/security/events/google/:id/undo` {reason} → gives back what the event changed (admin, step-up)
///
/// Read-only otherwise: events arrive through their own receivers (`apple notifications serve`, `google risc serve`).
enum SecurityEventRoutes {
    struct UndoRequest: Decodable { let reason: String }

    /// The `provider` filter, when given.
    static func provider(_ ctx: RequestContext) throws -> SecurityEventInbox.Provider? {
        try ctx.query("provider").map { text -> SecurityEventInbox.Provider in
            guard let provider = SecurityEventInbox.Provider(rawValue: text) else {
                throw GatehouseError.invalid("provider must be apple or google, got \"\(OperatorText.visible(String(text.prefix(20))))\"")
            }
            return provider
        }
    }

    static func register(on router: inout Router) {
        router.add("GET", "/api/security/refusals", role: .viewer) { ctx in
            let provider = try Self.provider(ctx)
            return try JSONBody.response(try ctx.stores.withStore { try SecurityEventInbox.refusals(store: $0, provider: provider) })
        }
        router.add("GET", "/api/security/events", role: .viewer) { ctx in
            let provider = try Self.provider(ctx)
            let since = try ctx.query("since").map { text -> Timestamp in
                guard let time = Timestamp(iso8601: text) else { throw GatehouseError.invalid("since must be an ISO-8601 time, e.g. 2026-12-01") }
                return time
            }
            let event = try ctx.query("event").flatMap { text -> String? in
                guard !text.isEmpty else { return nil }
                guard text.count <= 80, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
                    throw GatehouseError.invalid("event must be an event type such as sessions-revoked or consent-revoked")
                }
                return text
            }
            let limit = ctx.query("limit").flatMap(Int.init) ?? 200
            return try JSONBody.response(try ctx.stores.withStore {
                try SecurityEventInbox.list(store: $0, provider: provider, event: event, since: since, limit: limit)
            })
        }
        router.add("POST", "/api/security/events/google/:id/undo", role: .admin, factor: .stepUp) { ctx in
            guard let id = ctx.parameters["id"].flatMap(Int64.init), id > 0 else { throw GatehouseError.invalid("the event id is a positive number") }
            let body = try ctx.body(UndoRequest.self)
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore { store in
                try GoogleSecurityInbox(store: store, keys: GoogleRISCKeys()).undo(id: id, reason: body.reason, actor: actor, now: ctx.now)
            })
        }
    }
}
