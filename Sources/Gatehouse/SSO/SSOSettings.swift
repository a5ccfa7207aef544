import Foundation
import HTTPClient
import Storage

/// The console's single sign-on through an OpenID Connect provider (`sso set`): never the client secret, which is
/// kept sealed in the store (`SSOConfiguration`).
///
///     let settings = try SSOSettings(issuer: "https://login.example.com", clientID: "gatehouse", adminGroup: "ops-admins").validated()
///     settings.role(for: ["ops-admins", "staff"])   // .admin
public struct SSOSettings: Sendable, Equatable, Encodable {
    /// The provider's issuer identifier, exactly as its ID tokens' `iss`; discovery is at `{issuer}/.well-known/openid-configuration`.
    public var issuer: String
    public var clientID: String
    /// Where the provider sends the browser back; nil: the console's own `/api/auth/sso/callback` at the address it is opened at.
    public var redirectURI: String?
    public var adminGroup: String?
    public var supportGroup: String?
    public var viewerGroup: String?
    /// The ID token claim that lists the person's groups.
    public var groupsClaim: String
    /// When set, only people whose verified email is at this domain may sign in.
    public var allowedDomain: String?
    /// Whether the console still accepts passwords (`POST /api/auth/login`).
    public var passwordLogin: Bool
    public var updatedAt: Timestamp?
    public var updatedBy: String?

    /// The usual name of the groups claim.
    public static let standardGroupsClaim = "groups"
    /// The callback path the console serves.
    public static let callbackPath = "/api/auth/sso/callback"

    public init(issuer: String, clientID: String, redirectURI: String? = nil, adminGroup: String? = nil, supportGroup: String? = nil,
                viewerGroup: String? = nil, groupsClaim: String = standardGroupsClaim, allowedDomain: String? = nil, passwordLogin: Bool = true) {
        self.issuer = issuer
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.adminGroup = adminGroup
        self.supportGroup = supportGroup
        self.viewerGroup = viewerGroup
        self.groupsClaim = groupsClaim
        self.allowedDomain = allowedDomain
        self.passwordLogin = passwordLogin
    }

    /// The provider's name on the login page's button: the issuer's host.
    public var providerName: String {
        (try? OutboundURL(issuer, variable: "issuer").host) ?? issuer
    }

    /// The role the groups give: admin over support over viewer; nil when none of the configured groups is among them.
    public func role(for groups: [String]) -> AdminRole? {
        let held = Set(groups)
        if let adminGroup, held.contains(adminGroup) { return .admin }
        if let supportGroup, held.contains(supportGroup) { return .support }
        if let viewerGroup, held.contains(viewerGroup) { return .viewer }
        return nil
    }

    /// These settings, checked: an issuer and redirect URI by the outbound rule (https, or http to this machine only),
    /// without a query or fragment; a client id, groups, claim and domain of sane characters; at least one group.
    public func validated() throws -> SSOSettings {
        var checked = self
        do {
            let url = try OutboundURL(issuer, variable: "\(field: .issuer)")
            guard url.query == nil else { throw GatehouseError.invalid("\(field: .issuer) must not have a query (?…): OpenID Discovery appends its path to it") }
        } catch let refusal as OutboundURL.Refusal {
            throw GatehouseError.invalid(refusal.description)
        }
        try Self.checkText(clientID, field: .clientID, max: 256)
        if let redirectURI {
            do {
                let url = try OutboundURL(redirectURI, variable: "\(field: .redirectURI)")
                guard url.path == Self.callbackPath, url.query == nil else {
                    throw GatehouseError.invalid("\(field: .redirectURI) must end in \(Self.callbackPath), with no query",
                                                 fix: "e.g. https://gatehouse.example.com\(Self.callbackPath)")
                }
            } catch let refusal as OutboundURL.Refusal {
                throw GatehouseError.invalid(refusal.description)
            }
        }
        for (group, field) in [(adminGroup, InputField.adminGroup), (supportGroup, .supportGroup), (viewerGroup, .viewerGroup)] {
            if let group { try Self.checkText(group, field: field, max: 256, spaces: true) }
        }
        guard adminGroup != nil || supportGroup != nil || viewerGroup != nil else {
            throw GatehouseError.invalid("no group gives access: nobody could sign in",
                                         fix: "name at least one of \(field: .adminGroup), \(field: .supportGroup), \(field: .viewerGroup)")
        }
        try Self.checkText(groupsClaim, field: .groupsClaim, max: 64)
        if let domain = allowedDomain {
            let lowered = domain.lowercased()
            let labels = lowered.split(separator: ".", omittingEmptySubsequences: false)
            guard lowered.count <= 253, labels.count >= 2, labels.allSatisfy({ label in
                !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
            }) else {
                throw GatehouseError.invalid("\(field: .allowedDomain) \"\(Self.printable(domain))\" is not a domain name", fix: "e.g. example.com")
            }
            checked.allowedDomain = lowered
        }
        return checked
    }

    static func checkText(_ text: String, field: InputField, max: Int, spaces: Bool = false) throws {
        guard !text.isEmpty, text.count <= max else {
            throw GatehouseError.invalid("\(field: field) must be 1 to \(max) characters")
        }
        guard text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F || (spaces && $0 == " ") }),
              !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .format }) else {
            throw GatehouseError.invalid("\(field: field) holds white space or control characters")
        }
    }

    static func printable(_ text: String) -> String { AdminUsername.printable(text) }
}

/// The client secret the console authenticates to the provider with. It never prints, and lives in the store only
/// sealed under the master key.
public struct SSOClientSecret: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The first line of `path` (`-`: standard input), 1 to 1024 bytes without control characters. Errors name the
    /// file, never what it holds.
    public init(readFrom path: String, option: String) throws {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            try InputFile.requireRegular(path, what: option)
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw GatehouseError.notFound("cannot read \(option) \(path)", fix: "check the path and that this user can read it")
            }
            data = contents
        }
        guard data.count <= 64 * 1024, let text = String(data: data, encoding: .utf8) else {
            throw GatehouseError.invalid("\(option) \(path) is not a UTF-8 text file holding a client secret")
        }
        var line = Substring(text)
        if let end = line.firstIndex(where: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) { line = line[..<end] }
        guard !line.isEmpty else { throw GatehouseError.invalid("\(option) \(path) is empty", fix: "put the client secret alone on the first line") }
        guard line.utf8.count <= 1024 else { throw GatehouseError.invalid("\(option) \(path): the client secret is longer than 1024 bytes") }
        guard !line.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw GatehouseError.invalid("\(option) \(path): the client secret holds control characters")
        }
        bytes = Array(line.utf8)
    }

    public var description: String { "[redacted client secret]" }
    public var debugDescription: String { description }
}
