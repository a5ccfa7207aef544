import Storage

/// An Apple app transfer: the app moved (or is moving) from one Apple developer team to another, so every Sign in
/// with Apple user gets a new team-scoped `sub`, and a Hide My Email user a new relay address. Apple bridges the two
/// with a transfer identifier (`transfer_sub`) for `window` after the transfer date; after that the app has to be
/// transferred back to start again (TN3159).
public struct AppleTransfer: Sendable, Codable, Equatable {
    /// How long Apple's migration endpoints answer after the transfer date.
    public static let window = Seconds(60 * 86_400)
    /// `health` warns this many days before the deadline while work is not applied, and is critical at `criticalDays`.
    public static let warningDays = 21
    public static let criticalDays = 7

    public let id: Int64
    /// The sending team: the team whose key asks Apple for the transfer identifiers.
    public let fromTeam: TeamID
    /// The recipient team: the team whose key exchanges them for the new identifiers.
    public let toTeam: TeamID
    /// The client id both sides send (the app's bundle id or Services ID).
    public let clientID: String
    /// When the app was (or will be) transferred; the deadline is `window` later.
    public let transferredAt: Timestamp
    public let deadline: Timestamp
    /// The recipient runs its own store: this store collects and exports; it never exchanges.
    public let recipientElsewhere: Bool
    /// This store is the recipient's, filled by `import`: it exchanges, plans and applies; it never collects.
    public let imported: Bool
    public let startedAt: Timestamp
    public let startedBy: String

    /// The time `text` names (ISO 8601: a date, or a date and time), or nil when it is not one, including a day the
    /// month does not have (`2026-02-30`), which would otherwise roll over into the next month.
    public static func date(_ text: String) -> Timestamp? {
        guard let time = Timestamp(iso8601: text) else { return nil }
        let parts = text.prefix(10).split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        let (year, month, day) = (parts[0], parts[1], parts[2])
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...days[month - 1]).contains(day) else { return nil }
        return time
    }

    /// Whole days left before the deadline (negative once it passed).
    public func daysLeft(at now: Timestamp) -> Int {
        let milliseconds = deadline.milliseconds - now.milliseconds
        return Int(milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000)
    }

    /// Whether Apple's endpoints still answer for it.
    public func isOpen(at now: Timestamp) -> Bool { now < deadline }

    static func from(_ row: Row) throws -> AppleTransfer {
        func time(_ column: String) throws -> Timestamp {
            guard let time = Timestamp(iso8601: try row.string(column)) else {
                throw GatehouseError("the Apple transfer's \(column) is not a time", fix: "restore gatehouse_apple_transfers from a backup", code: .corrupt)
            }
            return time
        }
        return AppleTransfer(id: row["id"].int64 ?? 0, fromTeam: try TeamID(try row.string("from_team")), toTeam: try TeamID(try row.string("to_team")),
                             clientID: try row.string("client_id"), transferredAt: try time("transferred_at"), deadline: try time("deadline_at"),
                             recipientElsewhere: row["recipient_elsewhere"].int64 == 1, imported: row["imported"].int64 == 1,
                             startedAt: try time("started_at"), startedBy: try row.string("started_by"))
    }
}

/// Where a transfer stands, as `apple transfer status` and the console's Transfer page show it.
public struct AppleTransferStatus: Sendable, Codable {
    /// What is to be done next: `collecting`, `exchanging`, `planning`, `applying`, `applied`, or `expired`; on a
    /// sending store whose recipient runs its own store, `exporting`, then `exported` (nothing left to do here).
    public let stage: String
    public let transferID: Int64
    public let fromTeam: String
    public let toTeam: String
    public let clientId: String
    public let transferredAt: String
    public let deadline: String
    public let daysLeft: Int
    public let recipientElsewhere: Bool
    public let imported: Bool
    public let counts: Counts
    /// The accounts Apple answered an error for (at most `AppleTransferStore.listedFailures`), with the step.
    public let failed: [Failure]
    /// The latest plan, if any.
    public let plan: AppleTransferPlanSummary?
    /// What to run next, one line.
    public let next: String

    public struct Counts: Sendable, Codable, Equatable {
        /// Apple accounts in the transfer.
        public let accounts: Int
        /// With a transfer identifier from the sending team.
        public let collected: Int
        /// With the new sub from the recipient team.
        public let exchanged: Int
        /// Rewritten in the store by an applied plan.
        public let applied: Int
        /// Apple answered an error for them (collect or exchange).
        public let failed: Int
    }

    public struct Failure: Sendable, Codable, Equatable {
        public let userId: String
        public let accountId: String
        /// `collect` or `exchange`.
        public let step: String
        public let error: String
    }

    enum CodingKeys: String, CodingKey {
        case stage, fromTeam, toTeam, clientId, transferredAt, deadline, daysLeft, recipientElsewhere, imported, counts, failed, plan, next
        case transferID = "transferId"
    }
}
