import Foundation
import HTTPClient
import JOSE
import Storage

/// A Google service account's JSON key (`GOOGLE_APPLICATION_CREDENTIALS`, or `--service-account FILE`): the client
/// email and the RSA key that signs the JWT Google's RISC stream management asks for. The file must be the
/// operator's alone (mode 0600 or stricter); the private key is read into memory only, never printed, logged or
/// copied into the store.
public struct GoogleServiceAccount: Sendable {
    public static let variable = "GOOGLE_APPLICATION_CREDENTIALS"
    public let clientEmail: String
    public let privateKeyID: String
    let privateKey: RSAPrivateKey

    /// The key file at `path`, else at `GOOGLE_APPLICATION_CREDENTIALS`.
    public static func load(path explicit: String?) throws -> GoogleServiceAccount {
        guard let path = explicit ?? ProcessInfo.processInfo.environment[variable].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw GatehouseError.invalid("no service account key: stream management signs its requests with one",
                                         fix: "pass --service-account FILE, or set GOOGLE_APPLICATION_CREDENTIALS to the JSON key of a service account with the RISC Configuration Admin role")
        }
        try InputFile.requireRegular(path, what: "the service account key")
        var folder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &folder), folder.boolValue {
            throw GatehouseError.invalid("the service account key \(path) is a folder", fix: "pass the service account's JSON key file itself")
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw GatehouseError.notFound("cannot read the service account key \(path)", fix: "check the path") }
        guard info.st_mode & 0o077 == 0 else {
            throw GatehouseError.invalid("the service account key \(path) can be read by others (mode \(String(info.st_mode & 0o777, radix: 8)))",
                                         fix: "chmod 600 \(path): it holds a private key")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 64 * 1024,
              let object = try? JSONValue.parseObject([UInt8](data)) else {
            throw GatehouseError.invalid("\(path) is not a service account's JSON key", fix: "download it from the Google Cloud console (IAM → Service accounts → Keys → Add key → JSON)")
        }
        guard object["type"]?.stringValue == "service_account", let email = object["client_email"]?.stringValue, email.contains("@"),
              let keyID = object["private_key_id"]?.stringValue, let pem = object["private_key"]?.stringValue else {
            throw GatehouseError.invalid("\(path) is not a service account's JSON key (type service_account, client_email, private_key_id, private_key)",
                                         fix: "download the service account's key as JSON")
        }
        let key: RSAPrivateKey
        do { key = try RSAPrivateKey(pemRepresentation: pem) } catch {
            throw GatehouseError.invalid("the private_key of \(path) is not an RSA key of 2048 bits or more", fix: "download a fresh JSON key for the service account")
        }
        return GoogleServiceAccount(clientEmail: email, privateKeyID: keyID, privateKey: key)
    }

    /// The audience Google's RISC management API asks for.
    public static let audience = "https://risc.googleapis.com/google.identity.risc.v1beta.RiscManagementService"

    /// The bearer token: a JWT signed RS256 by the service account's key, `iss` = `sub` = its email, for one hour.
    func bearer(now: Timestamp) throws -> String {
        try JWT.signRS256(header: ["kid": .string(privateKeyID), "typ": .string("JWT")], claims: [
            "iss": .string(clientEmail), "sub": .string(clientEmail), "aud": .string(Self.audience),
            "iat": .integer(now.seconds), "exp": .integer(now.seconds + 3600),
        ], key: privateKey)
    }
}

/// The app's RISC event stream at Google: where Google pushes the tokens, which events, whether it is enabled, and
/// the verification that proves the receiver gets them. Base URL `GATEHOUSE_GOOGLE_RISC_BASE_URL` or
/// `https://risc.googleapis.com`. What was set is kept in `gatehouse_google_risc_stream` (for `health`), and each change
/// is audited.
public struct GoogleRISCStream {
    public static let baseURLVariable = "GATEHOUSE_GOOGLE_RISC_BASE_URL"
    public static let pushDelivery = "https://schemas.openid.net/secevent/risc/delivery-method/push"

    public let store: Store
    public let account: GoogleServiceAccount
    public let baseURL: String
    public var actor = Actor("gatehouse")

    public init(store: Store, account: GoogleServiceAccount, baseURL: String? = nil) {
        self.store = store
        self.account = account
        let chosen = baseURL ?? ProcessInfo.processInfo.environment[Self.baseURLVariable].flatMap { $0.isEmpty ? nil : $0 } ?? "https://risc.googleapis.com"
        self.baseURL = chosen.hasSuffix("/") ? String(chosen.dropLast()) : chosen
    }

    /// The stream as Google has it: delivery URL, events requested and delivered.
    public struct Configuration: Sendable, Codable, Equatable {
        public let url: String?
        public let eventsRequested: [String]
        public let eventsDelivered: [String]
        public let status: String?
    }

    private func call(_ method: String, _ path: String, _ body: [String: JSONValue]?) throws -> [String: JSONValue] {
        let url = baseURL + path
        do { _ = try OutboundURL(url, variable: Self.baseURLVariable) } catch { throw GatehouseError.invalid("\(error)") }
        let token = try account.bearer(now: .now())
        var headers = ["Accept: application/json", "Authorization: Bearer \(token)"]
        var bytes: [UInt8]?
        if let body {
            headers.append("Content-Type: application/json")
            bytes = try JSONValue.serialize(body)
        }
        let answer: HTTPAnswer
        do { answer = try HTTPClient.send(HTTPRequest(method: method, url: url, headers: headers, body: bytes, timeout: 20, maxAnswerBytes: 1 << 20)) } catch {
            throw GatehouseError("Google's RISC API did not answer: \(error.describe(OutboundURL.redacted(url)))", fix: "check the network, or \(Self.baseURLVariable)", code: .unavailable)
        }
        let object = (try? JSONValue.parseObject(answer.body)) ?? [:]
        guard (200..<300).contains(answer.status) else {
            let message = object["error"]?.objectValue?["message"]?.stringValue.map { ": \(OperatorText.visible(String($0.prefix(200)), keepLineBreaks: false))" } ?? ""
            let fix = answer.status == 401 || answer.status == 403
                ? "give the service account \(account.clientEmail) the RISC Configuration Admin role, and enable the RISC API in its project"
                : "check the request, then run it again"
            throw GatehouseError("Google's RISC API answered HTTP \(answer.status) to \(method) \(path)\(message)", fix: fix)
        }
        return object
    }

    /// `GET /v1beta/stream`.
    public func show() throws -> Configuration {
        let object = try call("GET", "/v1beta/stream", nil)
        let stored = try store.db.row("SELECT status FROM gatehouse_google_risc_stream WHERE id = 1")
        return Configuration(url: object["delivery"]?.objectValue?["url"]?.stringValue,
                             eventsRequested: object["events_requested"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                             eventsDelivered: object["events_delivered"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                             status: stored?.optionalString("status"))
    }

    /// `POST /v1beta/stream:update`: push to `url`, the `events` asked for (default: every type Gatehouse acts on).
    public func update(url: String, events: [GoogleSecurityEvent.Kind] = GoogleSecurityEvent.Kind.allCases, now: Timestamp = .now()) throws {
        do { _ = try OutboundURL(url, variable: "--url") } catch {
            throw GatehouseError.invalid("--url \(OutboundURL.redacted(url)): \(error)", fix: "pass the https URL of your receiver, as your TLS proxy serves `gatehouse google risc serve`")
        }
        let uris = events.map(\.uri)
        _ = try call("POST", "/v1beta/stream:update", [
            "delivery": .object(["delivery_method": .string(Self.pushDelivery), "url": .string(url)]),
            "events_requested": .array(uris.map(JSONValue.string)),
        ])
        try store.change(actor: actor, action: "google.risc.stream.update", subject: "stream", details: ["url": .string(OutboundURL.redacted(url)), "events": .int(Int64(uris.count))]) {
            try upsert("url = ?, events = ?", [url, uris.joined(separator: " ")], now: now)
        }
    }

    /// `POST /v1beta/stream/status:update`.
    public func setEnabled(_ enabled: Bool, now: Timestamp = .now()) throws {
        let status = enabled ? "enabled" : "disabled"
        _ = try call("POST", "/v1beta/stream/status:update", ["status": .string(status)])
        try store.change(actor: actor, action: "google.risc.stream.\(enabled ? "enable" : "disable")", subject: "stream") {
            try upsert("status = ?", [status], now: now)
        }
    }

    /// `POST /v1beta/stream:verify` with `state`: Google pushes a verification event carrying it to the receiver.
    public func verify(state: String, now: Timestamp = .now()) throws {
        _ = try call("POST", "/v1beta/stream:verify", ["state": .string(state)])
        try store.change(actor: actor, action: "google.risc.stream.verify", subject: "stream", details: ["state": .string(state)]) {
            try upsert("verify_requested_at = ?", [now.iso8601], now: now)
        }
    }

    private func upsert(_ assignments: String, _ values: [SQLBindable], now: Timestamp) throws {
        if try store.db.row("SELECT id FROM gatehouse_google_risc_stream WHERE id = 1") == nil {
            try store.db.execute("INSERT INTO gatehouse_google_risc_stream (id, updated_at) VALUES (1, ?)", [now.iso8601])
        }
        try store.db.execute("UPDATE gatehouse_google_risc_stream SET \(assignments), updated_at = ? WHERE id = 1", values + [now.iso8601])
    }
}
