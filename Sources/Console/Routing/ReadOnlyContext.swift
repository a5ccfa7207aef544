import Foundation
import Gatehouse
import HTTPServer

/// The store as an inline route sees it: named reads and nothing else. An inline GET's token check goes with its
/// first snapshot (`TokenCheck`), so its handler reads before the token is found good and its answer is dropped
/// afterwards when it is not; a write there would already be done. This type has no write (no `change`, no `db`, no
/// way to the `Store` it wraps), so an inline handler that writes does not compile. A new inline page adds its read
/// here, as one call into the service layer that only reads.
public struct ReadOnlyStore {
    private let store: Store

    init(_ store: Store) { self.store = store }

    /// A user's detail page (`UserDirectory.show`): primary-key and indexed lookups on one snapshot.
    public func userDetail(_ reference: String, now: Timestamp, latestSessions: Int) throws -> UserDetail {
        try UserDirectory(store: store).show(reference, now: now, latestSessions: latestSessions)
    }
}

/// What an inline route's handler gets (`Router.addInline`): the request, its parameters, the session, and the
/// store only as a `ReadOnlyStore`. It holds the full `RequestContext` privately, so nothing that writes is
/// reachable from a handler.
///
///     router.addInline("/api/users/:id", role: .viewer) { ctx in
///         UserDetailJSON.response(try ctx.read { try $0.userDetail(ctx.parameters["id"] ?? "", now: ctx.now, latestSessions: 5) })
///     }
public struct ReadOnlyContext: Sendable {
    private let context: RequestContext

    init(_ context: RequestContext) { self.context = context }

    public var request: HTTPRequest { context.request }
    /// Values of `:name` segments in the route pattern.
    public var parameters: [String: String] { context.parameters }
    /// The time this request is handled at.
    public var now: Timestamp { context.now }

    /// The session, or the token's refusal (the check is made now if no read has carried it yet).
    public func requireSession() throws -> AdminSession { try context.requireSession() }

    /// An integer query item within bounds, or 400 naming it.
    public func integerQuery(_ name: String, default defaultValue: Int, range: ClosedRange<Int>) throws -> Int {
        try context.integerQuery(name, default: defaultValue, range: range)
    }

    /// Runs `body` with the request's store, read-only; the first snapshot carries the token check.
    public func read<T>(_ body: (ReadOnlyStore) throws -> T) throws -> T {
        try context.stores.withStore { try body(ReadOnlyStore($0)) }
    }
}
