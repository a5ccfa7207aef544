import Foundation
import HTTPClient
import Storage

/// A D1 database as `--store d1://<account_id>/<database_id>` names it, with where Cloudflare's API is and the API
/// token it is reached with. The token comes from `CLOUDFLARE_API_TOKEN` only (never a flag or the URI, so never in
/// `ps`), and nothing prints it: the location describes itself as `d1://<account>/<database>`.
///
///     let location = try D1Location(uri: "d1://0123456789abcdef0123456789abcdef/9f1c…")
///
/// The API base is `CLOUDFLARE_API_BASE_URL` (wrangler's variable) or `https://api.cloudflare.com/client/v4`; plain
/// `http://` is accepted only for a server on this machine (a test's), since the token travels with every request
/// (`OutboundURL`: a user name or password in the URL is refused, a loopback host is a literal or `localhost`).
public struct D1Location: Sendable, Equatable, CustomStringConvertible {
    public static let scheme = "d1://"
    public static let defaultBaseURL = "https://api.cloudflare.com/client/v4"
    public static let tokenVariable = "CLOUDFLARE_API_TOKEN"
    public static let baseURLVariable = "CLOUDFLARE_API_BASE_URL"
    /// `GATEHOUSE_D1_CA_FILE`: a PEM file of the certificate authorities to trust instead of the system's.
    public static let caFileVariable = "GATEHOUSE_D1_CA_FILE"

    public let account: String
    public let database: String
    /// The API base, without a trailing slash.
    public let baseURL: String
    public let caFile: String?

    /// Whether `text` is meant as a D1 store (`d1:` in any case), so that a misspelt one is refused, not read as a path.
    public static func looksLikeD1(_ text: String) -> Bool { text.lowercased().hasPrefix("d1:") }

    public init(uri: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(D1Error) {
        guard uri.lowercased().hasPrefix(Self.scheme) else {
            throw D1Error(.configuration, "a D1 store is written d1://ACCOUNT_ID/DATABASE_ID (got a d1: store without the //)")
        }
        let rest = uri.dropFirst(Self.scheme.count)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 || (parts.count == 3 && parts[2].isEmpty) else {
            throw D1Error(.configuration, "a D1 store is written d1://ACCOUNT_ID/DATABASE_ID: two parts, the account id and the database id")
        }
        let account = String(parts[0]), database = String(parts[1])
        guard !account.isEmpty, account.count <= 32, account.allSatisfy({ $0.isASCII && $0.isHexDigit }) else {
            throw D1Error(.configuration, "the account id in a d1:// store is up to 32 hexadecimal characters (the dashboard's Account ID)")
        }
        guard !database.isEmpty, database.count <= 64, database.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "-") }) else {
            throw D1Error(.configuration, "the database id in a d1:// store is the database's UUID (`wrangler d1 list` shows it)")
        }
        self.account = account
        self.database = database
        let base = environment[Self.baseURLVariable].flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultBaseURL
        // The token travels with every request: https only, plain http only to this machine (a test's server), by
        // the rule every outbound client shares.
        let url: OutboundURL
        do { url = try OutboundURL(base, variable: Self.baseURLVariable) } catch { throw D1Error(.configuration, error.description) }
        guard url.query == nil else {
            throw D1Error(.configuration, "\(Self.baseURLVariable) (\(OutboundURL.redacted(base))) holds a query (?…); the API base is https://HOST/client/v4")
        }
        baseURL = url.text
        caFile = environment[Self.caFileVariable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `d1://<account>/<database>`: how every output names the store.
    public var description: String { "d1://\(account)/\(database)" }

    /// The endpoint that answers rows as arrays (`/raw`), the one Gatehouse uses.
    var rawEndpoint: String { "\(baseURL)/accounts/\(account)/d1/database/\(database)/raw" }

    /// The API token, read when a request is made (never stored in a value that could be printed).
    static func token(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(D1Error) -> String {
        guard let token = environment[tokenVariable], !token.isEmpty else {
            throw D1Error(.configuration, "a d1:// store needs an API token in \(tokenVariable) (a Cloudflare API token with D1 Read, and D1 Write for write commands)")
        }
        guard token.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline && $0 != "\0" }) else {
            throw D1Error(.configuration, "\(tokenVariable) holds characters an API token never has (white space, a line break or non-ASCII)")
        }
        return token
    }
}
