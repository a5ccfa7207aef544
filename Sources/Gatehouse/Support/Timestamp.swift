import Foundation

/// A point in time with millisecond precision, UTC, as Better Auth stores it.
///
/// Formatting and parsing are written out by hand: the seeder writes millions of them and
/// `DateFormatter` would dominate its profile. Fast path kept for ops/bench's seed row (1,000,000 users < 60 s).
///
///     Timestamp(iso8601: "2026-11-30T03:48:03.123Z")?.iso8601 == "2026-11-30T03:48:03.123Z"
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    /// `seconds` since the epoch; saturates at Int64's range instead of trapping on huge values.
    public init(seconds: Int64) { self.milliseconds = Timestamp.saturating(seconds, times: 1000) }

    /// The earliest time Gatehouse reads or writes: 0000-01-01T00:00:00.000Z (ISO-8601's four-digit years).
    public static let earliest = Timestamp(milliseconds: -62_167_219_200_000)
    /// The latest time Gatehouse reads or writes: 9999-12-31T23:59:59.999Z.
    public static let latest = Timestamp(milliseconds: 253_402_300_799_999)

    /// Whether this time has a four-digit year, so that its ISO-8601 form is exact.
    public var isRepresentable: Bool { self >= Timestamp.earliest && self <= Timestamp.latest }

    /// A NumericDate (seconds since the epoch, as in JWT claims) as a time, or nil when it is not finite or
    /// falls outside years 0000–9999: claims arrive from anyone, and `Int64(1e308)` would trap.
    public init?(epochSeconds: Double) {
        guard epochSeconds.isFinite else { return nil }
        let milliseconds = (epochSeconds * 1000).rounded(.down)
        guard milliseconds >= Double(Timestamp.earliest.milliseconds), milliseconds <= Double(Timestamp.latest.milliseconds) else { return nil }
        self.milliseconds = Int64(milliseconds)
    }

    /// The current time.
    public static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(milliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    /// Whole seconds since the epoch (rounded down).
    public var seconds: Int64 { milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000 }

    /// This time plus a number of seconds. Saturates at Int64's range: durations come from operators and
    /// requests (`?since=9223372036854776s`), and an overflow here would take the whole console down.
    public func adding(seconds: Int64) -> Timestamp {
        let (sum, overflow) = milliseconds.addingReportingOverflow(Timestamp.saturating(seconds, times: 1000))
        return Timestamp(milliseconds: overflow ? (seconds < 0 ? .min : .max) : sum)
    }

    /// `value × factor`, clamped to Int64's range.
    static func saturating(_ value: Int64, times factor: Int64) -> Int64 {
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        guard overflow else { return product }
        return (value < 0) == (factor < 0) ? .max : .min
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

    public var description: String { iso8601 }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, the form JavaScript's `Date.toISOString()` gives.
    public var iso8601: String {
        let (days, msOfDay) = milliseconds.floorDivided(by: 86_400_000)
        let (year, month, day) = Timestamp.civil(fromDays: days)
        return String(unsafeUninitializedCapacity: 24) { buffer in
            func put(_ value: Int64, at offset: Int, width: Int) {
                var rest = value
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[index] = 48 &+ UInt8(truncatingIfNeeded: rest % 10)
                    rest /= 10
                }
            }
            put(year, at: 0, width: 4); buffer[4] = 45; put(month, at: 5, width: 2); buffer[7] = 45; put(day, at: 8, width: 2)
            buffer[10] = 84; put(msOfDay / 3_600_000, at: 11, width: 2); buffer[13] = 58; put(msOfDay / 60_000 % 60, at: 14, width: 2)
            buffer[16] = 58; put(msOfDay / 1000 % 60, at: 17, width: 2); buffer[19] = 46; put(msOfDay % 1000, at: 20, width: 3); buffer[23] = 90
            return 24
        }
    }

    /// Parses ISO-8601 as Better Auth and SQLite write it: `2026-11-30T03:48:03.123Z`, without
    /// fraction, with a space instead of `T`, with `+HH:MM`, `+HHMM` or (as Postgres writes) `+HH` offsets, or a bare date.
    public init?(iso8601 text: String) {
        var text = text
        guard let milliseconds = text.withUTF8(Self.parseISO8601) else { return nil }
        self.milliseconds = milliseconds
    }

    /// The milliseconds an ISO 8601 text names (read in place: dates are parsed for every row a store returns).
    /// The offset may be `±hh:mm`, `±hhmm` or `±hh` (Postgres writes a whole-hour offset so: `…03.123+00`).
    private static func parseISO8601(_ chars: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        func number(_ width: Int) -> Int64? {
            guard index + width <= chars.count else { return nil }
            var value: Int64 = 0
            for offset in 0..<width {
                let char = chars[index + offset]
                guard char >= 48 && char <= 57 else { return nil }
                value = value * 10 + Int64(char - 48)
            }
            index += width
            return value
        }
        func expect(_ char: UInt8) -> Bool {
            guard index < chars.count, chars[index] == char else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")), let day = number(2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        var ms: Int64 = 0
        if index < chars.count {
            guard chars[index] == UInt8(ascii: "T") || chars[index] == UInt8(ascii: " ") else { return nil }
            index += 1
            guard let hour = number(2), expect(UInt8(ascii: ":")), let minute = number(2), hour < 24, minute < 60 else { return nil }
            var second: Int64 = 0
            if expect(UInt8(ascii: ":")) { guard let value = number(2), value < 61 else { return nil }; second = value }
            var fraction: Int64 = 0
            if expect(UInt8(ascii: ".")) {
                var digits = 0
                while index < chars.count, chars[index] >= 48, chars[index] <= 57 {
                    if digits < 3 { fraction = fraction * 10 + Int64(chars[index] - 48) }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
                if digits < 3 { for _ in digits..<3 { fraction *= 10 } }
            }
            ms = ((hour * 60 + minute) * 60 + second) * 1000 + fraction
            if index < chars.count {
                if expect(UInt8(ascii: "Z")) || expect(UInt8(ascii: "z")) {
                } else if chars[index] == UInt8(ascii: "+") || chars[index] == UInt8(ascii: "-") {
                    let sign: Int64 = chars[index] == UInt8(ascii: "+") ? 1 : -1
                    index += 1
                    guard let offsetHours = number(2) else { return nil }
                    var offsetMinutes: Int64 = 0
                    if expect(UInt8(ascii: ":")) || index < chars.count {
                        guard let minutes = number(2) else { return nil }
                        offsetMinutes = minutes
                    }
                    ms -= sign * (offsetHours * 60 + offsetMinutes) * 60_000
                } else { return nil }
            }
        }
        guard index == chars.count else { return nil }
        return Timestamp.days(year: year, month: month, day: day) * 86_400_000 + ms
    }

    /// Days since the epoch of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Timestamp(iso8601: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO-8601 time: \(text)"))
        }
        self = value
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}

extension Int64 {
    /// Floor division with a non-negative remainder.
    func floorDivided(by divisor: Int64) -> (Int64, Int64) {
        let quotient = self >= 0 ? self / divisor : (self - divisor + 1) / divisor
        return (quotient, self - quotient * divisor)
    }
}
