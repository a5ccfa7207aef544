/// A duration in whole seconds, parsed from operator input such as `90s`, `15m`, `1h`, `7d`, `2w`.
public struct Seconds: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let value: Int64
    public init(_ value: Int64) { self.value = value }

    public static func < (lhs: Seconds, rhs: Seconds) -> Bool { lhs.value < rhs.value }

    /// The longest duration an operator can ask for: 100 years. Every duration is added to or taken from
    /// a time, and nothing Gatehouse schedules or looks back over is longer.
    public static let maximum = Seconds(100 * 366 * 86_400)

    static let units: [(Character, Int64)] = [("s", 1), ("m", 60), ("h", 3600), ("d", 86_400), ("w", 604_800)]

    /// Parses `N` (seconds) or `N` followed by one unit of s, m, h, d, w; also compounds like `1h30m`.
    public static func parse(_ text: String) throws -> Seconds {
        let invalid = GatehouseError.invalid("\"\(text.prefix(40))\" is not a duration", fix: "write it as a number of seconds or with a unit: 90s, 15m, 1h, 7d, 2w, 1h30m")
        guard !text.isEmpty, text.count <= 32 else { throw invalid }
        if let plain = Int64(text) { guard plain >= 0 else { throw invalid }; return try Seconds(plain).checkedMaximum(text) }
        var total: Int64 = 0
        var number: Int64? = nil
        for char in text {
            if let digit = char.wholeNumberValue, char.isASCII {
                let (shifted, overflow1) = (number ?? 0).multipliedReportingOverflow(by: 10)
                let (next, overflow2) = shifted.addingReportingOverflow(Int64(digit))
                guard !overflow1, !overflow2 else { throw invalid }
                number = next
            } else if let unit = units.first(where: { $0.0 == char }), let value = number {
                let (product, overflow1) = value.multipliedReportingOverflow(by: unit.1)
                let (sum, overflow2) = total.addingReportingOverflow(product)
                guard !overflow1, !overflow2 else { throw invalid }
                total = sum
                number = nil
            } else {
                throw invalid
            }
        }
        guard number == nil else { throw invalid }
        return try Seconds(total).checkedMaximum(text)
    }

    private func checkedMaximum(_ text: String) throws -> Seconds {
        guard self <= Seconds.maximum else {
            throw GatehouseError.invalid("\"\(text.prefix(40))\" is longer than 100 years", fix: "give a duration of at most \(Seconds.maximum.value / 86_400)d")
        }
        return self
    }

    /// The shortest exact rendering: `3600` → `1h`, `5400` → `1h30m`.
    public var description: String {
        if value == 0 { return "0s" }
        var rest = value
        var out = ""
        for (unit, size) in Seconds.units.reversed() where rest >= size {
            out += "\(rest / size)\(unit)"
            rest %= size
        }
        return out
    }
}
