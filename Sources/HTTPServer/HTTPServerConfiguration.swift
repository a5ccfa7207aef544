/// How an ``HTTPServer`` listens and what it accepts.
///
/// The defaults suit a console on the local machine: loopback only, a free port, small limits.
///
/// ```swift
/// var configuration = HTTPServerConfiguration(port: 8080)
/// configuration.maxBodyBytes = 64 * 1024
/// ```
public struct HTTPServerConfiguration: Sendable {
    /// The IP address to bind: an IPv4 (`"127.0.0.1"`, `"0.0.0.0"`) or IPv6 (`"::1"`, `"[::1]"`) literal.
    public var address: String
    /// The TCP port; 0 lets the system pick a free one, read back from ``HTTPServer/port`` after `start()`.
    public var port: UInt16
    /// How many libmicrohttpd threads serve connections (and run the inline handler); about one per core.
    public var threadPoolSize: Int
    /// How many threads run handlers: at most this many handlers run at once, and a slow one holds only its
    /// handler thread. Defaults to ``threadPoolSize``.
    public var handlerThreadCount: Int
    /// The most connections open at once (shared out among the threads); more are refused.
    public var connectionLimit: Int
    /// The most connections one client address may hold open; a new one beyond closes that address's longest-waiting
    /// connection (one whose request is not yet complete), or is closed itself when all of them are running requests.
    /// 0 means no limit per address. On a loopback console every client, the browser included, is 127.0.0.1: a
    /// valid request is complete at once, so a flood of slow connections from the same address never closes it.
    public var maxConnectionsPerAddress: Int
    /// Seconds a connection may stay idle (nothing received or sent) before it is closed; 0 means never.
    public var connectionTimeoutSeconds: Int
    /// Seconds a connection may take to send a complete request, head and body, counted from when it opened or its
    /// previous response was sent, however slowly bytes trickle in; then it is closed. 0 means no limit. See
    /// `ConnectionTracker`.
    public var requestTimeoutSeconds: Int
    /// The most connections that may wait for a complete request at once; each connection beyond closes the one
    /// that has waited longest. Keep it below ``connectionLimit``, so that room stays for requests that are running;
    /// the lower it is, the sooner a flood of slow clients is closed, and the more often they reconnect (each
    /// reconnection costs a connection thread an accept and a close).
    public var maxWaitingConnections: Int
    /// The largest request body accepted; larger ones are answered 413 without calling the handler.
    public var maxBodyBytes: Int
    /// Memory per connection for the request line, headers and read buffer; requests whose headers do not fit
    /// are refused by libmicrohttpd itself.
    public var maxHeaderBytes: Int
    /// The most requests each lane of the handler pool holds waiting for a handler thread; one more is answered
    /// 503 with `Retry-After` at once.
    public var maxQueuedRequests: Int
    /// Seconds a request may wait for a handler thread; one that waited longer is answered 503 instead of run (its
    /// client has most likely given up).
    public var maxQueueWaitSeconds: Double

    /// A configuration; every argument has a default.
    public init(
        address: String = "127.0.0.1",
        port: UInt16 = 0,
        threadPoolSize: Int = 2,
        handlerThreadCount: Int? = nil,
        connectionLimit: Int = 256,
        maxConnectionsPerAddress: Int = 32,
        connectionTimeoutSeconds: Int = 30,
        requestTimeoutSeconds: Int = 10,
        maxWaitingConnections: Int? = nil,
        maxBodyBytes: Int = 1 << 20,
        maxHeaderBytes: Int = 64 * 1024,
        maxQueuedRequests: Int = 256,
        maxQueueWaitSeconds: Double = 20
    ) {
        self.address = address
        self.port = port
        self.threadPoolSize = threadPoolSize
        self.handlerThreadCount = handlerThreadCount ?? threadPoolSize
        self.connectionLimit = connectionLimit
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.maxWaitingConnections = maxWaitingConnections ?? max(1, connectionLimit / (2 * max(threadPoolSize, 1)))
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxQueuedRequests = maxQueuedRequests
        self.maxQueueWaitSeconds = maxQueueWaitSeconds
    }

    /// Checks the numbers before they reach libmicrohttpd, which would only say "could not start".
    func validate() throws(HTTPServerError) {
        func invalid(_ message: String) -> HTTPServerError {
            HTTPServerError(kind: .invalidConfiguration, message: message)
        }
        guard (1...256).contains(threadPoolSize) else {
            throw invalid("threadPoolSize is \(threadPoolSize); use 1 to 256 threads")
        }
        guard (1...256).contains(handlerThreadCount) else {
            throw invalid("handlerThreadCount is \(handlerThreadCount); use 1 to 256 threads")
        }
        guard connectionLimit >= threadPoolSize, connectionLimit <= Int(UInt32.max) else {
            throw invalid("connectionLimit is \(connectionLimit); use at least one connection per thread (\(threadPoolSize))")
        }
        guard connectionTimeoutSeconds >= 0, connectionTimeoutSeconds <= Int(UInt32.max) else {
            throw invalid("connectionTimeoutSeconds is \(connectionTimeoutSeconds); use 0 (never) or more seconds")
        }
        guard requestTimeoutSeconds >= 0 else {
            throw invalid("requestTimeoutSeconds is \(requestTimeoutSeconds); use 0 (no limit) or more seconds")
        }
        guard maxConnectionsPerAddress >= 0 else {
            throw invalid("maxConnectionsPerAddress is \(maxConnectionsPerAddress); use 0 (no limit) or more connections")
        }
        guard maxWaitingConnections >= 1, maxWaitingConnections <= connectionLimit else {
            throw invalid("maxWaitingConnections is \(maxWaitingConnections); use 1 to connectionLimit (\(connectionLimit))")
        }
        guard maxBodyBytes >= 0 else {
            throw invalid("maxBodyBytes is \(maxBodyBytes); use 0 or more bytes")
        }
        guard maxHeaderBytes >= 4096 else {
            throw invalid("maxHeaderBytes is \(maxHeaderBytes); use at least 4096 bytes")
        }
        guard maxQueuedRequests >= 1 else {
            throw invalid("maxQueuedRequests is \(maxQueuedRequests); use at least 1")
        }
        guard maxQueueWaitSeconds > 0, maxQueueWaitSeconds <= 86_400 else {
            throw invalid("maxQueueWaitSeconds is \(maxQueueWaitSeconds); use more than 0 and at most a day")
        }
    }
}
