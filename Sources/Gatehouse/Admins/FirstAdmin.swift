import Foundation

/// The console's first admin: made by `init` and `demo seed` on a store that has none, so a new store can be logged
/// into at once. A store that has admins is left as it is.
///
///     let first = try FirstAdmin.ensure(in: store, username: try AdminUsername("admin"), password: nil,
///                                       actor: Actor("ops-bob"), now: .now())
///     if let text = first.generatedPassword { print(text) }   // shown once, never stored in clear
public struct FirstAdmin: Encodable, Sendable {
    /// The username asked for (created or not).
    public let username: String
    /// Whether this call created it (false: the store already had admins).
    public let created: Bool
    /// The generated password, only when one was generated; nil when it was supplied or nothing was created.
    public let generatedPassword: String?

    /// The default first admin's username.
    public static let defaultUsername = "admin"

    /// Creates `username` with role admin when the store has no admin; `password` nil generates one.
    public static func ensure(in store: Store, username: AdminUsername, password: AdminPassword?, actor: Actor,
                              now: Timestamp) throws -> FirstAdmin {
        let directory = AdminDirectory(store: store)
        guard try directory.count() == 0 else {
            return FirstAdmin(username: username.rawValue, created: false, generatedPassword: nil)
        }
        var generated: String?
        let chosen: AdminPassword
        if let password { chosen = password } else { (chosen, generated) = try AdminPassword.generate() }
        try directory.add(username, role: .admin, password: chosen, actor: actor, now: now)
        return FirstAdmin(username: username.rawValue, created: true, generatedPassword: generated)
    }

    /// The command that creates the first admin on `store`, for a store that has none: what `serve` prints and the
    /// login page shows. The store is shown as everywhere else (a URI's password as ***) and quoted for a shell.
    public static func setupCommand(store: StoreLocation) -> String {
        "gatehouse admins add \(defaultUsername) --role admin --store \(ShellWord.quoted(store.description))"
    }
}

/// A word as a POSIX shell reads it back unchanged: bare when it holds only safe characters, else single-quoted.
public enum ShellWord {
    public static func quoted(_ text: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-")
        if !text.isEmpty, text.allSatisfy({ safe.contains($0) }) { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
