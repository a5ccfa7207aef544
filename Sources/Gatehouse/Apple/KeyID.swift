/// The Key ID of a Sign in with Apple key (the `kid` of every client secret minted with it): ten upper-case
/// letters or digits, as in Apple's file name `AuthKey_<KeyID>.p8`.
///
///     let id = try KeyID("ABCDEFGHIJ")
///     let fromName = KeyID(fileName: "AuthKey_ABCDEFGHIJ.p8")   // ABCDEFGHIJ
public struct KeyID: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    /// The ten characters.
    public let rawValue: String

    /// Validates `rawValue`; throws `invalid` naming what is wrong with it.
    public init(_ rawValue: String) throws {
        guard AppleIdentifier.isWellFormed(rawValue) else {
            throw GatehouseError.invalid("the Key ID \(AppleIdentifier.problem(with: rawValue)); a Key ID is 10 upper-case letters or digits",
                                         fix: "copy it from Certificates, Identifiers & Profiles → Keys, or from the file name AuthKey_<KEYID>.p8")
        }
        self.rawValue = rawValue
    }

    /// The Key ID in Apple's file name `AuthKey_<KeyID>.p8` (any folder), nil for any other name.
    public init?(fileName path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
        let candidate = String(name.dropFirst("AuthKey_".count).dropLast(".p8".count))
        guard let id = try? KeyID(candidate) else { return nil }
        self = id
    }

    public var description: String { rawValue }
    public static func < (lhs: KeyID, rhs: KeyID) -> Bool { lhs.rawValue < rhs.rawValue }
    public init(from decoder: Decoder) throws { try self.init(decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(rawValue) }
}
