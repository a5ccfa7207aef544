import Storage

/// The recorded values of one deadline a check watches (`HealthGauge`), oldest first, for the console's chart.
public struct HealthGaugeSeries: Sendable, Codable, Equatable {
    /// One recorded run's value.
    public struct Point: Sendable, Codable, Equatable {
        public let at: Timestamp
        /// In days.
        public let value: Double
        public let status: HealthStatus
    }

    /// The check's id (`apple.secret.<client id>`, `gates.membership`, `apple.transfer`, `apple.key_age`).
    public let check: String
    /// The lines of the latest run, in days (nil when the check has none).
    public let warning: Double?
    public let critical: Double?
    public let lowerIsWorse: Bool
    /// How many runs recorded a value in the range; `points` holds at most `HealthGaugeHistory.maxPoints` of them.
    public let recorded: Int
    public let points: [Point]
}

/// Every recorded run's deadlines, one row per check that has a gauge (`gatehouse_health_gauges`), so that a chart
/// over 90 days reads a few thousand small rows through the `at` index instead of decoding every run's report.
///
///     let series = try HealthGaugeHistory.series(store, since: .now().adding(seconds: -30 * 86_400))
public enum HealthGaugeHistory {
    /// A range holds at most this many rows (90 days of runs every 5 minutes, for four gauges, is about 100,000).
    public static let maxRows = 100_000
    /// A series holds at most this many points (a chart is a few hundred pixels wide): a longer one keeps the worst
    /// value of each slice of its runs (the worst status, then the value nearest the alarm), and always the latest.
    public static let maxPoints = 360

    /// Stores the gauges of a run being recorded, inside the caller's write transaction.
    static func record(_ report: HealthReport, in db: SQLDatabase) throws {
        for check in report.checks {
            guard let gauge = check.gauge, gauge.value.isFinite else { continue }
            try db.execute("""
                INSERT INTO gatehouse_health_gauges (at, check_id, status, value, warning, critical, lower_is_worse)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, [report.at.iso8601, check.id, check.status.rawValue, gauge.value, gauge.warning, gauge.critical, gauge.lowerIsWorse])
        }
    }

    /// The gauges recorded at or after `since`, one series per check (by check id), optionally only `check`'s.
    public static func series(_ store: Store, since: Timestamp, check: String? = nil) throws -> [HealthGaugeSeries] {
        var sql = "SELECT at, check_id, status, value, warning, critical, lower_is_worse FROM gatehouse_health_gauges WHERE at >= ?"
        var arguments: [SQLBindable] = [since.iso8601]
        if let check {
            sql += " AND check_id = ?"
            arguments.append(check)
        }
        sql += " ORDER BY at, id LIMIT ?"
        arguments.append(maxRows)
        var order: [String] = []
        var points: [String: [HealthGaugeSeries.Point]] = [:]
        var lines: [String: (warning: Double?, critical: Double?, lowerIsWorse: Bool)] = [:]
        for row in try store.db.rows(sql, arguments) {
            guard let at = row[0].string.flatMap(Timestamp.init(iso8601:)), let id = row[1].string,
                  let status = row[2].string.flatMap(HealthStatus.init(rawValue:)), let value = number(row[3]) else { continue }
            if points[id] == nil { order.append(id) }
            points[id, default: []].append(HealthGaugeSeries.Point(at: at, value: value, status: status))
            lines[id] = (number(row[4]), number(row[5]), (row[6].int64 ?? 1) != 0)
        }
        return order.sorted().map { id in
            let line = lines[id]!, all = points[id] ?? []
            return HealthGaugeSeries(check: id, warning: line.warning, critical: line.critical, lowerIsWorse: line.lowerIsWorse,
                                     recorded: all.count, points: thin(all, lowerIsWorse: line.lowerIsWorse))
        }
    }

    /// At most `maxPoints` of `points` (oldest first): the worst of each slice, and the latest.
    static func thin(_ points: [HealthGaugeSeries.Point], lowerIsWorse: Bool) -> [HealthGaugeSeries.Point] {
        guard points.count > maxPoints else { return points }
        func worse(_ a: HealthGaugeSeries.Point, _ b: HealthGaugeSeries.Point) -> Bool {
            if a.status != b.status { return a.status > b.status }
            return lowerIsWorse ? a.value < b.value : a.value > b.value
        }
        var kept = (0..<maxPoints).map { slice -> HealthGaugeSeries.Point in
            let range = (slice * points.count / maxPoints)..<((slice + 1) * points.count / maxPoints)
            return points[range].reduce(points[range.lowerBound]) { worse($1, $0) ? $1 : $0 }
        }
        kept[kept.count - 1] = points[points.count - 1]
        return kept
    }

    /// A REAL column's value, whichever way the engine hands it back.
    private static func number(_ value: SQLValue) -> Double? {
        switch value {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        case .text(let text): return Double(text)
        case .null, .blob: return nil
        }
    }
}
