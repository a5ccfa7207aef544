/// What Gatehouse reads from an email address: its local part, its domain, and whether it is an
/// Apple private-relay ("Hide My Email") address.
public struct EmailAddress: Sendable, Equatable {
    /// Domains of Apple's private-relay addresses. Plain `icloud.com` is a real mailbox, not a relay.
    public static let relayDomains: Set<String> = ["privaterelay.appleid.com", "private.icloud.com"]

    /// The part before the last `@`, lowercased as JavaScript's `toLowerCase()` does (Better Auth's own lowercasing).
    public let local: String
    /// The part after the last `@`, lowercased the same way; empty when the text has no `@`.
    public let domain: String

    public init(_ text: String) {
        let lowered = JavaScriptString.toLowerCase(text)
        if let at = lowered.lastIndex(of: "@") {
            local = String(lowered[..<at])
            domain = String(lowered[lowered.index(after: at)...])
        } else {
            local = lowered
            domain = ""
        }
    }

    /// Whether this is an Apple private-relay address.
    public var isPrivateRelay: Bool { Self.relayDomains.contains(domain) }

    /// Whether the text looks like an address at all (something on both sides of an `@`).
    public var isPresent: Bool { !local.isEmpty && !domain.isEmpty }

    /// The local part without a `+tag` (`ana+news` → `ana`): the part a person reuses across providers.
    public var mailbox: String {
        guard let plus = local.firstIndex(of: "+"), plus != local.startIndex else { return local }
        return String(local[..<plus])
    }
}
