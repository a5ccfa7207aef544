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
/// of *complete* silence, so a client that sends one byte every few seconds, of its head or of its body, keeps its
/// connection for ever; a few hundred such connections fill the connection limit and every new one, the browser's
/// included, is refused. This tracker, fed by libmicrohttpd's connection-notification callback and the access
/// handler, knows which connections are *waiting* for the client (opened, or answered and kept alive, and the next
/// request not yet complete, head and body) and since when:
///
/// - a connection that has waited longer than ``HTTPServerConfiguration/requestTimeoutSeconds`` is closed (a sweeper
///   looks twice a second), however slowly it trickles bytes: one deadline for the whole request;
/// - when more than ``HTTPServerConfiguration/maxWaitingConnections`` wait at once, each new connection
///   closes the one that has waited longest. A browser sends its request as soon as it connects, so it
///   stops waiting within milliseconds and is never the oldest; a flood of idle connections only evicts
///   itself;
/// - one client address holds at most ``HTTPServerConfiguration/maxConnectionsPerAddress`` connections: a new one
///   beyond closes that address's longest-waiting connection, or is itself closed at once when all of them are
///   running requests. On loopback every client is 127.0.0.1, the browser included, and a valid request still gets
///   through: it is complete at once, so it is never the one closed.
///
/// Connections running a request (request complete, handler running, response being sent) are never touched.
/// Closing is `shutdown(2)` on the socket, done under the tracker's lock, which libmicrohttpd's "closed" notification
/// also takes before it closes the descriptor: a descriptor is never shut down after it could have been reused by a
/// newer connection.
final class ConnectionTracker: @unchecked Sendable { // `sweeper` is set once, by start(), before any other thread sees it; the rest is Locked or Monitor
    private struct Entry {
        let fd: Int32
        /// The client's address, as libmicrohttpd reports it (empty when unknown).
        let address: String
        /// When the connection began waiting for a request; nil while a request runs.
        var waitingSince: UInt64?
    }

    /// Every open connection, how many wait, and how many were closed: changed only under the lock.
    private struct Table {
        var entries: [UInt: Entry] = [:]
        /// The open connections of each client address, but those already shut down.
        var byAddress: [String: Set<UInt>] = [:]
        /// Connections in the order they began waiting, oldest first; an element whose entry no longer waits since
        /// that time is stale and skipped (the sweeper drops stale ones). Finding the oldest waiting connection is
        /// then cheap however many are open.
        var waitOrder: [(key: UInt, since: UInt64)] = []
        var waitHead = 0
        var waiting = 0
        var evictions = 0

        /// Counts `key` as waiting from `now`.
        mutating func startWaiting(_ key: UInt, now: UInt64) {
            entries[key]?.waitingSince = now
            waiting += 1
            waitOrder.append((key, now))
        }

        /// Shuts down the connection that has waited longest (other than `except`); false when there is none.
        /// The entry stays until libmicrohttpd reports the connection closed.
        mutating func evictOldestWaiting(except: UInt) -> Bool {
            var index = waitHead
            while index < waitOrder.count {
                let (key, since) = waitOrder[index]
                if key != except, let entry = entries[key], entry.waitingSince == since {
                    if index == waitHead { waitHead += 1 }
                    evict(key, entry)
                    return true
                }
                if index == waitHead { waitHead += 1 }
                index += 1
            }
            return false
        }

        /// Shuts the socket down and stops counting the connection as waiting, or against its address's limit.
        mutating func evict(_ key: UInt, _ entry: Entry) {
            if entry.fd >= 0 { _ = shutdown(entry.fd, Int32(SHUT_RDWR)) }
            forget(key, address: entry.address)
            if entry.waitingSince != nil {
                entries[key]?.waitingSince = nil
                waiting -= 1
            }
            evictions += 1
        }

        /// Stops counting `key` among its address's connections.
        mutating func forget(_ key: UInt, address: String) {
            if byAddress[address]?.remove(key) != nil, byAddress[address]?.isEmpty == true { byAddress[address] = nil }
        }

        /// Keeps the wait order to the connections that still wait, so it never grows past the open connections.
        mutating func compactWaitOrder() {
            waitOrder = waitOrder[waitHead...].filter { entries[$0.key]?.waitingSince == $0.since }
            waitHead = 0
        }
    }

    private let table = Locked(Table())
    private let maxWaiting: Int
    private let maxPerAddress: Int
    private let timeoutNanoseconds: UInt64
    private var sweeper: Thread?
    /// Set by `stop()`; the sweeper waits on it between sweeps.
    private let stopped = Monitor(false)

    /// How many connections were closed for waiting too long or to make room (for tests and the bench).
    var evictions: Int { table.value.evictions }

    /// `maxPerAddress` 0 means no limit per address.
    init(maxWaiting: Int, requestTimeoutSeconds: Int, maxPerAddress: Int = 0) {
        self.maxWaiting = maxWaiting
        self.maxPerAddress = maxPerAddress
        timeoutNanoseconds = UInt64(max(requestTimeoutSeconds, 0)) * 1_000_000_000
    }

    private static func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))) }
    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// A connection from `address` was accepted: it waits for its first request. Makes room if too many wait, or if its
    /// address holds too many connections (closing the new one when none of that address's others waits).
    func opened(_ connection: OpaquePointer, fd: Int32, address: String) {
        let key = Self.key(connection), limit = maxWaiting, perAddress = maxPerAddress
        table.withLock { table in
            table.entries[key] = Entry(fd: fd, address: address, waitingSince: nil)
            table.startWaiting(key, now: Self.now())
            if perAddress > 0 {
                table.byAddress[address, default: []].insert(key)
                if let mine = table.byAddress[address], mine.count > perAddress {
                    // This address's longest-waiting other connection, else the new one itself.
                    let oldest = mine.compactMap { other -> (UInt, UInt64)? in
                        guard other != key, let since = table.entries[other]?.waitingSince else { return nil }
                        return (other, since)
                    }.min { $0.1 < $1.1 }
                    let victim = oldest?.0 ?? key
                    if let entry = table.entries[victim] { table.evict(victim, entry) }
                }
            }
            while table.waiting > limit, table.evictOldestWaiting(except: key) {}
        }
    }

    /// A connection is gone (libmicrohttpd is about to close its descriptor).
    func closed(_ connection: OpaquePointer) {
        let key = Self.key(connection)
        table.withLock { table in
            guard let entry = table.entries.removeValue(forKey: key) else { return }
            if entry.waitingSince != nil { table.waiting -= 1 }
            table.forget(key, address: entry.address)
        }
    }

    /// A request is complete, head and body (or answered before its body): the connection is busy until the request
    /// completes.
    func requestReceived(_ connection: OpaquePointer) {
        let key = Self.key(connection)
        table.withLock { table in
            guard table.entries[key]?.waitingSince != nil else { return }
            table.entries[key]?.waitingSince = nil
            table.waiting -= 1
        }
    }

    /// A request is over; a kept-alive connection waits for the next request.
    func requestCompleted(_ connection: OpaquePointer) {
        let key = Self.key(connection)
        table.withLock { table in
            guard let entry = table.entries[key], entry.waitingSince == nil else { return }
            table.startWaiting(key, now: Self.now())
        }
    }

    /// How many connections are open, and how many of them wait for a request.
    var counts: (open: Int, waiting: Int) { table.withLock { ($0.entries.count, $0.waiting) } }

    /// Closes every connection that has waited longer than the request timeout.
    func sweep() {
        let now = Self.now(), timeout = timeoutNanoseconds
        table.withLock { table in
            if timeout > 0 {
                for (key, entry) in table.entries {
                    if let since = entry.waitingSince, now > since, now - since > timeout { table.evict(key, entry) }
                }
            }
            table.compactWaitOrder()
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
            table = Table()
        }
    }
}
