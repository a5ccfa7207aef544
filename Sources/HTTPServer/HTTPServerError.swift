import Foundation

/// Why an ``HTTPServer`` could not start, with a message that says what to do.
public struct HTTPServerError: Error, LocalizedError, CustomStringConvertible, Sendable, Equatable {
    /// The kind of failure, for code that reacts to it.
    public enum Kind: Sendable, Equatable {
        /// The address is not an IPv4 or IPv6 literal.
        case invalidAddress
        /// A configuration number is out of range.
        case invalidConfiguration
        /// Something already listens on the address and port.
        case addressInUse
        /// The address does not belong to this machine.
        case addressNotAvailable
        /// Binding needs privileges the process lacks (ports below 1024).
        case permissionDenied
        /// `start()` was called on a running server.
        case alreadyStarted
        /// libmicrohttpd refused to start for another reason.
        case startFailed
        /// libmicrohttpd could not be loaded (it is not installed, or too old).
        case libraryUnavailable
    }

    /// The kind of failure.
    public var kind: Kind
    /// A sentence naming the input, what is wrong and what to do.
    public var message: String

    /// An error of the given kind.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
    public var errorDescription: String? { message }
}
