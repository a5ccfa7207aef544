import Storage

/// The verification rows that belong to a user, as a merge (`MergeReadSet`) and a deletion (`UserDeletionReadSet`)
/// find them: Better Auth keys them by the email (`email`, `sign-in-otp-<email>`, `email-verification-otp-<email>`,
/// `<purpose>:<email>`) or, for password resets, holds the user id as value. An empty email (dirt) names no row: it
/// would otherwise match every identifier ending in `:` or `-`.
///
/// Read from indexes (`AccountIndexes` makes them) rather than by comparing the end of every identifier, which takes
/// 27 ms of a merge's transaction on Postgres and about 40 ms on SQLite at 10M users (97,000 verification rows):
/// - Postgres: the identifiers ending in the email are two ranges of `gatehouse_verification_identifier_suffix_idx`
///   (each identifier's last `suffixKeyLength` characters, reversed, in byte order: an identifier ends in `:<email>`
///   when that key starts with the email reversed and `:`); the password resets an equality on
///   `gatehouse_verification_value_idx`, a hash index (a value may be longer than a B-tree entry holds).
/// - SQLite, which has no `reverse`: identifiers ending in the email end in its last `tailLength` characters, an
///   equality on `gatehouse_verification_identifier_tail_idx` (`substr(identifier, -16)`), each candidate then checked
///   whole; the password resets an equality on a B-tree of `value`. An email shorter than that is compared with every
///   identifier.
/// Without the indexes the same statements read every row and find the same ones (D1 has none).
enum VerificationRows {
    /// How many characters of an identifier, from its end, the suffix index keeps: a key of at most 1 KB, well within
    /// a B-tree entry. An email this long or longer is looked up by scanning.
    static let suffixKeyLength = 256

    /// The suffix index's key, as the index and the statement both spell it (the planner matches them as written).
    static func suffixKey(_ identifier: String) -> String {
        "left(reverse(\(identifier)), \(suffixKeyLength)) COLLATE \"C\""
    }

    /// How many characters of an identifier, from its end, SQLite's tail index keeps.
    static let tailLength = 16

    /// The tail index's key, as the index and the statement both spell it (SQLite matches them as written).
    static func tailKey(_ identifier: String) -> String {
        "substr(\(identifier), -\(tailLength))"
    }

    /// The statement that reads a user's verification rows from `shape` (the verification table, mapped by `table`),
    /// locking them until the transaction ends when `locking`.
    static func statement(_ dialect: SQLDialect, table: AuthSchema.Table, shape: MergeTableShape,
                          email: String, userID: String, locking: Bool) -> SQLStatement {
        let identifier = table.col(.identifier), value = table.col(.value)
        var conditions: [String] = [], arguments: [SQLBindable] = []
        func bind(_ argument: String) -> String {
            arguments.append(argument)
            return "?\(arguments.count)"
        }
        if !email.isEmpty {
            let exact = bind(email)
            // Postgres counts characters as code points, as `unicodeScalars` does.
            if dialect.engine == .postgres && email.unicodeScalars.count < suffixKeyLength {
                let reversed = String(String.UnicodeScalarView(email.unicodeScalars.reversed()))
                let key = suffixKey(identifier)
                // A key starts with `reversed:` when it sorts from there up to `reversed;` (the byte after `:`), and
                // with `reversed-` up to `reversed.`.
                let ranges = [(":", ";"), ("-", ".")].map { separator, next in
                    "(\(key) >= \(bind(reversed + separator)) AND \(key) < \(bind(reversed + next)))"
                }
                conditions.append("\(identifier) = \(exact) OR " + ranges.joined(separator: " OR "))
            } else {
                let ends = "\(dialect.suffix(identifier, count: "length(\(exact)) + 1")) IN (':' || \(exact), '-' || \(exact))"
                let scalars = email.unicodeScalars
                if dialect.engine != .postgres && scalars.count + 1 >= tailLength {
                    // An identifier ending in `:<email>` or `-<email>` ends in the last `tailLength` characters of
                    // those (SQLite counts characters as code points, as `unicodeScalars` does).
                    let tails = [":", "-"].map { separator in
                        bind(String(String.UnicodeScalarView((separator.unicodeScalars + scalars).suffix(tailLength))))
                    }
                    conditions.append("\(identifier) = \(exact) OR (\(tailKey(identifier)) IN (\(tails.joined(separator: ", "))) AND \(ends))")
                } else {
                    conditions.append("\(identifier) = \(exact) OR \(ends)")
                }
            }
        }
        conditions.append("\(value) = \(bind(userID))")
        return SQLStatement("""
            SELECT \(shape.selectList) FROM \(shape.sql)
            WHERE \(conditions.map { "(\($0))" }.joined(separator: "\n   OR "))
            ORDER BY \(shape.orderList)\(locking ? dialect.lockingRead : "")
            """, arguments)
    }
}
