import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// Keeps slow or silent clients from holding every connection the server has (slowloris).
///
/// libmicrohttpd 0.9.75 closes a connection only after ``HTTPServerConfiguration/connectionTimeoutSeconds``
/// of *complete* silence, so a client that sends one header byte every few seconds keeps its connection
/// for ever; a few hundred such connections fill the connection limit and every new one, the browser's
/// included, is refused. A per-IP limit does not help a console on 127.0.0.1, where the browser and
/// any attacking process share one address. Instead this tracker, fed by libmicrohttpd's
/// connection-notification callback and the access handler, knows which connections are *waiting* for the
/// client (opened, or answered and kept alive, and the next request's head not yet complete) and since when:
///
/// - a connection that has waited longer than ``HTTPServerConfiguration/requestHeadTimeoutSeconds`` is closed
///   (a sweeper looks twice a second), however slowly it trickles bytes;
/// - when more than ``HTTPServerConfiguration/maxWaitingConnections`` wait at once, each new connection
///   closes the one that has waited longest. A browser sends its request as soon as it connects, so it
///   stops waiting within milliseconds and is never the oldest; a flood of idle connections only evicts
///   itself.
///
/// Connections running a request (headers complete, body being read, handler running, response being
/// sent) are never touched. Closing is `shutdown(2)` on the socket, done under the tracker's lock, which
/// libmicrohttpd's "closed" notification also takes before it closes the descriptor: a descriptor is never
/// shut down after it could have been reused by a newer connection.
final class ConnectionTracker: @unchecked Sendable { // `sweeper` is set once, by start(), before any other thread sees it; the rest is Locked or Monitor
    private struct Entry {
        let fd: Int32
        /// When the connection began waiting for a request head; nil while a request runs.
        var waitingSince: UInt64?
    }

    /// Every open connection, how many wait, and how many were closed: changed only under the lock.
    private struct Table {
        var entries: [UInt: Entry] = [:]
        var waiting = 0
        var evictions = 0

        /// Shuts down the connection that has waited longest (other than `except`); false when there is none.
        /// The entry stays until libmicrohttpd reports the connection closed.
        mutating func evictOldestWaiting(except: UInt) -> Bool {
            var oldest: (key: UInt, since: UInt64)?
            for (key, entry) in entries where key != except {
                if let since = entry.waitingSince, since < (oldest?.since ?? .max) { oldest = (key, since) }
            }
            guard let oldest, let entry = entries[oldest.key] else { return false }
            evict(oldest.key, entry)
            return true
        }

        /// Shuts the socket down and stops counting the connection as waiting.
        mutating func evict(_ key: UInt, _ entry: Entry) {
            if entry.fd >= 0 { _ = shutdown(entry.fd, Int32(SHUT_RDWR)) }
            entries[key]?.waitingSince = nil
            waiting -= 1
            evictions += 1
        }
    }

    private let table = Locked(Table())
    private let maxWaiting: Int
    private let headTimeoutNanoseconds: UInt64
    private var sweeper: Thread?
    /// Set by `stop()`; the sweeper waits on it between sweeps.
    private let stopped = Monitor(false)

    /// How many connections were closed for waiting too long or to make room (for tests and the bench).
    var evictions: Int { table.value.evictions }

    init(maxWaiting: Int, headTimeoutSeconds: Int) {
        self.maxWaiting = maxWaiting
        headTimeoutNanoseconds = UInt64(max(headTimeoutSeconds, 0)) * 1_000_000_000
    }

    private static func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))) }
    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// A connection was accepted: it waits for its first request head. Makes room if too many wait.
    func opened(_ connection: OpaquePointer, fd: Int32) {
        let key = Self.key(connection), limit = maxWaiting
        table.withLock { table in
            table.entries[key] = Entry(fd: fd, waitingSince: Self.now())
            table.waiting += 1
            while table.waiting > limit, table.evictOldestWaiting(except: key) {}
        }
    }

    /// A connection is gone (libmicrohttpd is about to close its descriptor).
    func closed(_ connection: OpaquePointer) {
        let key = Self.key(connection)
        table.withLock { table in
            if let entry = table.entries.removeValue(forKey: key), entry.waitingSince != nil { table.waiting -= 1 }
        }
    }

    /// A request's head is complete: the connection is busy until the request completes.
    func requestStarted(_ connection: OpaquePointer) {
        let key = Self.key(connection)
        table.withLock { table in
            guard table.entries[key]?.waitingSince != nil else { return }
            table.entries[key]?.waitingSince = nil
            table.waiting -= 1
        }
    }

    /// A request is over; a kept-alive connection waits for the next request head.
    func requestCompleted(_ connection: OpaquePointer) {
        let key = Self.key(connection)
        table.withLock { table in
            guard let entry = table.entries[key], entry.waitingSince == nil else { return }
            table.entries[key]?.waitingSince = Self.now()
            table.waiting += 1
        }
    }

    /// How many connections are open, and how many of them wait for a request head.
    var counts: (open: Int, waiting: Int) { table.withLock { ($0.entries.count, $0.waiting) } }

    /// Closes every connection that has waited longer than the head timeout.
    func sweep() {
        guard headTimeoutNanoseconds > 0 else { return }
        let now = Self.now(), timeout = headTimeoutNanoseconds
        table.withLock { table in
            for (key, entry) in table.entries {
                if let since = entry.waitingSince, now > since, now - since > timeout { table.evict(key, entry) }
            }
        }
    }

    /// Starts the sweeper thread.
    func start() {
        let thread = Thread { [self] in
            // Sweeps every half second until stopped (a wait that ends without a stop is the next sweep's turn).
            while stopped.wait(until: { $0 }, deadline: Date().addingTimeInterval(0.5), then: { _ in }) == nil {
                sweep()
            }
        }
        thread.name = "HTTPServer connection sweeper"
        sweeper = thread
        thread.start()
    }

    /// Stops the sweeper (it exits within half a second) and forgets every connection: called once the
    /// daemon has stopped, so no descriptor it knew is shut down after libmicrohttpd closed it.
    func stop() {
        stopped.update { $0 = true }
        table.withLock { table in
            table.entries.removeAll()
            table.waiting = 0
        }
    }
}
