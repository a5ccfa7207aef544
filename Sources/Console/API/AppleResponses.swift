import Gatehouse

/// `GET /api/apple/keys`: the ring, its warnings, and the server's time to age the keys against.
struct AppleKeyListing: Encodable, Sendable {
    let now: Timestamp
    let keys: [AppleKey]
    /// The key client secrets are minted from, if any.
    let active: AppleKey?
    let warnings: [AppleFinding]
}

/// `POST /api/apple/keys/:id/selftest`: the self-test and its verdict (`passed` is computed by the ring).
struct AppleSelfTestReport: Encodable, Sendable {
    let selfTest: AppleKeyRing.SelfTest
    let passed: Bool

    init(_ test: AppleKeyRing.SelfTest) {
        selfTest = test
        passed = test.passed
    }
}

/// `POST /api/apple/secret/inspect`: the inspection and its verdict (`acceptable` is computed by the inspector).
struct AppleInspectionReport: Encodable, Sendable {
    let inspection: ClientSecretInspection
    let acceptable: Bool

    init(_ inspection: ClientSecretInspection) {
        self.inspection = inspection
        acceptable = inspection.acceptable
    }
}

/// `POST /api/apple/export`: the values for the runtime, and the same rendered as `format` for copying.
/// The one console response besides a freshly minted secret that carries key material.
struct AppleExportResponse: Encodable, Sendable {
    struct Pair: Encodable, Sendable {
        let name: String
        let value: String
    }

    let format: String
    let keyID: KeyID
    let fingerprint: String
    let values: [Pair]
    let text: String

    init(_ values: AppleExport.Values, format: AppleExport.Format) throws {
        self.format = format.rawValue
        keyID = values.keyID
        fingerprint = values.fingerprint
        self.values = values.pairs.map { Pair(name: $0.name, value: $0.value) }
        text = try AppleExport.render(values, format: format)
    }
}
