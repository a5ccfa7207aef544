import Storage

/// A Postgres store's address: a libpq connection URI, parsed and checked before libpq sees it.
///
///     postgresql://[user[:password]@][host][:port][,host2[:port2]…][/dbname][?key=value&…]
///
/// The host may be a name, an address (`[::1]` for IPv6) or a Unix socket directory, either percent-encoded in the
/// authority (`%2Fvar%2Frun%2Fpostgresql`) or as `?host=/var/run/postgresql`. Other query keys (`sslmode`,
/// `options=-csearch_path%3Dauth`, `application_name`, `connect_timeout`, …) are libpq connection keywords and are
/// handed to it as they are. A password may come in the URI, and otherwise from `PGPASSWORD` or `~/.pgpass`, which
/// libpq reads itself.
///
/// The password never appears in `description` or `redacted` (it reads `***`), nor in any error this type throws.
///
///     let uri = try PostgresURI("postgres://app:s3cret@db.internal:5432/auth?sslmode=require")
///     print(uri)  // postgresql://app:***@db.internal:5432/auth?sslmode=require
public struct PostgresURI: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A connection keyword from the query, in the order given.
    public struct Parameter: Sendable, Equatable {
        public let name: String
        public let value: String
    }

    /// The longest URI accepted. A real one is well under 1 KB; the limit keeps a pasted file or a hostile value
    /// from travelling further.
    public static let maximumLength = 4096

    /// The role to log in as; nil for libpq's default (`PGUSER`, else the OS user).
    public let user: String?
    /// The password, percent-decoded; nil when the URI has none (libpq then reads `PGPASSWORD` or `~/.pgpass`).
    public let password: String?
    /// Host names, addresses or socket directories, comma-separated as libpq takes them; nil for libpq's default.
    public let host: String?
    /// Ports, comma-separated to match `host`; nil for libpq's default (5432).
    public let port: String?
    /// The database; nil for libpq's default (the user's name).
    public let database: String?
    /// The remaining query keys (libpq connection keywords), in order.
    public let parameters: [Parameter]

    /// The value of a query key, if given (`sslmode`, `options`, …).
    public func parameter(_ name: String) -> String? { parameters.first { $0.name == name }?.value }

    /// The `sslmode` asked for, if any (`disable`, `require`, `verify-full`, …).
    public var sslMode: String? { parameter("sslmode") }

    /// The `options` given to the server at start, if any (`-csearch_path=auth`).
    public var options: String? { parameter("options") }

    /// Where the password of a store URI on the command line lies (`URI` or `--store=URI`) (between `user:` and `@` in the authority), or nil.
    public static func passwordRange(inArgument argument: [UInt8]) -> Range<Int>? {
        var start = 0
        let option = Array("--store=".utf8)
        if argument.starts(with: option) { start = option.count }
        let text = argument[start...]
        guard let scheme = ["postgresql://", "postgres://"].map({ Array($0.utf8) }).first(where: { scheme in
            text.count >= scheme.count && zip(text.prefix(scheme.count), scheme).allSatisfy { $0 | 0x20 == $1 | 0x20 }
        }) else { return nil }
        let authorityStart = start + scheme.count
        let authorityEnd = argument[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? argument.count
        guard let at = argument[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")),
              let colon = argument[authorityStart..<at].firstIndex(of: UInt8(ascii: ":")), colon + 1 < at else { return nil }
        return (colon + 1)..<at
    }

    /// Whether a `--store` value (or `GATEHOUSE_STORE`) names a Postgres store rather than a SQLite file: it starts
    /// with `postgres://` or `postgresql://` (in any case). Anything else is a file path.
    public static func isPostgresURI(_ store: String) -> Bool {
        scheme(of: store) != nil
    }

    /// Parses and checks `text`. Throws a `PostgresError` of kind `.uri` saying what is wrong, which never quotes
    /// the password (nor, since a password may be pasted in the wrong place, any other part of the text).
    public init(_ text: String) throws(PostgresError) {
        func refuse(_ reason: String) -> PostgresError {
            PostgresError(kind: .uri, message: "The Postgres store URI \(reason).")
        }
        guard text.utf8.count <= Self.maximumLength else {
            throw refuse("is longer than \(Self.maximumLength) bytes")
        }
        if let offset = text.unicodeScalars.firstIndex(where: { Self.isControlOrSpace($0) }) {
            let position = text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: offset) + 1
            throw refuse("contains a space or control character (character \(position)); percent-encode it")
        }
        guard let schemeLength = Self.scheme(of: text) else {
            throw refuse("must start with postgres:// or postgresql://")
        }
        var rest = text.dropFirst(schemeLength)
        if rest.contains("#") { throw refuse("has a fragment (#…); percent-encode # as %23") }
        // The one @ allowed ends the user name and password. Another, or one after the host, is almost always a
        // password with an unencoded /, ?, # or @ in it: guessing would print part of it as a database or host.
        let ats = rest.filter { $0 == "@" }.count
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        if ats > 1 || (ats == 1 && !rest[..<authorityEnd].contains("@")) {
            throw refuse("has an @ that does not end the user name and password; percent-encode /, ?, # and @ in them (@ is %40)")
        }

        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring?
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var authority = rest

        var user: String?, password: String?
        if let at = authority.firstIndex(of: "@") {
            let userinfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userinfo.firstIndex(of: ":") {
                user = try Self.decode(userinfo[..<colon], part: "user name")
                password = try Self.decode(userinfo[userinfo.index(after: colon)...], part: "password", allowControl: true)
            } else {
                user = try Self.decode(userinfo, part: "user name")
            }
        }

        var hosts: [String] = [], ports: [String] = []
        if !authority.isEmpty {
            for spec in authority.split(separator: ",", omittingEmptySubsequences: false) {
                let (host, port) = try Self.splitHostPort(spec, refuse: refuse)
                hosts.append(try Self.decode(host, part: "host"))
                ports.append(port)
            }
        }
        var host = hosts.contains { !$0.isEmpty } ? hosts.joined(separator: ",") : nil
        var port = ports.contains { !$0.isEmpty } ? ports.joined(separator: ",") : nil
        var database: String?
        if let path, !path.isEmpty { database = try Self.decode(path, part: "database name") }

        var parameters: [Parameter] = []
        var seen = Set<String>()
        if !query.isEmpty {
            for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
                guard let equals = pair.firstIndex(of: "=") else {
                    throw refuse("has a query key without a value (write key=value)")
                }
                let name = try Self.decode(pair[..<equals], part: "query key")
                guard !name.isEmpty, name.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x5f }) else {
                    throw refuse("has a query key that is not a libpq connection keyword (lowercase letters and _)")
                }
                guard seen.insert(name).inserted else { throw refuse("gives the query key \(name) twice") }
                let value = try Self.decode(pair[pair.index(after: equals)...], part: name == "password" ? "password" : "value of \(name)",
                                            allowControl: name == "password")
                func setOnce(_ field: inout String?, _ what: String) throws(PostgresError) {
                    if let field, !field.isEmpty { throw refuse("gives the \(what) twice (in the address and as ?\(name)=)") }
                    field = value
                }
                switch name {
                case "user": try setOnce(&user, "user name")
                case "password": try setOnce(&password, "password")
                case "host": try setOnce(&host, "host")
                case "port": try setOnce(&port, "port")
                case "dbname": try setOnce(&database, "database name")
                case "client_encoding": throw refuse("sets client_encoding, which Gatehouse fixes to UTF8")
                default: parameters.append(Parameter(name: name, value: value))
                }
            }
        }
        if let port {
            for item in port.split(separator: ",", omittingEmptySubsequences: false) where !item.isEmpty {
                guard item.utf8.count <= 5, let number = Int(item), (1...65535).contains(number) else {
                    throw refuse("has a port that is not a number from 1 to 65535")
                }
            }
        }
        self.user = user == "" ? nil : user
        self.password = password
        self.host = host == "" ? nil : host
        self.port = port == "" ? nil : port
        self.database = database
        self.parameters = parameters
    }

    /// The URI with the password replaced by `***`: safe for output, logs, errors and the audit log.
    public var redacted: String {
        var text = "postgresql://"
        if user != nil || password != nil {
            text += Self.percentEncode(user ?? "", allowed: Self.unreservedBytes)
            if password != nil { text += ":***" }
            text += "@"
        }
        var query: [String] = []
        if let host, !host.contains(","), !host.hasPrefix("/"), !host.hasPrefix("@"), !(port ?? "").contains(",") {
            text += host.contains(":") ? "[\(host)]" : Self.percentEncode(host, allowed: Self.unreservedBytes)
            if let port { text += ":" + port }
        } else {
            // Socket directories and host lists read best as ?host=, as libpq's documentation writes them.
            if let host { query.append("host=" + Self.percentEncode(host, allowed: Self.queryValueBytes)) }
            if let port { query.append("port=" + Self.percentEncode(port, allowed: Self.queryValueBytes)) }
        }
        if let database { text += "/" + Self.percentEncode(database, allowed: Self.unreservedBytes) }
        for parameter in parameters {
            query.append(parameter.name + "=" + Self.percentEncode(parameter.value, allowed: Self.queryValueBytes))
        }
        if !query.isEmpty { text += "?" + query.joined(separator: "&") }
        return text
    }

    public var description: String { redacted }
    public var debugDescription: String { redacted }
    /// What `dump` and debuggers show: the redacted URI, not the stored password.
    public var customMirror: Mirror { Mirror(self, children: ["redacted": redacted], displayStyle: .struct) }

    /// The keywords and values handed to `PQconnectdbParams` (with `expand_dbname` 0, so no value is re-read as
    /// a connection string): what this URI gives, then Gatehouse's fixed settings.
    var connectionKeywords: [(String, String)] {
        var keywords: [(String, String)] = []
        if let host { keywords.append(("host", host)) }
        if let port { keywords.append(("port", port)) }
        if let user { keywords.append(("user", user)) }
        if let password { keywords.append(("password", password)) }
        if let database { keywords.append(("dbname", database)) }
        for parameter in parameters { keywords.append((parameter.name, parameter.value)) }
        // Without a timeout libpq waits for an unreachable host as long as TCP does; without keepalives and a user
        // timeout, a server that vanished mid-answer (a failover, a cut link) is waited for as long as TCP retransmits
        // (about 15 minutes). Over a Unix socket libpq ignores the TCP ones.
        for (name, value) in Self.networkBounds where parameter(name) == nil { keywords.append((name, value)) }
        keywords.append(("fallback_application_name", "gatehouse"))
        // Results are decoded as UTF-8.
        keywords.append(("client_encoding", "UTF8"))
        return keywords
    }

    /// libpq's bounds on waiting for the network, unless the URI sets them: connect within 10 s; a peer that answers
    /// no keepalive for 30 s + 3 × 10 s, or leaves sent data unacknowledged for 30 s, is taken as gone.
    static let networkBounds: [(String, String)] = [
        ("connect_timeout", "10"), ("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"),
        ("keepalives_count", "3"), ("tcp_user_timeout", "30000"),
    ]

    // MARK: - Parsing

    /// The length of the scheme and `//` when `text` starts with a Postgres scheme.
    private static func scheme(of text: String) -> Int? {
        for scheme in ["postgresql://", "postgres://"] where text.prefix(scheme.count).lowercased() == scheme {
            return scheme.count
        }
        return nil
    }

    private static func isControlOrSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value <= 0x20 || (0x7f...0x9f).contains(scalar.value)
    }

    /// `host[:port]` or `[v6address][:port]`.
    private static func splitHostPort(_ spec: Substring, refuse: (String) -> PostgresError) throws(PostgresError) -> (Substring, String) {
        if spec.hasPrefix("[") {
            guard let close = spec.firstIndex(of: "]") else { throw refuse("has an IPv6 address without its closing ]") }
            let host = spec[spec.index(after: spec.startIndex)..<close]
            let after = spec[spec.index(after: close)...]
            if after.isEmpty { return (host, "") }
            guard after.hasPrefix(":") else { throw refuse("has text after an IPv6 address's ] that is not :port") }
            return (host, String(after.dropFirst()))
        }
        guard let colon = spec.lastIndex(of: ":") else { return (spec, "") }
        let host = spec[..<colon]
        if host.contains(":") { throw refuse("has an IPv6 address that is not in brackets ([::1])") }
        return (host, String(spec[spec.index(after: colon)...]))
    }

    /// Percent-decodes one part of the URI. Refuses a malformed escape, invalid UTF-8 and NUL (which libpq cannot
    /// take) everywhere, and other control characters everywhere but the password, naming the part, never its text.
    private static func decode(_ part: Substring, part name: String, allowControl: Bool = false) throws(PostgresError) -> String {
        func refuse(_ reason: String) -> PostgresError {
            PostgresError(kind: .uri, message: "The Postgres store URI's \(name) \(reason).")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(part.utf8.count)
        var iterator = part.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw refuse("has a % that does not start a two-digit hex escape (write % as %25)")
            }
            bytes.append(high << 4 | low)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw refuse("is not valid UTF-8 once decoded") }
        if bytes.contains(0) { throw refuse("contains NUL (%00)") }
        if !allowControl, text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) }) {
            throw refuse("contains a control character")
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    // MARK: - Encoding

    /// RFC 3986's unreserved characters: letters, digits, `-._~`.
    static let unreservedBytes: Set<UInt8> = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))
    /// Characters left as they are in a query value: unreserved plus `/`, `:` and `,` (socket paths, host lists).
    static let queryValueBytes: Set<UInt8> = unreservedBytes.union("/:,".utf8)

    /// `text` with every byte outside `allowed` percent-encoded.
    static func percentEncode(_ text: String, allowed: Set<UInt8>) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            if allowed.contains(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xf)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
