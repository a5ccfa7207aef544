#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What can be learnt about a client's socket without reading from it.
enum ClientSocket {
    /// Whether the client closed its end (an orderly shutdown, or a reset) of the socket `fd`: a peek finds the
    /// end of the stream or an error. Data waiting (a pipelined next request) and nothing waiting both mean it is
    /// still there. Never blocks, consumes nothing; a negative `fd` is taken as open.
    static func isClosedByPeer(_ fd: Int32) -> Bool {
        guard fd >= 0 else { return false }
        var byte: UInt8 = 0
        let peeked = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if peeked == 0 { return true }
        if peeked < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        return false
    }
}
