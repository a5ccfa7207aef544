import Storage

/// An error from Postgres or from reaching it, with everything needed to act on it.
///
/// Like `DatabaseError`, it keeps no bound value and no password: the SQL is kept as written (with `$1`, `$2`
/// placeholders), the store is named by its redacted URI, and the server's DETAIL field (which quotes the values of
/// a violated key) is not kept at all. Messages from libpq and the server have the connection's password, and the
/// bound text values of the failed statement, replaced before they are stored here.
///
///     do { try connection.execute("INSERT INTO t(email) VALUES ($1)", ["a@example.com"]) }
///     catch let error as PostgresError where error.isUniqueViolation { … }
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// What failed.
    public enum Kind: String, Sendable {
        /// libpq could not be loaded, or lacks a function Storage calls.
        case library
        /// The connection URI is not one Gatehouse accepts.
        case uri
        /// The server could not be reached, refused the login, or went away.
        case connection
        /// The server (or Storage, before sending) refused a statement.
        case statement
    }

    public let kind: Kind
    /// The five-character SQLSTATE the server sent (`23505`, `40001`, …), or nil when none was sent (the library,
    /// a URI, a connection that never got as far as the server, a value Storage refused before sending).
    public let sqlState: String?
    /// The message, on one line, with secrets replaced.
    public let message: String
    /// The server's hint, if any.
    public let hint: String?
    /// The constraint that refused the change, if any.
    public let constraint: String?
    /// The table the error is about, if the server said.
    public let table: String?
    /// The statement that failed, as written (placeholders, never values).
    public let sql: String?
    /// The store, as `PostgresURI.redacted`.
    public let store: String?

    public init(kind: Kind, sqlState: String? = nil, message: String, hint: String? = nil, constraint: String? = nil,
                table: String? = nil, sql: String? = nil, store: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.hint = hint
        self.constraint = constraint
        self.table = table
        self.sql = sql
        self.store = store
    }

    /// The SQLSTATE's class: its first two characters (`23` integrity constraint violation, `40` transaction rollback…).
    public var sqlStateClass: String? { sqlState.map { String($0.prefix(2)) } }

    /// Whether a lock another session holds stopped this one (`55P03` lock not available, `40P01` deadlock detected).
    public var isBusy: Bool { sqlState == PostgresSQLState.lockNotAvailable || sqlState == PostgresSQLState.deadlockDetected }
    /// Whether the server cancelled the statement (`57014`): its `statement_timeout` ran out (Gatehouse cancels nothing
    /// else), or an operator cancelled it with `pg_cancel_backend`.
    public var isTimeout: Bool { sqlState == PostgresSQLState.queryCanceled }
    /// Whether the role lacks a privilege the statement needs (`42501`).
    public var isPermissionDenied: Bool { sqlState == PostgresSQLState.insufficientPrivilege }
    /// Whether the session or transaction is read-only (`25006`; also a hot standby refusing a write).
    public var isReadOnly: Bool { sqlState == PostgresSQLState.readOnlySQLTransaction }
    /// Whether a constraint (unique, foreign key, not null, check, exclusion) refused the change: class `23`.
    public var isConstraintViolation: Bool { sqlStateClass == "23" }
    /// Whether a UNIQUE or PRIMARY KEY constraint refused the change (`23505`).
    public var isUniqueViolation: Bool { sqlState == PostgresSQLState.uniqueViolation }
    /// Whether a FOREIGN KEY constraint refused the change (`23503`).
    public var isForeignKeyViolation: Bool { sqlState == PostgresSQLState.foreignKeyViolation }
    /// Whether a SERIALIZABLE (or REPEATABLE READ) transaction lost to a concurrent one (`40001`): run it again.
    public var isSerializationFailure: Bool { sqlState == PostgresSQLState.serializationFailure }
    /// Whether the server found data or an index damaged (`XX001`, `XX002`).
    public var isCorruption: Bool { sqlState == "XX001" || sqlState == "XX002" }
    /// Whether the server's disk ran out while writing (`53100`).
    public var isDiskFull: Bool { sqlState == "53100" }
    /// Whether the server could not be reached, refused the login, or the connection broke (class `08`, `28`,
    /// `57P01`…`57P03`, or libpq's own connection failure).
    public var isConnectionFailure: Bool {
        kind == .connection || sqlStateClass == "08" || sqlStateClass == "28"
            || sqlState == "57P01" || sqlState == "57P02" || sqlState == "57P03"
    }

    public var description: String {
        // The library's and the URI's messages are whole sentences that already say "Postgres".
        if kind == .library || kind == .uri { return message }
        var text = "Postgres error"
        if let sqlState { text += " \(sqlState)" }
        text += ": \(message)"
        if let hint { text += " (hint: \(hint))" }
        if let store { text += " [\(store)]" }
        if let sql { text += " while running: \(sql)" }
        return text
    }
}

/// The SQLSTATE codes Storage gives a name to (Postgres's errcodes.txt).
public enum PostgresSQLState {
    public static let uniqueViolation = "23505"
    public static let foreignKeyViolation = "23503"
    public static let notNullViolation = "23502"
    public static let checkViolation = "23514"
    public static let readOnlySQLTransaction = "25006"
    public static let inFailedSQLTransaction = "25P02"
    public static let serializationFailure = "40001"
    public static let deadlockDetected = "40P01"
    public static let lockNotAvailable = "55P03"
    public static let queryCanceled = "57014"
    public static let invalidPassword = "28P01"
    public static let characterNotInRepertoire = "22021"
    public static let indeterminateDatatype = "42P18"
    public static let ambiguousFunction = "42725"
    public static let undefinedFunction = "42883"
    public static let insufficientPrivilege = "42501"
}

/// Replaces secrets in text that came from libpq or the server before it is kept in an error.
struct SecretScrubber {
    /// From this length a secret is replaced wherever it occurs; a shorter one only where it stands alone (not
    /// inside a word), so that the password `y` does not turn `invalid connection option "bogus_key"` into nonsense.
    static let replacedEverywhereLength = 8

    /// The values to hide, longest first so that a secret containing another is replaced whole.
    private let secrets: [String]

    /// `passwords` are hidden whatever their length; bound text values only from `minimumValueLength` characters
    /// (a shorter value is no secret, and replacing every `a` would make the message unreadable).
    init(passwords: [String], boundValues: [String] = [], minimumValueLength: Int = 4) {
        var secrets = Set(passwords.filter { !$0.isEmpty })
        for value in boundValues where value.count >= minimumValueLength { secrets.insert(value) }
        // A percent-encoded password as it appears in the URI is hidden too.
        for password in passwords where !password.isEmpty {
            secrets.insert(PostgresURI.percentEncode(password, allowed: PostgresURI.unreservedBytes))
        }
        self.secrets = secrets.sorted { $0.count > $1.count }
    }

    /// `text` on one line (whitespace runs collapsed, trimmed) with every secret replaced by `***`.
    func scrub(_ text: String) -> String {
        var out = text
        for secret in secrets {
            out = secret.count >= Self.replacedEverywhereLength ? out.replacing(secret, with: "***") : Self.replaceStandalone(secret, in: out)
        }
        return out.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).joined(separator: " ")
    }

    /// `text` with the occurrences of `secret` that no letter, digit or `_` touches on either side replaced.
    private static func replaceStandalone(_ secret: String, in text: String) -> String {
        func isWord(_ character: Character?) -> Bool {
            guard let character else { return false }
            return character.isLetter || character.isNumber || character == "_"
        }
        var out = ""
        var rest = text[...]
        while let range = rest.firstRange(of: secret) {
            let before = range.lowerBound > rest.startIndex ? rest[rest.index(before: range.lowerBound)] : out.last
            let after = range.upperBound < rest.endIndex ? rest[range.upperBound] : nil
            out += rest[..<range.lowerBound]
            out += isWord(before) || isWord(after) ? String(rest[range]) : "***"
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}

extension PostgresError: SQLFailure {}
