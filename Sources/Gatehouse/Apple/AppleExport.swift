import JOSE

/// The Apple signing inputs for a runtime that mints client secrets per request: `APPLE_TEAM_ID`,
/// `APPLE_KEY_ID`, `APPLE_CLIENT_ID`, `APPLE_PRIVATE_KEY` (plus `APPLE_APP_BUNDLE_IDENTIFIER` when configured).
/// The only place the private key ever leaves the store: refused unless `reveal` is true, and every reveal is
/// audited (which key, which format, by whom — never the key).
public struct AppleExport {
    /// The store.
    public let store: Store
    let ring: AppleKeyRing

    public init(store: Store, masterKey: MasterKey? = nil) {
        self.store = store
        self.ring = AppleKeyRing(store: store, masterKey: masterKey)
    }

    /// The output formats.
    public enum Format: String, Sendable, CaseIterable {
        /// `NAME='value'` lines, for a shell, a dotenv file or a secrets upload.
        case env
        /// One JSON object.
        case json
    }

    /// The exported values, in output order.
    public struct Values: Sendable {
        public let pairs: [(name: String, value: String)]
        public let keyID: KeyID
        public let fingerprint: String
    }

    /// Opens the active key and returns the values, auditing the reveal. Throws unless `reveal`.
    public func export(format: Format, reveal: Bool, actor: Actor, now: Timestamp) throws -> Values {
        guard reveal else {
            throw GatehouseError("refusing to print the Apple private key without \(field: .reveal)",
                                 fix: "add \(field: .reveal) (the reveal is recorded in the audit log); pipe it straight into your secrets store, e.g. \(run: .appleExport, .option(.format, "json"), .flag(.reveal)) | wrangler secret bulk",
                                 code: .revealRequired)
        }
        let config = try ProviderConfiguration(store: store).apple()
        guard let clientID = config.servicesID else {
            throw GatehouseError.invalid("no Services ID is configured: the runtime needs APPLE_CLIENT_ID", fix: "\(run: .providersSet, "apple", .option(.servicesID, "<Services ID>"))")
        }
        let (key, privateKey) = try ring.activeSigningKey()
        var pairs: [(String, String)] = [("APPLE_TEAM_ID", key.teamID.rawValue), ("APPLE_KEY_ID", key.keyID.rawValue), ("APPLE_CLIENT_ID", clientID)]
        if let bundle = config.bundleID { pairs.append(("APPLE_APP_BUNDLE_IDENTIFIER", bundle)) }
        pairs.append(("APPLE_PRIVATE_KEY", privateKey.pemRepresentation))
        _ = try store.audit.append(store.db, actor: actor, action: "apple.export.reveal", subject: key.keyID.rawValue, details: [
            "key_id": .string(key.keyID.rawValue), "fingerprint": .string(key.fingerprint), "format": .string(format.rawValue),
            "client_id": .string(clientID),
        ], at: now)
        return Values(pairs: pairs, keyID: key.keyID, fingerprint: key.fingerprint)
    }

    /// The values rendered in `format`. PEM is multi-line: env single-quotes it (no PEM holds a quote).
    public static func render(_ values: Values, format: Format) throws -> String {
        switch format {
        case .env:
            return values.pairs.map { "\($0.name)='\($0.value.trimmingCharacters(in: .newlines))'\n" }.joined()
        case .json:
            var object: [String: JSONValue] = [:]
            for (name, value) in values.pairs { object[name] = .string(value) }
            return String(decoding: try JSONValue.encode(object: object), as: UTF8.self) + "\n"
        }
    }
}
