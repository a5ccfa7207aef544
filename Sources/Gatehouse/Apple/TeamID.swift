/// An Apple Developer Team ID (the `iss` of every client secret): ten upper-case letters or digits.
public struct TeamID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The ten characters.
    public let rawValue: String

    /// Validates `rawValue`; throws `invalid` naming what is wrong with it.
    public init(_ rawValue: String) throws {
        guard AppleIdentifier.isWellFormed(rawValue) else {
            throw GatehouseError.invalid("the Team ID \(AppleIdentifier.problem(with: rawValue)); a Team ID is 10 upper-case letters or digits",
                                         fix: "copy it from the Apple Developer portal (Membership details → Team ID)")
        }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
    public init(from decoder: Decoder) throws { try self.init(decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(rawValue) }
}
