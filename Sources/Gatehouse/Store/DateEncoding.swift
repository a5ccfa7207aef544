import Storage

/// How a date column stores its values. On SQLite, Better Auth's Kysely adapter writes ISO-8601 text;
/// Drizzle's `timestamp_ms` writes epoch milliseconds and older `timestamp` columns epoch seconds.
/// On Postgres, Better Auth's migration declares `timestamptz`, Drizzle and Prisma `timestamp` (UTC wall-clock
/// time, as their drivers write it): a SQL timestamp.
/// Gatehouse reads all four and writes each column in the encoding it already uses.
public enum DateEncoding: String, Sendable, Codable {
    case isoText = "iso-text"
    case epochMilliseconds = "epoch-ms"
    case epochSeconds = "epoch-s"
    /// A Postgres `timestamptz`, `timestamp` or `date` column. Written as ISO-8601 UTC text, which Postgres parses
    /// into the column's type (a `timestamp without time zone` keeps the UTC time); read back as Postgres prints
    /// it in the connection's UTC (`2026-11-30 03:48:03.123+00`).
    case sqlTimestamp = "sql-timestamp"

    /// The stored form of a time.
    public func encode(_ time: Timestamp) -> SQLValue {
        switch self {
        case .isoText, .sqlTimestamp: return .text(time.iso8601)
        case .epochMilliseconds: return .integer(time.milliseconds)
        case .epochSeconds: return .integer(time.seconds)
        }
    }

    /// Reads a stored time in any of the three encodings (whatever this column is declared as):
    /// numbers above 10^11 are milliseconds, smaller ones seconds; text is ISO-8601 or a number.
    public static func decode(_ value: SQLValue) -> Timestamp? {
        switch value {
        case .integer(let number): return fromEpoch(number)
        // A REAL in a date column (dirt from another writer) is read when it is a whole number Int64 holds.
        case .real(let number): return Int64(exactly: number.rounded(.down)).flatMap(fromEpoch)
        case .text(let text):
            if let time = Timestamp(iso8601: text) { return time }
            return Int64(text).flatMap(fromEpoch)
        case .null, .blob: return nil
        }
    }

    /// Nil outside years 0000–9999: such a value is dirt, not a date, and reads as unreadable.
    private static func fromEpoch(_ number: Int64) -> Timestamp? {
        let time = number.magnitude >= 100_000_000_000 ? Timestamp(milliseconds: number) : Timestamp(seconds: number)
        return time.isRepresentable ? time : nil
    }
}
