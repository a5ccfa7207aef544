import Foundation

/// Why an origin cannot be a WebAuthn relying party's.
public enum RelyingPartyOriginError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not an absolute URL with a host.
    case notAnOrigin(String)
    /// A scheme browsers do not offer WebAuthn on (https, or http for localhost only).
    case insecureScheme(String)
    /// An IP address: an RP id must be a domain name, and browsers refuse WebAuthn on an IP origin.
    case ipAddress(String)
    /// A path, query, fragment or user name: an origin is scheme, host and port only.
    case notJustAnOrigin(String)

    public var description: String {
        switch self {
        case .notAnOrigin(let text): return "\"\(text)\" is not an origin (scheme://host[:port])"
        case .insecureScheme(let text):
            return "\"\(text)\" is not a secure origin: passkeys need https (or http://localhost)"
        case .ipAddress(let text):
            return "\"\(text)\" names an IP address: passkeys need a domain name (open the console as http://localhost:PORT, or give a https name)"
        case .notJustAnOrigin(let text): return "\"\(text)\" has more than scheme, host and port"
        }
    }
}

extension RelyingParty {
    /// The relying party of the console served at `origin` (`serve --origin URL`, or its listen address): the RP id is
    /// the origin's host, and the origin is kept as browsers serialise it (lowercase, no default port, no slash), so
    /// that the exact comparison with the client data's origin holds.
    ///
    ///     let rp = try RelyingParty(origin: "https://Console.Example.com:443/", name: "Gatehouse")
    ///     rp.id       // "console.example.com"
    ///     rp.origin   // "https://console.example.com"
    public init(origin text: String, name: String, userVerification: UserVerificationRequirement = .preferred) throws(RelyingPartyOriginError) {
        guard let components = URLComponents(string: text), let rawScheme = components.scheme,
              let rawHost = components.host, !rawHost.isEmpty
        else { throw .notAnOrigin(text) }
        guard components.user == nil, components.password == nil, components.query == nil, components.fragment == nil,
              components.path.isEmpty || components.path == "/"
        else { throw .notJustAnOrigin(text) }
        let scheme = rawScheme.lowercased()
        let host = rawHost.lowercased()
        if host.hasPrefix("[") || host.contains(":") || host.split(separator: ".").allSatisfy({ $0.allSatisfy(\.isNumber) }) {
            throw .ipAddress(text)
        }
        let isLocalhost = host == "localhost" || host.hasSuffix(".localhost")
        guard scheme == "https" || (scheme == "http" && isLocalhost) else { throw .insecureScheme(text) }
        var origin = "\(scheme)://\(host)"
        if let port = components.port, port != (scheme == "https" ? 443 : 80) { origin += ":\(port)" }
        self.init(id: host, name: name, origin: origin, userVerification: userVerification)
    }
}
