/// A key in the ring, as listed: never the key material itself.
public struct AppleKey: Sendable, Codable, Equatable {
    /// Where a key is in its lifecycle: staged → active → retired, and revoked (final) from any state.
    public enum State: String, Sendable, Codable, CaseIterable {
        /// Imported, not yet used to mint.
        case staged
        /// The key client secrets are minted from; at most one.
        case active
        /// Was active; still valid at Apple, so `rollback` can return to it.
        case retired
        /// Revoked in Apple's portal: never activatable again.
        case revoked
    }

    public let keyID: KeyID
    public let teamID: TeamID
    public let state: State
    /// Hex SHA-256 of the public key's SubjectPublicKeyInfo.
    public let fingerprint: String
    public let importedAt: Timestamp
    public let activatedAt: Timestamp?
    public let retiredAt: Timestamp?
    public let revokedAt: Timestamp?

    /// Whether Apple still honours the key (as far as the ring knows): not revoked.
    public var isLive: Bool { state != .revoked }
}
