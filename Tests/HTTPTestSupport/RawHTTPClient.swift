import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a raw client operation failed.
public struct RawClientError: Error, CustomStringConvertible {
    public let operation: String
    public let code: Int32
    public var description: String { "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// A parsed HTTP/1.1 response as it came off the wire.
public struct RawResponse {
    public var status: Int
    public var reason: String
    /// Header fields in the order received, names as sent.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, reason: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public func count(of name: String) -> Int {
        headers.filter { $0.name.lowercased() == name.lowercased() }.count
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// A tiny blocking HTTP client over a POSIX socket, so tests send exactly the bytes they mean to.
public final class RawHTTPClient {
    public let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to `host` (an IPv4 or IPv6 literal) on `port`.
    public init(port: UInt16, host: String = "127.0.0.1") throws {
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let isIPv6 = inet_pton(AF_INET, host, &v4.sin_addr) != 1
        if isIPv6 {
            guard inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 else { throw RawClientError(operation: "inet_pton \(host)", code: EINVAL) }
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
        } else {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
        }
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawClientError(operation: "socket", code: errno) }
        let result: Int32
        if isIPv6 {
            result = withUnsafePointer(to: &v6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            result = withUnsafePointer(to: &v4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RawClientError(operation: "connect to \(host):\(port)", code: code)
        }
        self.fd = fd
    }

    deinit {
        Glibc.close(fd)
    }

    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                throw RawClientError(operation: "send", code: errno)
            }
            offset += sent
        }
    }

    /// Reads more bytes into the buffer; returns false on EOF, throws on timeout or error.
    private func fill(timeout: TimeInterval) throws -> Bool {
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - floor(timeout)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let received = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if received > 0 {
                buffer.append(contentsOf: chunk[0..<received])
                return true
            }
            if received == 0 { return false }
            if errno == EINTR { continue }
            throw RawClientError(operation: "recv", code: errno)
        }
    }

    /// Reads one response; `hasBody: false` for a HEAD request (the Content-Length describes a body not sent).
    public func readResponse(hasBody: Bool = true, timeout: TimeInterval = 10) throws -> RawResponse {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        while true {
            if let end = firstRange(of: separator, in: buffer) {
                headerEnd = end
                break
            }
            guard try fill(timeout: timeout) else { break }
        }
        guard let headerEnd else {
            throw RawClientError(operation: "read response headers (got \(buffer.count) bytes)", code: ECONNRESET)
        }
        let head = String(decoding: buffer[0..<headerEnd], as: UTF8.self)
        buffer.removeFirst(headerEnd + separator.count)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2).map(String.init)
        var response = RawResponse(
            status: statusLine.count > 1 ? Int(statusLine[1]) ?? -1 : -1,
            reason: statusLine.count > 2 ? statusLine[2] : "",
            headers: [],
            body: []
        )
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            response.headers.append((name: String(line[..<colon]), value: value))
        }
        guard hasBody else { return response }
        if let lengthText = response.header("Content-Length"), let length = Int(lengthText) {
            while buffer.count < length {
                guard try fill(timeout: timeout) else {
                    throw RawClientError(operation: "read body (\(buffer.count) of \(length) bytes)", code: ECONNRESET)
                }
            }
            response.body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        } else {
            while try fill(timeout: timeout) {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// Reads until the server closes the connection; returns everything received (nil if `timeout` passed first).
    public func readUntilClosed(timeout: TimeInterval) -> [UInt8]? {
        do {
            while try fill(timeout: timeout) {}
            defer { buffer = [] }
            return buffer
        } catch let error as RawClientError where error.code == ECONNRESET {
            defer { buffer = [] }
            return buffer
        } catch {
            return nil
        }
    }

    private func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}

/// `chunked` transfer encoding of `body` in pieces of `chunkSize` bytes.
public func chunkedEncoding(_ body: [UInt8], chunkSize: Int) -> [UInt8] {
    var encoded: [UInt8] = []
    var offset = 0
    while offset < body.count {
        let end = min(offset + chunkSize, body.count)
        encoded += Array("\(String(end - offset, radix: 16))\r\n".utf8)
        encoded += body[offset..<end]
        encoded += Array("\r\n".utf8)
        offset = end
    }
    encoded += Array("0\r\n\r\n".utf8)
    return encoded
}
