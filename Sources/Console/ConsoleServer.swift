import Foundation
import Gatehouse
import HTTPServer
import Locking
import WebAuthn

/// The console: static files from `Public/` and the JSON API under `/api`, over the Gatehouse
/// service layer, behind the console's own request checks.
///
///     let console = try ConsoleServer(options: .init(storePath: "auth.sqlite", publicDirectory: "Public"))
///     try console.start()
///     print(console.url)
public final class ConsoleServer: Sendable {
    /// How to run the console.
    public struct Options: Sendable {
        public var storePath: String
        public var configurationPath: String?
        public var publicDirectory: String
        public var address: String
        public var port: UInt16
        /// Listening on a non-loopback address needs this, deliberately.
        public var allowRemote: Bool
        public var threads: Int
        /// The most connections one client address may hold (0: no limit); see `HTTPServerConfiguration`. Above the
        /// server's 32: on loopback the browser, scripts and every other local client share 127.0.0.1.
        public var maxConnectionsPerAddress: Int
        /// Writes one line per request (method, path without query, status, time) to stderr; see ``RequestLogLine``.
        public var logRequests: Bool
        /// Token lifetimes (`GATEHOUSE_ACCESS_TOKEN_TTL` shortens the access token's), login throttle, clock.
        public var auth: AuthSettings
        /// The console's public origin (`serve --origin`), e.g. behind a TLS proxy: the passkeys' relying party, and
        /// accepted in `Host` and `Origin`. Nil: `http://localhost:PORT` when listening on loopback (browsers refuse
        /// WebAuthn on an IP address), else no passkeys.
        public var origin: String?

        public init(storePath: String, configurationPath: String? = nil, publicDirectory: String, address: String = "127.0.0.1",
                    port: UInt16 = 8787, allowRemote: Bool = false, threads: Int = 4, logRequests: Bool = true,
                    auth: AuthSettings = AuthSettings(), maxConnectionsPerAddress: Int = 64, origin: String? = nil) {
            self.storePath = storePath
            self.configurationPath = configurationPath
            self.publicDirectory = publicDirectory
            self.address = address
            self.port = port
            self.allowRemote = allowRemote
            self.threads = threads
            self.maxConnectionsPerAddress = maxConnectionsPerAddress
            self.logRequests = logRequests
            self.auth = auth
            self.origin = origin
        }
    }

    private let options: Options
    private let server: HTTPServer
    /// What the request handler needs (internal: route tests call `ConsoleServer.handle` with it in-process).
    let state: State

    /// What the request handler needs; the guard is set once the port is known.
    final class State: Sendable {
        let stores: StorePool
        /// One store per connection thread, for inline routes: a connection thread must never wait for a
        /// store that a slow handler on the pool holds.
        let inlineStores: StorePool
        let files: StaticFiles
        let router: Router
        let logRequests: Bool
        /// Read per request; set again at start, when the port that the default relying party's origin names is known.
        private let authValue: Locked<AuthSettings>
        var auth: AuthSettings { authValue.value }
        /// Whether the store file is still the one the console opened.
        let storeFile: StoreFileWatch
        /// Routes registered `inline` run on the handler pool too: on a database server, a lookup waits a round
        /// trip for the server, and a connection thread waiting for it serves none of its other connections
        /// (measured on Postgres: 1,342 → 1,897 req/s, p99 57 → 39 ms, for `GET /api/users/{id}` at 32 connections).
        let inlineOnPool: Bool
        private let guardValue = Locked<RequestGuard?>(nil)

        init(stores: StorePool, inlineStores: StorePool, files: StaticFiles, router: Router, logRequests: Bool, auth: AuthSettings,
             storeFile: StoreFileWatch, inlineOnPool: Bool = false) {
            self.storeFile = storeFile
            self.inlineOnPool = inlineOnPool
            self.stores = stores
            self.inlineStores = inlineStores
            self.files = files
            self.router = router
            self.logRequests = logRequests
            self.authValue = Locked(auth)
        }

        /// The relying party passkeys are registered and checked with, once the console's origin is known.
        func setRelyingParty(_ relyingParty: RelyingParty) {
            authValue.withLock { $0.relyingParty = relyingParty }
        }

        var requestGuard: RequestGuard? {
            get { guardValue.value }
            set { guardValue.withLock { $0 = newValue } }
        }
    }

    /// Opens the store and loads the static files; refuses a non-loopback address without `allowRemote`.
    public init(options: Options) throws {
        guard options.allowRemote || Self.isLoopback(options.address) else {
            throw GatehouseError.invalid("\(options.address) is not a loopback address; the console has no TLS and is meant for this machine only",
                                         fix: "listen on 127.0.0.1 (the default), or pass --allow-remote if you front it with something that adds TLS")
        }
        self.options = options
        var auth = options.auth
        if let origin = options.origin {
            do {
                auth.relyingParty = try RelyingParty(origin: origin, name: Self.relyingPartyName)
            } catch {
                throw GatehouseError.invalid("the console's origin \(error)", fix: "give --origin as https://HOST[:PORT], the address browsers open the console at")
            }
        }
        // libmicrohttpd's threads only read sockets and answer cheap requests: one per core is enough, and more
        // would only take turns on the cores. Slow work gets `threads` handler threads of its own.
        let connectionThreads = max(1, min(options.threads, ProcessInfo.processInfo.activeProcessorCount))
        // A file gives each lane connections of its own. A server's connections are shared with Better Auth's: there
        // both lanes draw from one pool of one connection per handler thread plus one, which the console checks at
        // start that the server (and the role's limit) can give.
        let serverStore = try StoreLocation(options.storePath).connectionsAreShared
        let stores = try StorePool(path: options.storePath, configurationPath: options.configurationPath,
                                   size: options.threads + (serverStore ? 1 : 0), timeouts: .console)
        let storeFile = StoreFileWatch(path: options.storePath)
        if serverStore { try stores.requireServerConnections(options.threads + 1, fix: "start the console with fewer handler threads") }
        let inlineStores = serverStore ? stores
            : try StorePool(path: options.storePath, configurationPath: options.configurationPath, size: connectionThreads, timeouts: .console)
        let files: StaticFiles
        do { files = try StaticFiles(directory: options.publicDirectory) } catch {
            throw GatehouseError("cannot read the console's files in \(options.publicDirectory)", fix: "set GATEHOUSE_PUBLIC to the Public/ folder")
        }
        var router = Router()
        APIRoutes.register(on: &router)
        let state = State(stores: stores, inlineStores: inlineStores, files: files, router: router, logRequests: options.logRequests,
                          auth: auth, storeFile: storeFile, inlineOnPool: serverStore)
        self.state = state
        let configuration = HTTPServerConfiguration(address: options.address, port: options.port, threadPoolSize: connectionThreads,
                                                    handlerThreadCount: options.threads, connectionLimit: Self.connectionLimit,
                                                    maxConnectionsPerAddress: options.maxConnectionsPerAddress,
                                                    connectionTimeoutSeconds: 30, requestTimeoutSeconds: Self.requestTimeoutSeconds,
                                                    maxWaitingConnections: Self.maxWaitingConnections,
                                                    maxBodyBytes: 1 << 20, maxHeaderBytes: Self.maxHeaderBytes,
                                                    maxQueuedRequests: Self.maxQueuedRequests, maxQueueWaitSeconds: Self.maxQueueWaitSeconds)
        server = HTTPServer(configuration: configuration, inline: { request in ConsoleServer.handleInline(request, state: state) },
                            lane: { request in ConsoleServer.lane(of: request, state: state) }) { request in
            ConsoleServer.handle(request, state: state)
        }
    }

    /// Starts listening.
    public func start() throws {
        do { try server.start() } catch let error as HTTPServerError {
            throw GatehouseError(error.message, code: .listenFailed)
        }
        // Browsers refuse passkeys on an IP address: on loopback the console's origin is localhost at its port.
        if state.auth.relyingParty == nil, Self.isLoopback(options.address),
           let relyingParty = try? RelyingParty(origin: "http://localhost:\(server.port)", name: Self.relyingPartyName) {
            state.setRelyingParty(relyingParty)
        }
        state.requestGuard = RequestGuard(address: options.address, port: server.port, allowRemote: options.allowRemote,
                                          publicOrigin: options.origin == nil ? nil : state.auth.relyingParty?.origin)
    }

    /// The name a browser's passkey prompt shows for the console.
    static let relyingPartyName = "Gatehouse"

    /// The passkeys' relying party: its RP id and origin (nil: passkeys are off, the console has no usable origin).
    public var relyingParty: RelyingParty? { state.auth.relyingParty }

    /// The command that creates the first admin, when the store has none (nobody can log in yet); nil when it has one.
    public func firstAdminCommand() throws -> String? {
        try state.stores.withStore { store in
            try AdminDirectory(store: store).count() > 0 ? nil : FirstAdmin.setupCommand(store: store.location)
        }
    }

    /// Stops listening; waits for requests in flight.
    public func stop() { server.stop() }

    /// The bound port.
    public var port: UInt16 { server.port }

    /// Open connections, those waiting for a request head, and those closed for waiting too long or to make room.
    public var connectionCounts: (open: Int, waiting: Int, evicted: Int) { server.connectionCounts }

    /// The URL to open.
    public var url: String {
        let host = options.address.contains(":") ? "[\(options.address)]" : options.address
        return "http://\(host):\(port)/"
    }

    static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address == "localhost" || address.hasPrefix("127.")
    }

    /// libmicrohttpd's memory per connection, which bounds a request's headers. It zeroes all of it before each
    /// request on a kept-alive connection, so a bigger pool costs time on every request: 16 KiB holds the
    /// console's headers (a bearer token, no cookies) many times over.
    static let maxHeaderBytes = 16 * 1024

    /// Connections open at once. Slow or silent clients cannot fill them: at most `maxWaitingConnections`
    /// may wait for a complete request (head and body), each for at most `requestTimeoutSeconds`, and one address holds
    /// at most `Options.maxConnectionsPerAddress` (see `HTTPServer`'s `ConnectionTracker`); the rest of the limit stays
    /// for requests that are running.
    static let connectionLimit = 1024
    /// Three quarters of the limit: a quarter always stays for requests that are running. Closing a waiting connection
    /// to make room is only worth it when room runs short: a slow client closed reconnects at once, and hundreds of
    /// such reconnections a second (accepted, tracked, shut down, each on a connection thread) are what slow clients
    /// cost the fast ones. Held, they cost nothing until the request deadline closes them.
    static let maxWaitingConnections = 768
    static let requestTimeoutSeconds = 10

    /// Requests each handler lane holds waiting: past that the console answers 503 at once, so a flood (a viewer
    /// polling health from 300 tabs) becomes refusals, not a backlog an admin's login would wait behind.
    static let maxQueuedRequests = 64
    /// A request that waited this long for a handler is answered 503 instead of run: its client has most likely gone.
    static let maxQueueWaitSeconds = 15.0

    /// The handler pool's lane for a request that was not answered inline (see `RouteCost`).
    static func lane(of request: HTTPRequest, state: State) -> HTTPServer.Lane {
        guard case .success(let (route, _)) = state.router.match(method: request.method, path: request.path) else { return .standard }
        return route.lane
    }

    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
    ]

    /// Answers on the connection's thread what never waits: guard refusals, static files, 404/405, a missing
    /// token, and routes registered `inline`; nil sends the request to the handler pool.
    static func handleInline(_ request: HTTPRequest, state: State) -> HTTPResponse? {
        respond(to: request, state: state, inline: true)
    }

    /// Answers any request; runs on the handler pool.
    static func handle(_ request: HTTPRequest, state: State) -> HTTPResponse {
        respond(to: request, state: state, inline: false)
            ?? JSONBody.error(APIError(status: 500, code: "internal", message: "internal error"))
    }

    /// The response, or nil when `inline` and the request needs the handler pool.
    private static func respond(to request: HTTPRequest, state: State, inline: Bool) -> HTTPResponse? {
        let started = DispatchTime.now().uptimeNanoseconds
        let requestID = String(started % 0xFFFF_FFFF, radix: 36)
        var response: HTTPResponse
        let isAPI = request.path == "/api" || request.path.hasPrefix("/api/")
        let requestGuard = state.requestGuard
        if let requestGuard, let error = requestGuard.check(request) {
            response = JSONBody.error(error)
        } else if requestGuard == nil {
            response = JSONBody.error(APIError(status: 503, code: "starting", message: "the console is starting"))
        } else if isAPI {
            guard let answered = api(request, requestID: requestID, state: state, inline: inline) else { return nil }
            response = answered
        } else if request.method != "GET" && request.method != "HEAD" {
            response = JSONBody.error(APIError(status: 405, code: "method_not_allowed", message: "static files are read-only"))
        } else if let file = state.files.file(for: request.path) {
            response = HTTPResponse(status: 200, headers: ["Content-Type": file.contentType, "Cache-Control": "no-cache"], body: file.body)
        } else {
            response = HTTPResponse.text(404, "not found\n")
        }
        if isAPI { response.headers["Cache-Control"] = "no-store" }
        for (name, value) in securityHeaders { response.headers[name] = value }
        response.headers["X-Request-Id"] = requestID
        if state.logRequests {
            let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
            let line = RequestLogLine.line(at: Timestamp.now(), requestID: requestID, method: request.method, path: request.path,
                                           status: response.status, milliseconds: ms)
            FileHandle.standardError.write(Data(line.utf8))
        }
        return response
    }

    /// Whether a request with `method` may change the store.
    static func writes(_ method: String) -> Bool {
        method != "GET" && method != "HEAD" && method != "OPTIONS"
    }

    /// The API response, or nil when `inline` and the route must run on the handler pool.
    static func api(_ request: HTTPRequest, requestID: String, state: State, inline: Bool = false) -> HTTPResponse? {
        switch state.router.match(method: request.method, path: request.path) {
        case .failure(let error):
            return JSONBody.error(error)
        case .success(let (route, parameters)):
            // A write into a store file that was removed or replaced would be acknowledged and lost.
            if Self.writes(request.method) || request.path == "/api/health", let problem = state.storeFile.problem() {
                return JSONBody.error(problem)
            }
            if inline && (!route.inline || state.inlineOnPool) {
                // A request without a token is refused the same way wherever it runs; it needs no store.
                if case .role = route.access, AuthMiddleware.bearerToken(request) == nil {
                    return JSONBody.error(APIError.unauthenticated(.invalid))
                }
                return nil
            }
            let signedIn = SignedInFlag()
            do {
                let stores = inline ? state.inlineStores : state.stores
                var context = RequestContext(request: request, requestID: requestID, parameters: parameters,
                                             stores: RequestStores(pool: stores, check: nil, deadline: stores.requestDeadline(since: request.receivedAt)), auth: state.auth, now: state.auth.clock(), session: nil)
                // Approving sends the stored request through this router again.
                if request.path.hasPrefix("/api/approvals/") && request.path.hasSuffix("/approve") {
                    context.replay = { request, run, context in try ApprovalGate.run(request, run, context, router: state.router) }
                }
                // A cheap read sends its token check along with its first snapshot: one round trip to a server store.
                let deferring = route.inline && request.method == "GET"
                return try AuthMiddleware.handle(context, access: route.access, factor: route.factor, deferring: deferring) { context in
                    signedIn.context.withLock { $0 = context }
                    try JSONBody.requireJSONIfPresent(context.request)
                    if let action = route.approval, let held = try ApprovalGate.hold(action, context) { return held }
                    return try route.handler(context)
                }
            } catch {
                var apiError = APIError.from(error)
                if apiError.status >= 500 {
                    // The detail stays in the server's log; the client gets the safe message and the request id.
                    let detail = OperatorText.visible(String(String(describing: error).prefix(500)), keepLineBreaks: false)
                    FileHandle.standardError.write(Data("\(requestID) error: \(detail)\n".utf8))
                    if !signedIn.value {
                        // Service messages name the store's path and state: nothing for a caller who has not signed in.
                        apiError = APIError(status: apiError.status, code: apiError.code, message: "the console could not answer this request",
                                            fix: "try again later; the console's log has the details under request id \(requestID)",
                                            headers: apiError.headers)
                    }
                }
                return JSONBody.error(apiError)
            }
        }
    }
}

/// Whether a request got past authentication as a signed-in admin; set by the route's wrapper, read on the same thread.
final class SignedInFlag: Sendable {
    /// The context the handler ran with: signed in once its token was found good.
    let context = Locked<RequestContext?>(nil)
    var value: Bool { context.value?.isSignedIn ?? false }
}
