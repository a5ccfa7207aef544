/// A reviewed deletion of one user: the rows it removes (table and key, never values), grouped, the fingerprint of
/// every row read, and which Apple accounts hold a token to revoke first. Stored in
/// `gatehouse_user_deletion_plans` and printed as it is (`--json`): it holds no token, password hash or row value.
public struct UserDeletionPlan: Sendable, Codable {
    /// One row the deletion removes.
    public struct Row: Sendable, Codable, Equatable {
        public let group: String
        public let table: String
        public let key: String
        public let reason: String
    }

    /// One Apple account of the user, and whether Better Auth holds a token that can be revoked.
    public struct AppleAccount: Sendable, Codable, Equatable {
        public let accountID: String
        public let hasRefreshToken: Bool
        public let hasAccessToken: Bool
        public var revocable: Bool { hasRefreshToken || hasAccessToken }
    }

    /// `dp_…`, from the fingerprint and the ticket.
    public let planID: String
    public let fingerprint: String
    public let groupHashes: [String: String]
    public let userID: BetterAuthUserID
    /// The sync server's sub of the user.
    public let sub: String
    public let ticket: String
    public let createdAt: Timestamp
    public let actor: String
    /// Rows deleted per table.
    public let tables: [String: Int]
    /// Every row, in the order apply deletes them.
    public let rows: [Row]
    public let appleAccounts: [AppleAccount]
    /// Whether any Apple token can be revoked (`apple revoke` would send one).
    public var canRevokeAppleTokens: Bool { appleAccounts.contains(where: \.revocable) }
    /// Every foreign key followed.
    public let references: [String]
    /// How many plans of the same rows and ticket were applied and undone before this one (absent for none): part of
    /// the id, so that planning again after an undo gives a new plan rather than the spent one.
    public var round: Int? = nil

    /// Whether `other` names the same deletion: every field but when and by whom it was planned (planning the same
    /// rows again gives the same plan, stored once) and the Apple accounts' token flags (tokens are outside the
    /// fingerprint: Better Auth refreshes them).
    public func namesSameDeletion(as other: UserDeletionPlan) -> Bool {
        planID == other.planID && fingerprint == other.fingerprint && groupHashes == other.groupHashes && userID == other.userID
            && sub == other.sub && ticket == other.ticket && tables == other.tables && rows == other.rows
            && appleAccounts.map(\.accountID) == other.appleAccounts.map(\.accountID) && references == other.references && round == other.round
    }
}
