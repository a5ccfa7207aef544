/// The Apple Developer Program membership's renewal, as `gates show` and the health checks report it:
/// a warning from 30 days before the renewal date, critical from 7 days before, expired after.
public struct MembershipRenewal: Sendable, Codable, Equatable {
    /// How close the renewal is.
    public enum Level: String, Sendable, Codable {
        /// More than 30 days away.
        case ok
        /// 30 days or less.
        case warning
        /// 7 days or less.
        case critical
        /// The renewal date has passed: every Apple gate's membership requirement is expired.
        case expired
    }

    /// Days before the renewal date that make a warning.
    public static let warningDays: Int64 = 30
    /// Days before the renewal date that make it critical.
    public static let criticalDays: Int64 = 7

    /// The renewal date declared with the membership.
    public let renewsAt: Timestamp
    /// Whole days left (negative once expired).
    public let daysLeft: Int64
    public let level: Level
    /// One line for people.
    public let message: String

    /// The renewal of a membership declared met with a renewal date; nil otherwise.
    init?(_ declaration: GateDeclaration, now: Timestamp) {
        guard declaration.requirement == .membership, declaration.met, let renewsAt = declaration.expiresAt else { return nil }
        self.init(renewsAt: renewsAt, now: now)
    }

    /// The renewal on `renewsAt`, seen at `now`.
    public init(renewsAt: Timestamp, now: Timestamp) {
        let remaining = renewsAt.milliseconds - now.milliseconds
        self.renewsAt = renewsAt
        daysLeft = remaining.floorDivided(by: 86_400_000).0
        let date = String(renewsAt.iso8601.prefix(10))
        if remaining <= 0 {
            level = .expired
            message = "the Apple Developer Program membership expired on \(date): every Apple gate has lapsed or is blocked"
        } else if remaining <= Self.criticalDays * 86_400_000 {
            level = .critical
            message = "the Apple Developer Program membership renews on \(date), in \(daysLeft) day(s): renew it now"
        } else if remaining <= Self.warningDays * 86_400_000 {
            level = .warning
            message = "the Apple Developer Program membership renews on \(date), in \(daysLeft) day(s)"
        } else {
            level = .ok
            message = "the Apple Developer Program membership renews on \(date), in \(daysLeft) days"
        }
    }

    /// What to do, when there is something to do.
    public var action: String? {
        switch level {
        case .ok: return nil
        case .warning, .critical:
            return "renew it in the Apple Developer account (Membership), then record the next date: \(run: .gatesSet, "apple membership met", .option(.evidence, "\"...\""), .option(.expires, "<next renewal date>"))"
        case .expired:
            return "renew the membership, then: \(run: .gatesSet, "apple membership met", .option(.evidence, "\"...\""), .option(.expires, "<next renewal date>"))"
        }
    }
}
