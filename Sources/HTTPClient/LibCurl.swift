import CLibCurl
import Foundation

/// libcurl, loaded with `dlopen` the first time Gatehouse makes an HTTP call (Apple, D1) rather than linked: no
/// other command loads it (or the TLS library behind it) at start, and the static build needs no libcurl-dev — as
/// libpq and libmicrohttpd are loaded. TLS uses the system's CA store, as curl does.
struct LibCurl: @unchecked Sendable {
    static let sonames = ["libcurl.so.4", "libcurl-gnutls.so.4"]
    static let package = "libcurl4"

    let easyInit: gatehouse_curl_easy_init_fn
    let easyCleanup: gatehouse_curl_easy_cleanup_fn
    let easyPerform: gatehouse_curl_easy_perform_fn
    let easyStrerror: gatehouse_curl_easy_strerror_fn
    let easySetopt: gatehouse_curl_easy_setopt_fn
    let easyGetinfo: gatehouse_curl_easy_getinfo_fn
    let slistAppend: gatehouse_curl_slist_append_fn
    let slistFreeAll: gatehouse_curl_slist_free_all_fn

    /// Why libcurl cannot be used: one line naming the package to install.
    struct Missing: Error, CustomStringConvertible { let description: String }

    /// The library, loaded and initialised once (curl_global_init is not thread-safe: a `static let` runs once).
    private static let loaded = Result { () throws(Missing) in try LibCurl() }

    static func load() throws(Missing) -> LibCurl { try loaded.get() }

    private init() throws(Missing) {
        var handle: UnsafeMutableRawPointer?
        var errors: [String] = []
        for name in Self.sonames {
            handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)
            if handle != nil { break }
            errors.append(dlerror().map { String(cString: $0) } ?? name)
        }
        guard let handle else {
            throw Missing(description: "Gatehouse's HTTP calls (Apple, Cloudflare D1) need libcurl (\(Self.sonames[0])), which could not be loaded: \(errors.first ?? "")); install it: apt-get install \(Self.package)")
        }
        func symbol<F>(_ name: String, as type: F.Type) throws(Missing) -> F {
            guard let address = dlsym(handle, name) else {
                throw Missing(description: "the libcurl found lacks \(name); install the current \(Self.package)")
            }
            return unsafeBitCast(address, to: type)
        }
        let globalInit = try symbol("curl_global_init", as: gatehouse_curl_global_init_fn.self)
        easyInit = try symbol("curl_easy_init", as: gatehouse_curl_easy_init_fn.self)
        easyCleanup = try symbol("curl_easy_cleanup", as: gatehouse_curl_easy_cleanup_fn.self)
        easyPerform = try symbol("curl_easy_perform", as: gatehouse_curl_easy_perform_fn.self)
        easyStrerror = try symbol("curl_easy_strerror", as: gatehouse_curl_easy_strerror_fn.self)
        easySetopt = try symbol("curl_easy_setopt", as: gatehouse_curl_easy_setopt_fn.self)
        easyGetinfo = try symbol("curl_easy_getinfo", as: gatehouse_curl_easy_getinfo_fn.self)
        slistAppend = try symbol("curl_slist_append", as: gatehouse_curl_slist_append_fn.self)
        slistFreeAll = try symbol("curl_slist_free_all", as: gatehouse_curl_slist_free_all_fn.self)
        _ = globalInit(Int(GH_CURL_GLOBAL_DEFAULT))
    }

    /// The bytes of an answer as they arrive, capped: a larger answer stops the transfer.
    final class Sink {
        var bytes: [UInt8] = []
        var headers: [String: String] = [:]
        let limit: Int
        init(limit: Int) { self.limit = limit }
    }

    /// Body callback: appends to the `Sink`; a short count (past the cap) makes curl stop with a write error.
    static let write: gatehouse_curl_write_callback = { data, size, count, context in
        guard let data, let context else { return 0 }
        let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
        let total = size * count
        guard sink.bytes.count + total <= sink.limit else { return 0 }
        // The whole body in one allocation when its length is announced (within the cap), not grown by doubling.
        if sink.bytes.capacity == 0, let length = sink.headers["content-length"].flatMap({ Int($0) }), length > total {
            sink.bytes.reserveCapacity(min(length, sink.limit))
        }
        data.withMemoryRebound(to: UInt8.self, capacity: total) { sink.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: total)) }
        return total
    }

    /// Header callback: one header line per call, kept by lowercased name (a new status line starts over).
    static let header: gatehouse_curl_write_callback = { data, size, count, context in
        guard let data, let context else { return 0 }
        let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
        let total = size * count
        let line = data.withMemoryRebound(to: UInt8.self, capacity: total) { String(decoding: UnsafeBufferPointer(start: $0, count: total), as: UTF8.self) }
        if line.hasPrefix("HTTP/") { sink.headers = [:] }
        if let colon = line.firstIndex(of: ":"), sink.headers.count < 100 {
            sink.headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return total
    }
}
