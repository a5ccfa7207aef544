import Gatehouse
import Storage

/// `accounts check` on D1: every check's anti-join counted by D1 and sampled (`LIMIT`), all of them in one request,
/// so no answer holds more than the samples, however dirty the store (a check run as it is would send back every
/// row it finds, in one unbounded answer).
struct D1IntegrityPlan: IntegrityPlan {
    let db: SQLDatabase
    let sampleLimit: Int

    func tallies(antiJoins: [String: String]) throws -> [String: IntegrityTally] {
        let checks = antiJoins.sorted { $0.key < $1.key }
        let read = try db.snapshot(checks.flatMap { _, sql in
            [SQLStatement("SELECT count(*) FROM (\(sql))"), SQLStatement("\(sql) LIMIT \(sampleLimit)")]
        })
        var tallies: [String: IntegrityTally] = [:]
        for (position, (code, _)) in checks.enumerated() {
            var tally = IntegrityTally(limit: sampleLimit)
            for row in read[2 * position + 1] { tally.add(row.values) }
            tallies[code] = tally.counting(Int(read[2 * position].first?[0].int64 ?? 0))
        }
        return tallies
    }

    func beforeAntiJoin(_ code: String) throws {}
    func end() {}
}
