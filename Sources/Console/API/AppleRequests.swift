import Gatehouse

/// `POST /api/apple/keys`: {pem, fileName?, keyId?, teamId?}. The page reads the `.p8` with a
/// FileReader and sends its text; `fileName` (Apple's `AuthKey_<KEYID>.p8`) supplies the Key ID
/// when `keyId` is absent, exactly as the CLI's file argument does.
struct AppleKeyImportRequest: Decodable, Sendable {
    let pem: String
    let fileName: String?
    let keyId: String?
    let teamId: String?

    /// The explicit Key ID, validated by `KeyID` (400 naming what is wrong).
    func keyID() throws -> KeyID? { try keyId.flatMap { $0.isEmpty ? nil : try KeyID($0) } }

    /// The explicit Team ID, validated by `TeamID`.
    func teamID() throws -> TeamID? { try teamId.flatMap { $0.isEmpty ? nil : try TeamID($0) } }
}

/// `POST /api/apple/secret/mint`: {clientId?, ttl?} — `ttl` in seconds (`3600`) or text (`"1h"`).
struct AppleSecretMintRequest: Decodable, Sendable {
    let clientId: String?
    let ttl: DurationInput?

    /// The client id to mint for, nil meaning the configured Services ID.
    var clientID: String? { clientId.flatMap { $0.isEmpty ? nil : $0 } }
}

/// `POST /api/apple/secret/inspect`: {token}, the client secret exactly as deployed.
struct AppleSecretInspectRequest: Decodable, Sendable {
    let token: String
}

/// `POST /api/apple/export`: {password, format?}. The password re-authenticates the signed-in admin.
struct AppleExportRequest: Decodable, Sendable {
    let password: String
    let format: String?

    /// `env` (the default) or `json`.
    func exportFormat() throws -> AppleExport.Format {
        try APIError.choice(format, field: "\"format\"", as: AppleExport.Format.self) ?? .env
    }
}
