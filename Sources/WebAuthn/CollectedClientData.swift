import JOSE

/// The members of `CollectedClientData` (WebAuthn Level 3 §5.8.1) the relying party checks, read from the exact
/// `clientDataJSON` bytes the client signed over.
struct CollectedClientData {
    let type: String
    /// The challenge member as sent (base64url); compared after decoding.
    let challenge: String
    let origin: String
    let crossOrigin: Bool
    let topOrigin: String?

    /// The largest client data accepted; a browser's is a few hundred bytes.
    static let maxBytes = 8 * 1024

    init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count <= Self.maxBytes else { throw .clientDataMalformed("it is over \(Self.maxBytes) bytes") }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .clientDataMalformed("it is not UTF-8") }
        let object: [String: JSONValue]
        do {
            object = try JSONValue.parseObject(bytes)
        } catch {
            throw .clientDataMalformed("it is not a JSON object")
        }
        guard let type = object["type"]?.stringValue else { throw .clientDataMalformed("it has no string \"type\"") }
        guard let challenge = object["challenge"]?.stringValue else {
            throw .clientDataMalformed("it has no string \"challenge\"")
        }
        guard let origin = object["origin"]?.stringValue else { throw .clientDataMalformed("it has no string \"origin\"") }
        switch object["crossOrigin"] {
        case nil, .null?: crossOrigin = false
        case .bool(let value)?: crossOrigin = value
        default: throw .clientDataMalformed("its \"crossOrigin\" is not a boolean")
        }
        switch object["topOrigin"] {
        case nil, .null?: topOrigin = nil
        case .string(let value)?: topOrigin = value
        default: throw .clientDataMalformed("its \"topOrigin\" is not a string")
        }
        self.type = type
        self.challenge = challenge
        self.origin = origin
    }
}
