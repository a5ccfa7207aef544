import Foundation
import Storage

/// Finds the Better Auth user an operator means: an exact user id, a sync sub `better_auth|<id>`, or
/// an email (matched exactly, lowercased, as Better Auth stores it). Every value is bound, never
/// spliced into SQL.
public struct MergeUserResolver {
    /// The store.
    public let store: Store

    /// The longest input accepted: longer is not an id, a sub or an email.
    public static let maxLength = 320

    public init(store: Store) { self.store = store }

    /// The user id for `input`, or a not-found error naming the input by its `field`.
    public func resolve(_ input: String, field: InputField) throws -> BetterAuthUserID {
        let text = input.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw GatehouseError.invalid("\(field: field) is empty", fix: "pass a Better Auth user id, an email or a sub better_auth|<id>") }
        guard text.count <= Self.maxLength, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw GatehouseError.invalid("\(field: field) is not a user id, an email or a sub (\(text.count) characters, or control characters)",
                                         fix: "pass a Better Auth user id, an email or a sub better_auth|<id>")
        }
        let user = store.schema.user
        let idColumn = user.col(.id)
        func exists(_ id: String) throws -> Bool {
            try store.db.scalar("SELECT count(*) FROM \(user.sql) WHERE \(idColumn) = ?", [id]).int64 ?? 0 > 0
        }
        if let id = SyncSub(text).userID, try exists(id.rawValue) { return id }
        if try exists(text) { return BetterAuthUserID(text) }
        if text.contains("@"), let id = try store.db.scalar("SELECT \(idColumn) FROM \(user.sql) WHERE \(user.col(.email)) = ?", [JavaScriptString.toLowerCase(text)]).string {
            return BetterAuthUserID(id)
        }
        let shown = OperatorText.visible(text.count > 60 ? String(text.prefix(60)) + "…" : text)
        throw GatehouseError.notFound("\(field: field) \"\(shown)\" matches no user (tried: Better Auth user id, sub better_auth|<id>, exact email)",
                                      fix: "find the user first, e.g. \(command: .usersSearch, "\(shown.prefix(30))")")
    }
}
