/// One user in a search result.
public struct UserSummary: Sendable, Codable, Equatable {
    public let id: BetterAuthUserID
    public let name: String
    public let email: String
    public let emailVerified: Bool
    public let createdAt: Timestamp?
    /// Provider ids of the user's account rows (`apple`, `google`, `credential`), sorted.
    public let providers: [String]
    public let flags: [UserFlag]
    /// Which kind of match found the user (`email`, `name`, `id`, `sub`, `account`).
    public let matchedBy: UserQueryKind
}

/// What `users search` found.
public struct UserSearchResult: Sendable, Codable, Equatable {
    public let query: String
    /// The kinds of match tried, in order.
    public let kinds: [UserQueryKind]
    public let limit: Int
    /// True when more users matched than `limit` (there is a next page).
    public let truncated: Bool
    public let users: [UserSummary]
    /// The order the pages run in.
    public let sort: UserSort
    /// Where the next page starts (`UserDirectory.search(after:)`, `?cursor=`, `--after`); null on the last page.
    public let nextCursor: String?

    /// Encodes `nextCursor` as null on the last page rather than leaving it out.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(query, forKey: .query)
        try container.encode(kinds, forKey: .kinds)
        try container.encode(limit, forKey: .limit)
        try container.encode(truncated, forKey: .truncated)
        try container.encode(users, forKey: .users)
        try container.encode(sort, forKey: .sort)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

/// The user row, as far as this database has its columns.
public struct UserRecord: Sendable, Codable, Equatable {
    public let id: BetterAuthUserID
    public let name: String
    public let email: String
    public let emailVerified: Bool
    public let image: String?
    public let createdAt: Timestamp?
    public let updatedAt: Timestamp?
    /// The admin plugin's role, when the column exists.
    public let role: String?
    /// The admin plugin's ban state, when its columns exist.
    public let ban: BanState?
}

/// The admin plugin's ban columns.
public struct BanState: Sendable, Codable, Equatable {
    public let banned: Bool
    public let reason: String?
    public let expires: Timestamp?
}

/// One `account` row, without any secret: token and password columns are reported as present or not.
public struct AccountRecord: Sendable, Codable, Equatable {
    public let id: String
    public let providerId: String
    /// Better Auth 1.7's issuer; nil on databases without the column.
    public let issuer: String?
    public let accountId: String
    public let createdAt: Timestamp?
    public let updatedAt: Timestamp?
    public let scope: String?
    public let accessTokenExpiresAt: Timestamp?
    public let refreshTokenExpiresAt: Timestamp?
    public let hasAccessToken: Bool
    public let hasRefreshToken: Bool
    public let hasIdToken: Bool
    public let hasPassword: Bool
}

/// One session, without its token.
public struct SessionRecord: Sendable, Codable, Equatable {
    public let id: String
    public let createdAt: Timestamp?
    public let updatedAt: Timestamp?
    public let expiresAt: Timestamp?
    public let expired: Bool
    public let ipAddress: String?
    public let userAgent: String?
    /// The admin who impersonates the user in this session, when the admin plugin records it.
    public let impersonatedBy: String?
}

/// A user's sessions: counts and the latest few.
public struct SessionOverview: Sendable, Codable, Equatable {
    public let total: Int
    public let unexpired: Int
    /// Newest first.
    public let latest: [SessionRecord]
}

/// The sync server's `users` row.
public struct SyncUserRecord: Sendable, Codable, Equatable {
    public let id: Int64
    public let sub: SyncSub
    public let displayName: String?
    public let createdAt: String?
}

/// A workspace owned by the user's sync row.
public struct WorkspaceRecord: Sendable, Codable, Equatable {
    public let id: String
    public let name: String
    public let createdAt: String?
}

/// A subscription of the user's sync row.
public struct SubscriptionRecord: Sendable, Codable, Equatable {
    public let id: String
    public let plan: String
    public let status: String
    public let currentPeriodEnd: String?
}

/// An allow-list role granted to the user's sub.
public struct RoleRecord: Sendable, Codable, Equatable {
    public let role: String
    public let grantedAt: String?
}

/// Everything the sync server holds for a user's sub.
public struct SyncRecord: Sendable, Codable, Equatable {
    public let sub: SyncSub
    /// False means UNPROVISIONED: the sync server refuses tokens for this sub.
    public let provisioned: Bool
    public let user: SyncUserRecord?
    public let workspaces: [WorkspaceRecord]
    public let subscriptions: [SubscriptionRecord]
    /// Roles are granted to a sub and may exist before it is provisioned.
    public let roles: [RoleRecord]
    /// Sync-server tables this database does not have.
    public let missingTables: [String]

    /// The sync server's tables a user's record is read from.
    package static let tables = ["users", "workspaces", "subscriptions", "allow_list"]
}

/// One merge record that names the user, with its identifying columns only (never undo data).
public struct MergeRecordSummary: Sendable, Codable, Equatable {
    public let fields: [String: String]
}

/// The user's merge history.
public struct MergeHistory: Sendable, Codable, Equatable {
    /// False until merges exist in this store (no `gatehouse_merges` table).
    public let available: Bool
    public let records: [MergeRecordSummary]
}

/// Everything `users show` reports about one user.
public struct UserDetail: Sendable, Codable, Equatable {
    public let user: UserRecord
    public let flags: [UserFlag]
    public let accounts: [AccountRecord]
    public let sessions: SessionOverview
    public let sync: SyncRecord
    public let merges: MergeHistory
}
