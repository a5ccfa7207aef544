import CMicroHTTPD

/// The C callbacks handed to libmicrohttpd. They run on libmicrohttpd's threads, so they are plain
/// `@convention(c)` values of a type (never main-actor code) and reach state only through their context pointers.
enum MicroHTTPDCallbacks {
    /// Starts a request: captures the raw target (before libmicrohttpd splits and decodes it) and
    /// returns the retained per-request state, which libmicrohttpd keeps in `*con_cls`.
    static let uriLog: gatehouse_mhd_uri_log_callback = { _, uri, _ in
        let target = uri.map { String(cString: $0) } ?? ""
        let state = RequestState(target: target)
        state.nulInRequestLine = uri.map { !isFollowedByVersion($0, length: target.utf8.count) } ?? false
        return Unmanaged.passRetained(state).toOpaque()
    }

    /// Whether the request line goes on with its HTTP version right after the target's `length` bytes.
    ///
    /// libmicrohttpd hands over the target as a C string cut at the space before the version (it writes a NUL
    /// there), so a NUL byte inside the target would silently shorten it: `GET /index.html\0/../x HTTP/1.1` would
    /// be served as `/index.html`. The target lies in the connection's read buffer followed by that NUL and
    /// the version, so anything else after the cut means the target held a NUL of its own. The comparison
    /// stops at the first byte that differs, so it never reads past the request line and its line end.
    /// (That layout is libmicrohttpd 0.9.75's; ConsoleHostileRequestTests would show at once if a later
    /// version laid the line out otherwise, as every request would then be refused.)
    static func isFollowedByVersion(_ uri: UnsafePointer<CChar>, length: Int) -> Bool {
        let after = UnsafeRawPointer(uri).advanced(by: length + 1).assumingMemoryBound(to: UInt8.self)
        return "HTTP/".utf8.enumerated().allSatisfy { after[$0.offset] == $0.element }
    }

    /// Releases the per-request state when libmicrohttpd is done with the request, however it ended.
    static let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, conCls, _ in
        if let cls, let connection {
            Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().connections.requestCompleted(connection)
        }
        guard let conCls, let state = conCls.pointee else { return }
        Unmanaged<RequestState>.fromOpaque(state).release()
        conCls.pointee = nil
    }

    /// Tells the ``ConnectionTracker`` of connections opening and closing (the latter before the descriptor is closed).
    static let notifyConnection: MHD_NotifyConnectionCallback = { cls, connection, _, code in
        guard let cls, let connection else { return }
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
        if code.rawValue == 0 { // MHD_CONNECTION_NOTIFY_STARTED
            let address = gatehouse_mhd_client_address(context.library.getConnectionInfo, connection).map(SocketAddress.ipString) ?? ""
            context.connections.opened(connection, fd: gatehouse_mhd_connection_fd(context.library.getConnectionInfo, connection), address: address)
        } else {
            context.connections.closed(connection)
        }
    }

    /// Appends one request header to the `RequestState` passed as `cls`.
    static let collectHeader: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let state = Unmanaged<RequestState>.fromOpaque(cls).takeUnretainedValue()
        state.headers.add(String(cString: key), value.map { String(cString: $0) } ?? "")
        return .YES
    }

    /// The access handler: called with the headers, then once per body chunk, then with no data to answer.
    static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadDataSize, conCls in
        guard let cls, let connection, let uploadDataSize, let conCls else { return .NO }
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

        let state: RequestState
        if let existing = conCls.pointee {
            state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
        } else {
            // The URI log callback always runs first; this keeps the handler safe if it ever does not.
            state = RequestState(target: url.map { String(cString: $0) } ?? "/")
            conCls.pointee = Unmanaged.passRetained(state).toOpaque()
        }
        if state.responded {
            uploadDataSize.pointee = 0
            return .YES
        }

        if !state.headersSeen {
            state.headersSeen = true
            if state.nulInRequestLine {
                context.connections.requestReceived(connection)
                return respond(.text(400, "Bad Request: the request line contains a NUL byte.\n"), state: state, connection: connection, library: context.library)
            }
            state.method = method.map { String(cString: $0) } ?? ""
            _ = context.library.getConnectionValues(connection, .HEADER_KIND, collectHeader, Unmanaged.passUnretained(state).toOpaque())
            if let address = gatehouse_mhd_client_address(context.library.getConnectionInfo, connection) {
                state.remoteAddress = SocketAddress.ipString(address)
            }
            if let declared = state.headers["Content-Length"], let length = UInt64(declared) {
                if length > UInt64(context.maxBodyBytes) {
                    // Answer before reading: libmicrohttpd then skips the body and closes the connection.
                    state.bodyTooLarge = true
                    context.connections.requestReceived(connection)
                    return respond(payloadTooLarge(context), state: state, connection: connection, library: context.library)
                }
                state.body.reserveCapacity(Int(length))
            }
            return .YES
        }

        let size = uploadDataSize.pointee
        if size > 0 {
            if !state.bodyTooLarge {
                if state.body.count + size > context.maxBodyBytes {
                    // A chunked upload (or one longer than declared) ran over: drain it and answer 413.
                    state.bodyTooLarge = true
                    state.body = []
                } else if let uploadData {
                    let chunk = UnsafeRawBufferPointer(start: uploadData, count: size)
                    state.body.append(contentsOf: chunk)
                }
            }
            uploadDataSize.pointee = 0
            return .YES
        }

        if let response = state.pendingResponse {
            // Called again after the handler thread resumed the connection.
            state.pendingResponse = nil
            return respond(response, state: state, connection: connection, library: context.library)
        }
        // The whole request is in: the request deadline no longer runs (see `ConnectionTracker`).
        context.connections.requestReceived(connection)
        if state.bodyTooLarge {
            return respond(payloadTooLarge(context), state: state, connection: connection, library: context.library)
        }
        let (path, query) = state.pathAndQuery()
        let request = HTTPRequest(
            method: state.method,
            path: path,
            query: query,
            headers: state.headers,
            body: state.body,
            remoteAddress: state.remoteAddress
        )
        state.body = []
        state.headers = HTTPHeaders()

        if let inline = context.inlineHandler, let response = inline(request) {
            return respond(response, state: state, connection: connection, library: context.library)
        }

        // Run the handler on the handler pool with the connection suspended, so this thread keeps serving
        // its other connections; the job resumes the connection and libmicrohttpd calls back here.
        let suspended = SuspendedConnection(pointer: connection)
        let handler = context.handler
        let library = context.library
        let socket = gatehouse_mhd_connection_fd(library.getConnectionInfo, connection)
        let job = HandlerPool.Job(run: {
            state.pendingResponse = handler(request)
            library.resumeConnection(suspended.pointer)
        }, shed: { reason in
            state.pendingResponse = busy(reason == .clientGone ? "the client closed the connection" : "the request waited too long for a handler")
            library.resumeConnection(suspended.pointer)
        }, isAbandoned: { ClientSocket.isClosedByPeer(socket) })
        switch context.pool.submit(lane: context.lane?(request) ?? .standard, prepare: { library.suspendConnection(connection) }, job) {
        case .queued:
            return .YES
        case .full:
            return respond(busy("too many requests are waiting for a handler"), state: state, connection: connection, library: context.library)
        case .closed:
            return respond(.text(503, "Service Unavailable: the server is stopping.\n"), state: state, connection: connection, library: context.library)
        }
    }

    /// A 503 for work the server refused or shed, with `Retry-After`.
    private static func busy(_ why: String) -> HTTPResponse {
        var response = HTTPResponse.text(503, "Service Unavailable: \(why); retry shortly.\n")
        response.headers["Retry-After"] = "1"
        return response
    }

    private static func payloadTooLarge(_ context: ServerContext) -> HTTPResponse {
        HTTPResponse.text(413, "Request body too large: the limit is \(context.maxBodyBytes) bytes.\n")
    }

    /// Queues `response` on `connection`; the body is copied (never handed over: libmicrohttpd would free() it).
    private static func respond(_ response: HTTPResponse, state: RequestState, connection: OpaquePointer, library: MicroHTTPD) -> MHD_Result {
        state.responded = true
        var status = response.status
        var made = (100...999).contains(status) ? makeResponse(response, library: library) : nil
        if made == nil {
            status = 500
            made = makeResponse(.text(500, "Internal Server Error: the handler's response had an invalid status or header.\n"), library: library)
        }
        guard let made else { return .NO }
        defer { library.destroyResponse(made) }
        return library.queueResponse(connection, UInt32(status), made)
    }

    /// Whether `name` is an RFC 9110 token: libmicrohttpd 0.9.75 does not check, and a bad name breaks the response.
    static func isValidFieldName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }

    /// Whether `value` is free of control characters other than tab: CR or LF in a value would let it inject headers.
    static func isValidFieldValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }

    /// A libmicrohttpd response for `response`, or `nil` if a header is invalid (CR/LF in a value, a space in a name, …).
    private static func makeResponse(_ response: HTTPResponse, library: MicroHTTPD) -> OpaquePointer? {
        let created = response.body.withUnsafeBytes { bytes in
            library.createResponseFromBuffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let created else { return nil }
        for (name, value) in response.headers {
            // libmicrohttpd frames the body itself; a second Content-Length would corrupt the response.
            if HTTPHeaders.namesMatch(name, "Content-Length") || HTTPHeaders.namesMatch(name, "Transfer-Encoding") {
                continue
            }
            guard isValidFieldName(name), isValidFieldValue(value),
                  library.addResponseHeader(created, name, value) == MHD_Result.YES else {
                library.destroyResponse(created)
                return nil
            }
        }
        return created
    }
}
