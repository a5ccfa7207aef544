import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// libmicrohttpd, loaded with `dlopen` the first time a server starts rather than linked.
///
/// Linking it would make every `gatehouse` command pay at start for loading libmicrohttpd, GnuTLS and
/// their dependencies (about 3 ms), while only `gatehouse serve` uses it. The functions HTTPServer calls
/// are looked up once here; the ones Swift can call directly are typed after their declarations in
/// microhttpd.h (see CMicroHTTPD's shim.h), the variadic ones are called through the shim's wrappers.
/// Fast path kept for ops/bench's cold-start row (`gatehouse --version` < 20 ms).
///
///     let library = try MicroHTTPD.load()
///     library.stopDaemon(daemon)
///
/// A ``ServerContext`` carries the loaded library to libmicrohttpd's callbacks.
struct MicroHTTPD: @unchecked Sendable { // function pointers, looked up once and never changed
    /// The library's file name (its ABI version 12 is what microhttpd.h 0.9.x declares).
    static let soname = "libmicrohttpd.so.12"
    /// The Debian package that installs it.
    static let package = "libmicrohttpd12"

    let startDaemon: UnsafeRawPointer
    let getDaemonInfo: UnsafeRawPointer
    let getConnectionInfo: UnsafeRawPointer
    let stopDaemon: gatehouse_mhd_stop_daemon_fn
    let getConnectionValues: gatehouse_mhd_get_connection_values_fn
    let queueResponse: gatehouse_mhd_queue_response_fn
    let suspendConnection: gatehouse_mhd_suspend_connection_fn
    let resumeConnection: gatehouse_mhd_resume_connection_fn
    let createResponseFromBuffer: gatehouse_mhd_create_response_from_buffer_fn
    let addResponseHeader: gatehouse_mhd_add_response_header_fn
    let destroyResponse: gatehouse_mhd_destroy_response_fn

    /// The library, loaded on first use and kept for the life of the process; or why it cannot be.
    private static let loaded = Result { () throws(HTTPServerError) in try MicroHTTPD(soname: soname) }

    /// The loaded library. Throws an error naming the library and the package to install when it is missing.
    static func load() throws(HTTPServerError) -> MicroHTTPD { try loaded.get() }

    /// Opens `soname` and looks up every function HTTPServer calls.
    init(soname: String) throws(HTTPServerError) {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            throw HTTPServerError(kind: .libraryUnavailable, message: "The HTTP server needs libmicrohttpd (\(soname)), which could not be loaded: "
                                  + Self.lastError() + ". Install it: apt-get install \(Self.package).")
        }
        func symbol(_ name: String) throws(HTTPServerError) -> UnsafeMutableRawPointer {
            guard let address = dlsym(handle, name) else {
                let error = Self.lastError()
                dlclose(handle)
                throw HTTPServerError(kind: .libraryUnavailable, message: "The HTTP server needs libmicrohttpd 0.9.75 or later; \(soname) "
                                      + "lacks \(name) (\(error)). Install the current \(Self.package).")
            }
            return address
        }
        startDaemon = UnsafeRawPointer(try symbol("MHD_start_daemon"))
        getDaemonInfo = UnsafeRawPointer(try symbol("MHD_get_daemon_info"))
        getConnectionInfo = UnsafeRawPointer(try symbol("MHD_get_connection_info"))
        stopDaemon = unsafeBitCast(try symbol("MHD_stop_daemon"), to: gatehouse_mhd_stop_daemon_fn.self)
        getConnectionValues = unsafeBitCast(try symbol("MHD_get_connection_values"), to: gatehouse_mhd_get_connection_values_fn.self)
        queueResponse = unsafeBitCast(try symbol("MHD_queue_response"), to: gatehouse_mhd_queue_response_fn.self)
        suspendConnection = unsafeBitCast(try symbol("MHD_suspend_connection"), to: gatehouse_mhd_suspend_connection_fn.self)
        resumeConnection = unsafeBitCast(try symbol("MHD_resume_connection"), to: gatehouse_mhd_resume_connection_fn.self)
        createResponseFromBuffer = unsafeBitCast(try symbol("MHD_create_response_from_buffer"), to: gatehouse_mhd_create_response_from_buffer_fn.self)
        addResponseHeader = unsafeBitCast(try symbol("MHD_add_response_header"), to: gatehouse_mhd_add_response_header_fn.self)
        destroyResponse = unsafeBitCast(try symbol("MHD_destroy_response"), to: gatehouse_mhd_destroy_response_fn.self)
    }

    private static func lastError() -> String { dlerror().map { String(cString: $0) } ?? "unknown error" }
}
