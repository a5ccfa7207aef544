import Foundation

/// The moment an operation (a console request from its start; a CLI command from its first wait) stops waiting on
/// locks and connections: one budget for every wait in it, so that an operation gives up once, not once per statement.
///
/// A connection holds the deadline of the operation it serves (`SQLDatabase.waitDeadline`). Each wait gets only
/// what is left of it: SQLite's busy handler stops at it, Postgres's `lock_timeout` is lowered to it before the
/// next statement, a pool's check-out waits no longer. A wait that runs out spends the budget (the deadline becomes
/// now), so the operation's later waits give up at once with the same "busy" answer.
///
///     store.db.waitDeadline = WaitDeadline(milliseconds: 3_000)   // a request's budget, from its start
public struct WaitDeadline: Sendable, Comparable {
    /// `DispatchTime`'s monotonic clock, in nanoseconds.
    public let uptimeNanoseconds: UInt64

    /// The deadline `milliseconds` from now.
    public init(milliseconds: Int) {
        uptimeNanoseconds = Self.clock + UInt64(max(0, milliseconds)) * 1_000_000
    }

    /// The deadline `milliseconds` after `start` (a `DispatchTime` uptime in nanoseconds).
    public init(milliseconds: Int, after start: UInt64) {
        uptimeNanoseconds = start + UInt64(max(0, milliseconds)) * 1_000_000
    }

    private init(uptimeNanoseconds: UInt64) { self.uptimeNanoseconds = uptimeNanoseconds }

    /// Now: a budget already spent.
    public static var now: WaitDeadline { WaitDeadline(uptimeNanoseconds: clock) }

    /// Whole milliseconds left, 0 once past.
    public var remainingMilliseconds: Int {
        let now = Self.clock
        return now >= uptimeNanoseconds ? 0 : Int((uptimeNanoseconds - now) / 1_000_000)
    }

    /// Seconds left, 0 once past.
    public var remainingSeconds: Double {
        let now = Self.clock
        return now >= uptimeNanoseconds ? 0 : Double(uptimeNanoseconds - now) / 1e9
    }

    public var isPast: Bool { Self.clock >= uptimeNanoseconds }

    /// The earlier of two deadlines; nil counts as none.
    public static func earliest(_ a: WaitDeadline?, _ b: WaitDeadline?) -> WaitDeadline? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    public static func < (lhs: WaitDeadline, rhs: WaitDeadline) -> Bool { lhs.uptimeNanoseconds < rhs.uptimeNanoseconds }

    package static var clock: UInt64 { DispatchTime.now().uptimeNanoseconds }
}
