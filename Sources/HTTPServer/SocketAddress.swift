#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 socket address parsed from a literal, for binding and for error messages.
struct SocketAddress {
    private enum Storage {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)
    }

    private let storage: Storage
    /// The address as the user wrote it, without brackets.
    let host: String
    let port: UInt16

    var isIPv6: Bool {
        if case .v6 = storage { return true }
        return false
    }

    /// `host:port`, with brackets around an IPv6 host.
    var displayName: String {
        isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Parses `address` (IPv4 or IPv6 literal, IPv6 optionally in brackets); `nil` if it is neither.
    init?(address: String, port: UInt16) {
        var host = address
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        }
        self.host = host
        self.port = port
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            storage = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            storage = .v6(v6)
            return
        }
        return nil
    }

    /// Calls `body` with a pointer to the `sockaddr` and its length; the pointer must not escape.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        switch storage {
        case .v4(var address):
            return try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .v6(var address):
            return try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }

    /// The IP address in `address` as text (`"127.0.0.1"`, `"::1"`), or `""` for another family.
    static func ipString(_ address: UnsafePointer<sockaddr>) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { buffer in
            guard let base = buffer.baseAddress else { return "" }
            let written: UnsafePointer<CChar>?
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                written = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    withUnsafePointer(to: v4.pointee.sin_addr) {
                        inet_ntop(AF_INET, $0, base, socklen_t(buffer.count))
                    }
                }
            case AF_INET6:
                written = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    withUnsafePointer(to: v6.pointee.sin6_addr) {
                        inet_ntop(AF_INET6, $0, base, socklen_t(buffer.count))
                    }
                }
            default:
                written = nil
            }
            return written.map { String(cString: $0) } ?? ""
        }
    }

    /// Binds a throwaway socket the way libmicrohttpd does, to learn why libmicrohttpd could not start.
    ///
    /// Returns the `errno` of the failed step, or 0 if binding and listening work now.
    func probeBind() -> Int32 {
        #if canImport(Glibc)
        let stream = Int32(SOCK_STREAM.rawValue)
        #else
        let stream = SOCK_STREAM
        #endif
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, stream, 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if isIPv6 {
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = withSockAddr { bind(fd, $0, $1) }
        guard bound == 0 else { return errno }
        guard listen(fd, 1) == 0 else { return errno }
        return 0
    }
}
