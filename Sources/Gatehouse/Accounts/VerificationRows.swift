import Storage

/// The verification rows that belong to a user, as a merge (`MergeReadSet`) and a deletion (`UserDeletionReadSet`)
/// find them: Better Auth keys them by the email (`email`, `sign-in-otp-<email>`, `email-verification-otp-<email>`,
/// `<purpose>:<email>`) or, for password resets, holds the user id as value. An empty email (dirt) names no row: it
/// would otherwise match every identifier ending in `:` or `-`.
///
/// On Postgres the identifiers ending in the email are two ranges of `gatehouse_verification_identifier_suffix_idx`
/// (each identifier's last `suffixKeyLength` characters, reversed, in byte order: an identifier ends in `:<email>`
/// when that key starts with the email reversed and `:`), and the password resets an equality on
/// `gatehouse_verification_value_idx` (`AccountIndexes`): an index read instead of a scan of every row, which took
/// 27 ms of a merge's transaction at 10M users (97,000 verification rows). Without the indexes the same statement
/// reads every row and finds the same ones. SQLite and D1 compare the end of every identifier.
enum VerificationRows {
    /// How many characters of an identifier, from its end, the suffix index keeps: a key of at most 1 KB, well within
    /// a B-tree entry. An email this long or longer is looked up by scanning.
    static let suffixKeyLength = 256

    /// The suffix index's key, as the index and the statement both spell it (the planner matches them as written).
    static func suffixKey(_ identifier: String) -> String {
        "left(reverse(\(identifier)), \(suffixKeyLength)) COLLATE \"C\""
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
                conditions.append("\(identifier) = \(exact) OR \(dialect.suffix(identifier, count: "length(\(exact)) + 1")) IN (':' || \(exact), '-' || \(exact))")
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
