import Storage

/// The verification rows that belong to a user, as a merge (`MergeReadSet`) and a deletion (`UserDeletionReadSet`)
/// find them: Better Auth keys them by the email (`email`, `sign-in-otp-<email>`, `email-verification-otp-<email>`,
/// `<purpose>:<email>`) or, for password resets, holds the user id as value. An empty email (dirt) names no row: it
/// would otherwise match every identifier ending in `:` or `-`.
///
/// Read from indexes (`AccountIndexes` makes them) rather than by comparing the end of every identifier, which takes
/// tens of milliseconds of a merge's transaction at 10M users (97,000 verification rows): the identifiers ending in
/// the email through the dialect's suffix index (`SQLDialect.suffixIndex`: a range of reversed ends, or an equality
/// on the last characters with each candidate checked whole), the password resets an equality on an index of
/// `value`. An email the suffix index cannot serve is compared with every identifier; without the indexes the same
/// statements read every row and find the same ones.
enum VerificationRows {
    /// The statement that reads a user's verification rows from `shape` (the verification table, mapped by `table`),
    /// locking them until the transaction ends when `locking`.
    static func statement(_ dialect: any SQLDialect, table: AuthSchema.Table, shape: MergeTableShape,
                          email: String, userID: String, locking: Bool) -> SQLStatement {
        let identifier = table.col(.identifier), value = table.col(.value)
        var conditions: [String] = [], arguments: [SQLBindable] = []
        func bind(_ argument: String) -> String {
            arguments.append(argument)
            return "?\(arguments.count)"
        }
        if !email.isEmpty {
            let exact = bind(email)
            let scalars = email.unicodeScalars
            let ends = "\(dialect.suffix(identifier, count: "length(\(exact)) + 1")) IN (':' || \(exact), '-' || \(exact))"
            // Engines count characters as code points, as `unicodeScalars` does.
            switch dialect.suffixIndex {
            case let index? where index.lookup == .reversedRange && scalars.count < index.length:
                let reversed = String(String.UnicodeScalarView(scalars.reversed()))
                let key = index.key(identifier)
                // A key starts with `reversed:` when it sorts from there up to `reversed;` (the byte after `:`), and
                // with `reversed-` up to `reversed.`.
                let ranges = [(":", ";"), ("-", ".")].map { separator, next in
                    "(\(key) >= \(bind(reversed + separator)) AND \(key) < \(bind(reversed + next)))"
                }
                conditions.append("\(identifier) = \(exact) OR " + ranges.joined(separator: " OR "))
            case let index? where index.lookup == .tailEquality && scalars.count + 1 >= index.length:
                // An identifier ending in `:<email>` or `-<email>` ends in the last `length` characters of those.
                let tails = [":", "-"].map { separator in
                    bind(String(String.UnicodeScalarView((separator.unicodeScalars + scalars).suffix(index.length))))
                }
                conditions.append("\(identifier) = \(exact) OR (\(index.key(identifier)) IN (\(tails.joined(separator: ", "))) AND \(ends))")
            default:
                conditions.append("\(identifier) = \(exact) OR \(ends)")
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
