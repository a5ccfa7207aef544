import Gatehouse
import HTTPServer

/// Finding users and reading one, over `UserDirectory` and `SplitIdentityFinder`:
///
/// - `GET /api/users?q&by&limit&cursor&sort&provider&flag&createdAfter&createdBefore` → one page of the matching
///   users, `{users, nextCursor, …}` with `nextCursor` null on the last page (viewer). `by` is `email` (any part of the
///   address), `name`, `id`, `sub` or `account`; without it the query's form decides. `sort` is `name`, `email`,
///   `created` or `lastSignIn`; `flag` (repeatable, or comma-separated) `splitIdentity`, `googleDisabled`,
///   `deletionPending` or `relay`. `%` and `_` are ordinary characters.
/// - `GET /api/users/duplicates?minScore&limit&window` → likely split identities, best first (support)
/// - `GET /api/users/:id/duplicates?minScore&limit` → {user, minScore, candidates}: that user's likely split-identity
///   twins, best first, scored as the duplicates page scores them (viewer)
/// - `GET /api/users/:id?sessions` → one user (id, email or sub): linked accounts, flags, sessions,
///   sync row, workspaces, subscriptions, roles, merge history — never a token or password value (viewer);
///   runs inline on the connection's thread, and its JSON is written by `UserDetailJSON`
enum UserRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/users", role: .viewer) { ctx in
            let query = ctx.query("q") ?? ""
            let kind = try kindQuery(ctx)
            let limit = try ctx.integerQuery("limit", default: 20, range: 1...UserDirectory.maxLimit)
            let sort = try ctx.choiceQuery("sort", as: UserSort.self)
            let cursor = try ctx.textQuery("cursor", maxLength: 2048)
            let filters = try filtersQuery(ctx)
            return try JSONBody.response(try ctx.stores.withStore {
                try UserDirectory(store: $0).search(query, by: kind, limit: limit, sort: sort, after: cursor, filters: filters)
            })
        }
        // Before `/api/users/:id`, which would otherwise take "duplicates" for a user reference.
        router.add("GET", "/api/users/duplicates", role: .support) { ctx in
            let minScore = try scoreQuery(ctx, "minScore", default: 0.7)
            let limit = try ctx.integerQuery("limit", default: 50, range: 1...10_000)
            let window = try ctx.integerQuery("window", default: 30, range: 1...3650)
            return try JSONBody.response(try ctx.stores.withStore {
                try SplitIdentityFinder(store: $0).find(minScore: minScore, limit: limit, windowDays: window)
            })
        }
        // One user's likely twins: indexed lookups for that user (name, mailbox, email forms), then the scan's scoring.
        router.add("GET", "/api/users/:id/duplicates", role: .viewer) { ctx in
            let minScore = try scoreQuery(ctx, "minScore", default: 0.7)
            let limit = try ctx.integerQuery("limit", default: 10, range: 1...50)
            return try JSONBody.response(try ctx.stores.withStore { store in
                let id = try UserDirectory(store: store).resolve(ctx.parameters["id"] ?? "")
                return UserTwins(user: id, minScore: minScore, candidates: try SplitIdentityFinder(store: store).twins(of: id, minScore: minScore, limit: limit))
            })
        }
        // Inline: a handful of primary-key and indexed lookups, at most 100 sessions.
        router.addInline("/api/users/:id", role: .viewer) { ctx in
            let reference = ctx.parameters["id"] ?? ""
            let sessions = try ctx.integerQuery("sessions", default: 5, range: 0...100)
            return UserDetailJSON.response(try ctx.read { try $0.userDetail(reference, now: ctx.now, latestSessions: sessions) })
        }
    }

    /// `?by=`, one of `UserQueryKind`'s names, or nil.
    static func kindQuery(_ ctx: RequestContext) throws -> UserQueryKind? {
        try ctx.choiceQuery("by", as: UserQueryKind.self)
    }

    /// `?provider`, `?flag` (repeatable, or comma-separated), `?createdAfter`, `?createdBefore`; 400 naming the item.
    static func filtersQuery(_ ctx: RequestContext) throws -> UserSearchFilters {
        var filters = UserSearchFilters()
        if let provider = try ctx.textQuery("provider", maxLength: 64) {
            do { filters.provider = try UserSearchFilters.provider(provider, what: "?provider") } catch let error as GatehouseError {
                throw APIError.badRequest(error.message, fix: error.fix)
            }
        }
        let flagTexts = ctx.request.queryItems().filter { $0.name == "flag" }.flatMap { $0.value.split(separator: ",").map(String.init) }
        guard flagTexts.count <= 8 else { throw APIError.badRequest("?flag is given more than 8 times") }
        for text in flagTexts {
            if let flag = try APIError.choice(text, field: "?flag", as: UserSearchFlag.self), !filters.flags.contains(flag) { filters.flags.append(flag) }
        }
        for (name, path) in [("createdAfter", \UserSearchFilters.createdAfter), ("createdBefore", \UserSearchFilters.createdBefore)] {
            guard let text = try ctx.textQuery(name, maxLength: 40) else { continue }
            do { filters[keyPath: path] = try UserSearchFilters.date(text, what: "?\(name)") } catch let error as GatehouseError {
                throw APIError.badRequest(error.message, fix: error.fix)
            }
        }
        return filters
    }

    /// A score from 0 to 1, or 400 naming the query item.
    static func scoreQuery(_ ctx: RequestContext, _ name: String, default defaultValue: Double) throws -> Double {
        guard let text = try ctx.textQuery(name, maxLength: 20) else { return defaultValue }
        guard let value = Double(text), value.isFinite, (0...1).contains(value) else {
            throw APIError.badRequest("?\(name) must be a number from 0 to 1")
        }
        return value
    }
}

/// The answer of `GET /api/users/:id/duplicates`.
struct UserTwins: Encodable {
    let user: BetterAuthUserID
    let minScore: Double
    let candidates: [SplitIdentityCandidate]
}
