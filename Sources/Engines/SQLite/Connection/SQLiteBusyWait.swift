import CSQLite
import Foundation
import Storage

/// SQLite's busy handler for one connection: waits for another connection's lock in short sleeps, as
/// `sqlite3_busy_timeout` does, but stops at the operation's `WaitDeadline` as well as after the busy timeout, and
/// spends the deadline when it gives up, so that the operation's next wait gives up at once instead of waiting again.
/// A connection without a deadline gets one at its first wait (the busy timeout from then): its later waits share it.
final class SQLiteBusyWait {
    /// The longest one wait lasts (the busy timeout).
    let milliseconds: Int
    /// The operation's deadline, if it has one.
    var deadline: WaitDeadline?
    /// When the current wait began (its first call, `count` 0).
    private var started = WaitDeadline.now

    init(milliseconds: Int) { self.milliseconds = max(0, milliseconds) }

    /// The pauses between tries, as SQLite's own busy timeout takes them (milliseconds), then the last one repeated.
    private static let pauses = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]

    /// Whether to try again after a pause (which it takes), or give up (SQLITE_BUSY to the caller).
    func retry(count: Int) -> Bool {
        if count == 0 {
            started = WaitDeadline(milliseconds: milliseconds)
            if deadline == nil { deadline = started }
        }
        let stop = WaitDeadline.earliest(started, deadline) ?? started
        let left = stop.remainingMilliseconds
        guard left > 0 else {
            // Spent: whatever else this operation waits for gives up at once.
            deadline = .now
            return false
        }
        let pause = min(Self.pauses[min(count, Self.pauses.count - 1)], left)
        usleep(UInt32(pause) * 1000)
        return true
    }

    /// The C callback; its context is the connection's `SQLiteBusyWait`, unretained (the connection owns it and
    /// closes its handle before releasing it).
    static let handler: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, count in
        guard let context else { return 0 }
        return Unmanaged<SQLiteBusyWait>.fromOpaque(context).takeUnretainedValue().retry(count: Int(count)) ? 1 : 0
    }
}
