/// A console admin's username: 1–64 characters of `a-z`, `0-9`, `.`, `_`, `-`, `+`, `@`, starting with a
/// letter or digit (`@` and `+` so that a single sign-on admin, named by their email, can be named on the CLI).
/// Lowercase only, so `Alice` and `alice` can never be two admins.
///
///     let name = try AdminUsername("alice")
public struct AdminUsername: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The longest username accepted.
    public static let maxLength = 64

    public let rawValue: String

    /// Validates `text`; the error quotes a shortened, printable copy of the input, never all of it.
    public init(_ text: String) throws {
        guard Self.isValid(text) else {
            var fix = "use 1–\(Self.maxLength) characters of a-z, 0-9, '.', '_', '-', starting with a letter or digit, e.g. alice"
            if Self.isValid(text.lowercased()) { fix = "usernames are lowercase: \(text.lowercased())" }
            throw GatehouseError.invalid("\"\(Self.printable(text))\" is not a valid admin username", fix: fix)
        }
        rawValue = text
    }

    public var description: String { rawValue }

    /// Whether `text` is a valid username.
    public static func isValid(_ text: String) -> Bool {
        let scalars = text.unicodeScalars
        guard let first = scalars.first, scalars.count <= maxLength else { return false }
        func alnum(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("0"..."9").contains(s) }
        return alnum(first) && scalars.allSatisfy { alnum($0) || $0 == "." || $0 == "_" || $0 == "-" || $0 == "+" || $0 == "@" }
    }

    /// At most 64 characters of `text` with control characters replaced, for messages and the audit
    /// log (a login attempt may name anything).
    public static func printable(_ text: String) -> String {
        let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.prefix(maxLength).map {
            $0.properties.generalCategory == .control || $0.properties.generalCategory == .format ? "\u{FFFD}" : $0
        }))
        return text.unicodeScalars.count > maxLength ? cleaned + "…" : cleaned
    }

    public init(from decoder: Decoder) throws { try self.init(decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(rawValue) }
}
