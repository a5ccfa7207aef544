import CMicroHTTPD
import Foundation
import Locking

/// A small HTTP/1.1 server over libmicrohttpd: it reads whole requests, calls one handler, sends its response.
///
/// Connections are served by a pool of libmicrohttpd threads and handlers run on a second pool of threads,
/// several at once, so a handler must be thread-safe; a slow handler holds only its own handler thread,
/// never another connection. Handing a request to that pool costs two thread switches, more than a cheap
/// answer itself: an optional ``InlineHandler`` runs first on the connection's thread and may answer at once
/// (a static file, a refusal) or return `nil` to send the request on to the pool.
/// Bodies over ``HTTPServerConfiguration/maxBodyBytes`` are answered 413,
/// malformed requests (a NUL byte in the request line included) 400, both without calling the handler.
/// Slow or silent clients cannot hold every connection: a request, head and body, has one deadline, and one
/// address holds a bounded number of connections (see `ConnectionTracker`), and costly handlers,
/// put in the ``Lane/slow`` lane by an optional ``LaneClassifier``, always leave a handler thread to the
/// rest. Queues are bounded: a request its lane has no room for, one that waited too long, and one whose client
/// left are answered 503 (`Retry-After`) without running its handler (see `HandlerPool`). There is no routing here.
///
/// ```swift
/// let server = HTTPServer(configuration: .init(port: 8080)) { request in
///     .text(200, "hello from \(request.path)\n")
/// }
/// try server.start()
/// HTTPServer.waitForTermination()
/// server.stop()
/// ```
///
/// With a fast path: `HTTPServer(configuration: configuration, inline: { $0.path == "/health" ? .text(200, "ok\n") : nil }) { … }`.
public final class HTTPServer: Sendable {
    /// Turns a request into a response; called concurrently from the server's threads.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse
    /// Answers a request on the libmicrohttpd thread that read it, or returns `nil` to run ``Handler`` on the
    /// handler pool. It holds up every other connection of that thread while it runs: it must never block
    /// (no lock held by a handler, no waiting on a pool) and must finish in bounded, short time.
    public typealias InlineHandler = @Sendable (HTTPRequest) -> HTTPResponse?
    /// Says which lane of the handler pool a request's handler runs in; called on the connection's thread, so it must be cheap.
    public typealias LaneClassifier = @Sendable (HTTPRequest) -> Lane

    /// A lane of the handler pool.
    public enum Lane: Sendable {
        /// Work of bounded, short cost. With three handler threads or more it always has one that no slow job may
        /// take; with two or more it may use every thread but one (kept for ``priority`` work).
        case standard
        /// Work that must never wait behind other work (a login): taken first, and with two handler threads or more
        /// one thread runs nothing else, so a flood of standard or slow requests cannot keep it waiting. It may use
        /// every thread but one.
        case priority
        /// Work whose cost grows with the data (a scan): it may use every handler thread but two, so with three or more
        /// it never starves ``standard`` or ``priority`` work (with two it runs on one, the thread standard work uses).
        case slow
    }

    /// The configuration the server was created with.
    public let configuration: HTTPServerConfiguration

    private let handler: Handler
    private let inlineHandler: InlineHandler?
    private let lane: LaneClassifier?
    /// The running daemon and its context (libmicrohttpd holds the context unretained, so it is kept until
    /// `MHD_stop_daemon` returns). The lock serializes `start()` and `stop()`; it is held while `MHD_stop_daemon`
    /// waits for handlers.
    /// `@unchecked` for the daemon's C pointer alone: it is read and written only inside `running`'s lock, by
    /// `start()` and `stop()`, and libmicrohttpd's daemon handle may be stopped from any thread.
    private struct Running: @unchecked Sendable {
        var daemon: OpaquePointer?
        var context: ServerContext?
    }
    private let running = Locked(Running())
    /// The bound port, which handlers may read while `stop()` holds the lifecycle lock.
    private let boundPort = Locked<UInt16>(0)

    /// A server that is not yet listening; call ``start()``. `inline`, when given, is tried first on the
    /// connection's thread for every complete request (see ``InlineHandler``); `lane`, when given, puts
    /// costly requests in the handler pool's slow lane (see ``Lane``).
    public init(configuration: HTTPServerConfiguration, inline: InlineHandler? = nil, lane: LaneClassifier? = nil, handler: @escaping Handler) {
        self.configuration = configuration
        self.inlineHandler = inline
        self.lane = lane
        self.handler = handler
    }

    deinit {
        stop()
    }

    /// The port the server listens on (the one the system picked if the configuration said 0); 0 when stopped.
    public var port: UInt16 {
        boundPort.value
    }

    /// Binds the address and starts serving; returns once the server accepts connections.
    ///
    /// Also sets `SIGPIPE` to be ignored, so a client that hangs up cannot kill the process.
    /// - Throws: ``HTTPServerError`` naming the address and what to do: address in use, not an IP address, …
    public func start() throws {
        try running.withLock { running in
            guard running.daemon == nil else {
                throw HTTPServerError(kind: .alreadyStarted, message: "The HTTP server is already running on port \(port); stop it before starting it again.")
            }
            try configuration.validate()
            let library = try MicroHTTPD.load()
            guard let address = SocketAddress(address: configuration.address, port: configuration.port) else {
                throw HTTPServerError(
                    kind: .invalidAddress,
                    message: "\"\(configuration.address)\" is not an IP address; use an IPv4 or IPv6 literal such as 127.0.0.1 or ::1."
                )
            }
            signal(SIGPIPE, SIG_IGN)

            var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            if address.isIPv6 {
                flags |= MHD_USE_IPv6.rawValue
            }
            let context = ServerContext(
                library: library,
                handler: handler,
                inlineHandler: inlineHandler,
                lane: lane,
                maxBodyBytes: configuration.maxBodyBytes,
                pool: HandlerPool(threadCount: configuration.handlerThreadCount, maxQueued: configuration.maxQueuedRequests,
                                  maxQueueWaitSeconds: configuration.maxQueueWaitSeconds, reservesPriority: lane != nil),
                connections: ConnectionTracker(maxWaiting: configuration.maxWaitingConnections,
                                               requestTimeoutSeconds: configuration.requestTimeoutSeconds,
                                               maxPerAddress: configuration.maxConnectionsPerAddress)
            )
            Self.raiseOpenFileLimit(toAtLeast: configuration.connectionLimit + 64)
            let started = address.withSockAddr { sockAddr, _ in
                gatehouse_mhd_start_daemon(
                    library.startDaemon,
                    flags,
                    sockAddr,
                    MicroHTTPDCallbacks.access, Unmanaged.passUnretained(context).toOpaque(),
                    MicroHTTPDCallbacks.requestCompleted, Unmanaged.passUnretained(context).toOpaque(),
                    MicroHTTPDCallbacks.uriLog, nil,
                    MicroHTTPDCallbacks.notifyConnection, Unmanaged.passUnretained(context).toOpaque(),
                    UInt32(configuration.threadPoolSize),
                    UInt32(configuration.connectionLimit),
                    UInt32(configuration.connectionTimeoutSeconds),
                    configuration.maxHeaderBytes
                )
            }
            guard let started else {
                context.pool.close()
                throw Self.diagnoseStartFailure(address)
            }
            var port = gatehouse_mhd_bound_port(library.getDaemonInfo, started)
            if port == 0 {
                port = Self.listeningPort(of: started, library: library) ?? configuration.port
            }
            running.daemon = started
            running.context = context
            context.connections.start()
            boundPort.withLock { $0 = port }
        }
    }

    /// Stops listening, waits for handlers that are running, and closes every connection.
    ///
    /// Safe to call more than once and on a server that never started. Do not call it from a handler:
    /// it waits for the handler's own thread.
    public func stop() {
        running.withLock { running in
            guard let daemon = running.daemon, let context = running.context else { return }
            // Handlers first: once the pool is closed no connection is left suspended, which
            // MHD_stop_daemon requires (it aborts the process otherwise). Requests completing meanwhile get 503.
            context.pool.close()
            context.library.stopDaemon(daemon)
            context.connections.stop()
            running = Running()
            boundPort.withLock { $0 = 0 }
        }
    }

    /// How many connections are open and how many wait for a complete request, and how many were closed for
    /// waiting too long or to make room (see ``HTTPServerConfiguration/maxWaitingConnections``); zeros when stopped.
    public var connectionCounts: (open: Int, waiting: Int, evicted: Int) {
        running.withLock { running in
            guard let context = running.context else { return (0, 0, 0) }
            let counts = context.connections.counts
            return (counts.open, counts.waiting, context.connections.evictions)
        }
    }

    /// Raises the soft limit on open files towards the hard one, so the connection limit is reachable:
    /// the default soft limit of 1024 would refuse connections (EMFILE) well before a limit of 1024.
    private static func raiseOpenFileLimit(toAtLeast wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// The port from the listening socket itself, for when libmicrohttpd does not report it.
    private static func listeningPort(of daemon: OpaquePointer, library: MicroHTTPD) -> UInt16? {
        let fd = gatehouse_mhd_listen_fd(library.getDaemonInfo, daemon)
        guard fd >= 0 else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard found == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer -> UInt16? in
            switch family {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            default:
                return nil
            }
        }
    }

    /// libmicrohttpd reports only failure; binding the address again tells why.
    private static func diagnoseStartFailure(_ address: SocketAddress) -> HTTPServerError {
        let where_ = address.displayName
        switch address.probeBind() {
        case EADDRINUSE:
            return HTTPServerError(
                kind: .addressInUse,
                message: "Cannot listen on \(where_): the address is already in use. Stop the process listening there or choose another port."
            )
        case EADDRNOTAVAIL:
            return HTTPServerError(
                kind: .addressNotAvailable,
                message: "Cannot listen on \(where_): no network interface of this machine has that address. Use 127.0.0.1, ::1 or an address this machine owns."
            )
        case EACCES, EPERM:
            return HTTPServerError(
                kind: .permissionDenied,
                message: "Cannot listen on \(where_): permission denied. Ports below 1024 need privileges; choose a port of 1024 or more."
            )
        case EAFNOSUPPORT:
            return HTTPServerError(
                kind: .addressNotAvailable,
                message: "Cannot listen on \(where_): this machine does not support \(address.isIPv6 ? "IPv6" : "IPv4"). Use an address of the other family."
            )
        case 0:
            return HTTPServerError(
                kind: .startFailed,
                message: "Cannot start the HTTP server on \(where_): libmicrohttpd refused to start. Check the thread pool size and the open-file limit (ulimit -n)."
            )
        case let code:
            return HTTPServerError(
                kind: .startFailed,
                message: "Cannot listen on \(where_): \(String(cString: strerror(code)))."
            )
        }
    }
}
