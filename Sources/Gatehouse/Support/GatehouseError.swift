/// A failure an operator can act on: what went wrong, with which input, and what to do.
///
///     throw GatehouseError("no store at \(path)", fix: "run `gatehouse init --store \(path)`")
public struct GatehouseError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What is wrong, naming the input.
    public let message: String
    /// What to do about it, if there is something to do.
    public let fix: String?
    /// A stable code for scripts and the console's JSON errors (`not_found`, `conflict`, ...).
    public let code: String

    public init(_ message: String, fix: String? = nil, code: String = "failed") {
        self.message = message
        self.fix = fix
        self.code = code
    }

    public var description: String {
        guard let fix else { return message }
        return "\(message)\n  fix: \(fix)"
    }

    /// A lookup found nothing.
    public static func notFound(_ message: String, fix: String? = nil) -> GatehouseError {
        GatehouseError(message, fix: fix, code: "not_found")
    }

    /// The input was malformed.
    public static func invalid(_ message: String, fix: String? = nil) -> GatehouseError {
        GatehouseError(message, fix: fix, code: "invalid")
    }

    /// The change conflicts with the current state.
    public static func conflict(_ message: String, fix: String? = nil) -> GatehouseError {
        GatehouseError(message, fix: fix, code: "conflict")
    }
}
