import Foundation
import Storage

/// How long Gatehouse waits on a store before it gives up with a clear answer, on every engine.
///
/// `busy` is the wait for a lock another process or session holds: SQLite's busy timeout, Postgres's
/// `lock_timeout` (and a console's wait for a free connection), so that a held lock ends in the same "busy" answer
/// after the same time on both. `statement` bounds one statement on a server (`statement_timeout`): a CLI job gets
/// minutes, a console request one minute. Both read the environment once per store opened:
/// `GATEHOUSE_BUSY_TIMEOUT_MS` (default 15,000) and `GATEHOUSE_STATEMENT_TIMEOUT_MS` (0 for no limit).
///
///     let store = try Store.open(path: uri, timeouts: .console)
public struct StoreTimeouts: Sendable, Equatable {
    /// Milliseconds to wait for a lock held by someone else.
    public var busyMilliseconds: Int
    /// Milliseconds one statement may run on a database server; 0 for no limit.
    public var statementMilliseconds: Int
    /// Milliseconds one operation on a store behind an HTTP API (D1) may take in all, its retries and their waits
    /// included; nil for the engine's own bounds (minutes, for a CLI job).
    public var requestMilliseconds: Int? = nil

    public init(busyMilliseconds: Int, statementMilliseconds: Int) {
        self.busyMilliseconds = busyMilliseconds
        self.statementMilliseconds = statementMilliseconds
    }

    /// A CLI job's: the environment's, else 15 s for a lock and 5 minutes for a statement.
    public static var command: StoreTimeouts { fromEnvironment(statementDefault: 300_000) }

    /// A console request's: the environment's, else 15 s for a lock and 60 s for a statement; a D1 operation ends
    /// within the busy timeout (at least a second), as a wait for a lock does, so a stalled API is one bounded 503.
    public static var console: StoreTimeouts {
        var timeouts = fromEnvironment(statementDefault: 60_000)
        timeouts.requestMilliseconds = max(timeouts.busyMilliseconds, 1000)
        return timeouts
    }

    /// The longest wait any variable may ask for: a day. Longer is a typo, and would overflow the engines' settings.
    static let longest = 86_400_000

    private static func fromEnvironment(statementDefault: Int) -> StoreTimeouts {
        func milliseconds(_ name: String, default value: Int) -> Int {
            guard let text = getenv(name).map({ String(cString: $0) }), let parsed = Int(text.trimmingCharacters(in: .whitespaces)) else { return value }
            return min(max(0, parsed), longest)
        }
        return StoreTimeouts(busyMilliseconds: milliseconds("GATEHOUSE_BUSY_TIMEOUT_MS", default: 15_000),
                             statementMilliseconds: milliseconds("GATEHOUSE_STATEMENT_TIMEOUT_MS", default: statementDefault))
    }
}
