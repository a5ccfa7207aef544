import Foundation

/// A URL Gatehouse sends a secret to (an API token, a client secret, a user's token), checked by the one rule every
/// outbound client shares (D1, Apple; `HTTPClient.send` checks it again): `https://`, or plain `http://` only to this
/// machine — a loopback literal (127.0.0.0/8, `::1`, or an IPv4-mapped `::ffff:127.x.y.z`) or `localhost`.
///
///     let base = try OutboundURL("http://127.0.0.1:8787/client/v4", variable: "CLOUDFLARE_API_BASE_URL")
///     base.text    // "http://127.0.0.1:8787/client/v4"
///
/// The parser is strict where parsers disagree, so that what is checked is what libcurl connects to: a user name or
/// password (`user:pass@host`) is refused outright (which host a URL with an `@` names differs between parsers, and
/// a password does not belong in a variable that is printed), as are a percent-encoded or non-ASCII host, a backslash,
/// white space and control characters, an IPv6 zone, a fragment, and IPv4 written other than as four decimal numbers.
/// A refusal names the input with anything before an `@` left out, and says what to write instead.
public struct OutboundURL: Sendable, Equatable, CustomStringConvertible {
    /// `http` or `https`, lowercased.
    public let scheme: String
    /// The host as written, lowercased; an IPv6 literal without its brackets.
    public let host: String
    public let port: Int?
    /// The path, from its first `/`, without a trailing `/` (empty for none).
    public let path: String
    /// The query after `?`, if any.
    public let query: String?

    /// Why a URL is refused: one line naming the variable and the input (without credentials), and the fix.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Parses `input`, the value of `variable` (named in a refusal), and applies the rule.
    public init(_ input: String, variable: String) throws(Refusal) {
        let shown = Self.redacted(input)
        func refuse(_ why: String, _ fix: String = "write it as https://HOST[:PORT]/PATH") -> Refusal {
            Refusal(description: "\(variable) (\(shown)) \(why): \(fix)")
        }
        guard input.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value != 0x7F }) else {
            throw refuse("holds white space, a control character or a non-ASCII character")
        }
        guard !input.contains("\\") else { throw refuse("holds a backslash, which parsers read differently") }
        guard let separator = input.range(of: "://") else { throw refuse("is not an http:// or https:// URL") }
        let scheme = input[..<separator.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else { throw refuse("is not an http:// or https:// URL") }
        var rest = Substring(input[separator.upperBound...])
        guard !rest.contains("#") else { throw refuse("holds a fragment (#)") }
        var query: String?
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        guard !authority.contains("@") else {
            throw refuse("holds a user name or password before an @", "leave credentials out of the URL (a token goes in its own variable)")
        }
        guard !authority.isEmpty else { throw refuse("names no host") }
        guard !authority.contains("%") else { throw refuse("has a percent-encoded host", "write the host as it is") }
        // The host, and the text after it (`:port` or nothing).
        var host: String
        var afterHost: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("has an IPv6 address without its closing ]") }
            host = authority[authority.index(after: authority.startIndex)..<close].lowercased()
            guard Self.ipv6Bytes(host) != nil else { throw refuse("has an IPv6 address that is not one", "write it as [::1] or [2001:db8::1]") }
            afterHost = authority[authority.index(after: close)...]
        } else {
            let colon = authority.firstIndex(of: ":") ?? authority.endIndex
            host = authority[..<colon].lowercased()
            afterHost = authority[colon...]
            guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }) else {
                throw refuse("has a host that is not a name or an address")
            }
            // Digits and dots only: an IPv4 address, which must be written in the one form every parser reads alike
            // (`127.1`, `0177.0.0.1` or `2130706433` are read differently by different parsers).
            if host.allSatisfy({ $0.isNumber || $0 == "." }), Self.ipv4Bytes(host) == nil {
                throw refuse("has an IPv4 address not written as four decimal numbers", "write it as a.b.c.d, e.g. 127.0.0.1")
            }
        }
        var port: Int?
        if !afterHost.isEmpty {
            let digits = afterHost.dropFirst()
            guard afterHost.first == ":", !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let number = Int(digits), (1...65535).contains(number) else {
                throw refuse("has a port that is not a number from 1 to 65535")
            }
            port = number
        }
        var index = path.startIndex
        while let percent = path[index...].firstIndex(of: "%") {
            let digits = path[path.index(after: percent)...].prefix(2)
            guard digits.count == 2, digits.allSatisfy(\.isHexDigit) else { throw refuse("has a % in its path that is not %XX") }
            index = path.index(after: percent)
        }
        while path.hasSuffix("/") { path.removeLast() }
        if scheme == "http" && !Self.isLoopback(host) {
            throw refuse("is plain http:// to a host that is not this machine, so what is sent with it (a token, a secret) would cross the network unencrypted",
                         "use https://; plain http:// is only for a server on this machine (127.0.0.1, [::1] or localhost)")
        }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.query = query
    }

    /// The URL in its checked form: `scheme://host[:port]path[?query]`.
    public var text: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost)\(port.map { ":\($0)" } ?? "")\(path)\(query.map { "?\($0)" } ?? "")"
    }

    public var description: String { text }

    /// Whether `host` (lowercased, IPv6 without brackets) is this machine, written so that no resolver can say
    /// otherwise: `localhost`, an address in 127.0.0.0/8, `::1`, or 127.0.0.0/8 mapped into IPv6 (`::ffff:127.0.0.1`).
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        if let v4 = ipv4Bytes(host) { return v4[0] == 127 }
        guard let v6 = ipv6Bytes(host) else { return false }
        if v6[0..<15].allSatisfy({ $0 == 0 }) && v6[15] == 1 { return true }
        let mapped = v6[0..<10].allSatisfy { $0 == 0 } && v6[10] == 0xFF && v6[11] == 0xFF
        return mapped && v6[12] == 127
    }

    /// The four bytes of a dotted-quad IPv4 address in decimal, without leading zeros; nil for anything else.
    static func ipv4Bytes(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }), !(part.count > 1 && part.hasPrefix("0")),
                  let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    /// The sixteen bytes of an IPv6 address (`inet_pton`'s forms, no zone); nil for anything else.
    static func ipv6Bytes(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, !text.contains("%") else { return nil }
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// `input` as a refusal shows it: anything before an `@` left out (`http://…@host/`), and the query too, so that
    /// a password or token written into the URL never reaches an error.
    public static func redacted(_ input: String) -> String {
        var shown = String(input.unicodeScalars.prefix(200).map { $0.isASCII && $0.value > 0x20 && $0.value != 0x7F ? Character($0) : "_" })
        if let mark = shown.firstIndex(of: "?") { shown = String(shown[..<mark]) + "?…" }
        guard let at = shown.lastIndex(of: "@") else { return shown }
        let scheme = shown.range(of: "://").map { String(shown[..<$0.upperBound]) } ?? ""
        return scheme + "…" + String(shown[at...])
    }
}
