import Foundation
import Locking

/// What the server gathers about one request across libmicrohttpd's calls to the access handler.
///
/// Created by the URI log callback, retained into libmicrohttpd's `*con_cls` and released by the
/// request-completed callback. A connection is served by one libmicrohttpd thread at a time; the one hand-off
/// to a handler thread (`pendingResponse`) is ordered by suspending and resuming the connection, which
/// libmicrohttpd does under its own mutex. Hence `@unchecked Sendable` without a lock.
final class RequestState: @unchecked Sendable {
    /// The request target as sent (path and query), captured before libmicrohttpd decodes it.
    let target: String
    var method = ""
    var headers = HTTPHeaders()
    var body: [UInt8] = []
    var remoteAddress = ""
    /// Set when the request line held a NUL byte, which libmicrohttpd's C strings would silently cut at: answered 400.
    var nulInRequestLine = false
    /// Set once the first call (headers only) has been handled.
    var headersSeen = false
    /// Set when the body is over the cap: its bytes are discarded and the answer is 413.
    var bodyTooLarge = false
    /// Set once a response has been queued; later calls have nothing to do.
    var responded = false
    /// The handler's response, set on a handler thread before the connection is resumed.
    var pendingResponse: HTTPResponse?

    init(target: String) {
        self.target = target
        #if DEBUG
        Self.live.withLock { $0 += 1 }
        #endif
    }

    #if DEBUG
    deinit {
        Self.live.withLock { $0 -= 1 }
    }

    /// How many request states exist, so tests can prove each one is released (debug builds only).
    static let live = Locked(0)
    #endif

    /// The target split at the first `?` into a raw path and a raw query.
    func pathAndQuery() -> (path: String, query: String?) {
        let utf8 = target.utf8
        guard let mark = utf8.firstIndex(of: UInt8(ascii: "?")) else {
            return (target, nil)
        }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }
}

/// What every libmicrohttpd callback of one running server needs; passed to C unretained, kept alive by the
/// ``HTTPServer`` until `MHD_stop_daemon` has returned.
final class ServerContext: Sendable {
    /// libmicrohttpd's functions.
    let library: MicroHTTPD
    let handler: HTTPServer.Handler
    let inlineHandler: HTTPServer.InlineHandler?
    let lane: HTTPServer.LaneClassifier?
    let maxBodyBytes: Int
    let pool: HandlerPool
    let connections: ConnectionTracker

    init(library: MicroHTTPD, handler: @escaping HTTPServer.Handler, inlineHandler: HTTPServer.InlineHandler?, lane: HTTPServer.LaneClassifier?,
         maxBodyBytes: Int, pool: HandlerPool, connections: ConnectionTracker) {
        self.lane = lane
        self.connections = connections
        self.library = library
        self.handler = handler
        self.inlineHandler = inlineHandler
        self.maxBodyBytes = maxBodyBytes
        self.pool = pool
    }
}

/// A suspended libmicrohttpd connection, handed to a handler thread only to resume it.
struct SuspendedConnection: @unchecked Sendable { // a C pointer, only passed back to libmicrohttpd to resume
    let pointer: OpaquePointer
}

