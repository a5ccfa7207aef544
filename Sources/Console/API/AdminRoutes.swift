import Gatehouse
import HTTPServer

/// The console's admins, over `AdminDirectory` and `SecondFactors`, answering what `gatehouse admins … --json` prints:
///
/// - `GET /api/admins` → every admin: role, source, whether disabled, last login, factors (never a secret) (admin)
/// - `POST /api/admins/:username/disable` → the admin, disabled, their sessions ended (admin, step-up, approval `admins`)
/// - `POST /api/admins/:username/enable` → the admin, enabled (admin, step-up, approval `admins`)
/// - `POST /api/admins/:username/remove` → 204; their tokens and factors go too (admin, step-up, approval `admins`)
///
/// An admin cannot disable or remove themselves here (another admin, or the host, can); the last enabled admin with
/// the admin role cannot be disabled or removed at all. Adding an admin and setting a password stay on the host
/// (`gatehouse admins add|passwd`): a password made here would pass through a page and, with approvals, another admin.
enum AdminRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/admins", role: .admin) { ctx in
            try JSONBody.response(try ctx.stores.withStore { try SecondFactors(store: $0).listing() })
        }
        for (verb, change) in [("disable", Change.disable), ("enable", .enable), ("remove", .remove)] {
            router.add("POST", "/api/admins/:username/\(verb)", role: .admin, factor: .stepUp, approval: .admins) { ctx in
                let username = try target(ctx, refusingSelfFor: change == .enable ? nil : verb)
                let actor = try ctx.actor
                return try ctx.stores.withStore { store in
                    let admins = AdminDirectory(store: store)
                    switch change {
                    case .disable: return try JSONBody.response(try admins.disable(username, actor: actor, now: ctx.now))
                    case .enable: return try JSONBody.response(try admins.enable(username, actor: actor, now: ctx.now))
                    case .remove:
                        try admins.remove(username, actor: actor, now: ctx.now)
                        return HTTPResponse(status: 204)
                    }
                }
            }
        }
    }

    enum Change { case disable, enable, remove }

    /// The `:username` admin; refused for the signed-in admin themselves when `verb` says what they would do to
    /// themselves (locking oneself out from a page is never what was meant).
    static func target(_ ctx: RequestContext, refusingSelfFor verb: String?) throws -> AdminUsername {
        let text = ctx.parameters["username"] ?? ""
        guard AdminUsername.isValid(text), let username = try? AdminUsername(text) else {
            throw APIError.badRequest("\"\(AdminUsername.printable(text))\" is not an admin's username")
        }
        if let verb, let session = ctx.session, ctx.approved == nil, session.admin.username.lowercased() == username.rawValue.lowercased() {
            throw APIError(status: 409, code: "conflict", message: "you cannot \(verb) yourself from the console",
                           fix: "ask another admin to do it, or run it on the host")
        }
        if let verb, let approved = ctx.approved, approved.requestedBy.lowercased() == username.rawValue.lowercased() {
            throw APIError(status: 409, code: "conflict", message: "\(approved.requestedBy) cannot \(verb) themselves from the console")
        }
        return username
    }
}
