import JOSE

/// A console admin's password in memory. It never prints: `description` and `debugDescription` are
/// redacted, so a password cannot reach a log, an error or the audit log by string interpolation.
///
///     let password = try AdminPassword(readFrom: "secret.txt")   // first line of the file
///     let generated = try AdminPassword.generate()               // 24 random letters and digits
public struct AdminPassword: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The shortest password accepted for an admin.
    public static let minLength = 12
    /// The longest, in UTF-8 bytes (hashing a megabyte per login attempt would be a denial of service).
    public static let maxBytes = 1024

    /// The password's UTF-8 bytes.
    public let bytes: [UInt8]

    /// A password for a new admin or a password change: 12 characters to 1 KiB, no control characters.
    public init(_ text: String) throws {
        guard text.count >= Self.minLength else {
            throw GatehouseError.invalid("the password is \(text.count) characters; at least \(Self.minLength) are required",
                                         fix: "choose a longer password, or omit \(field: .passwordFile) to have one generated")
        }
        guard text.utf8.count <= Self.maxBytes else {
            throw GatehouseError.invalid("the password is \(text.utf8.count) bytes; at most \(Self.maxBytes) are accepted")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw GatehouseError.invalid("the password contains control characters (a tab, a NUL or a second line?)",
                                         fix: "put the password alone on the first line of the file")
        }
        bytes = Array(text.utf8)
    }

    /// A password as presented at login: anything up to the size cap (it is checked, not kept).
    public init(presented text: String) {
        bytes = Array(text.utf8.prefix(Self.maxBytes + 1))
    }

    /// A random password of 24 letters and digits (about 143 bits).
    public static func generate() throws -> (AdminPassword, String) {
        let text = try SecureRandom.alphanumeric(24)
        return (try AdminPassword(text), text)
    }

    public var description: String { "[redacted password]" }
    public var debugDescription: String { description }
}
