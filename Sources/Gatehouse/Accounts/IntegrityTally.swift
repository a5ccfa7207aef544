import Storage

/// How many rows one integrity check found, and the first few of them (as the check's SQL would select them).
package struct IntegrityTally: Sendable {
    package let limit: Int
    package private(set) var count = 0
    package private(set) var samples: [[SQLValue]] = []

    package init(limit: Int) { self.limit = limit }

    package mutating func add(_ row: @autoclosure () -> [SQLValue]) {
        count += 1
        if samples.count < limit { samples.append(row()) }
    }

    /// Adds the rows `other` counted after this one's: its count, and its samples while there is room.
    package mutating func append(_ other: IntegrityTally) {
        count += other.count
        samples += other.samples.prefix(max(0, limit - samples.count))
    }

    /// These samples with the count of another tally of the same rows.
    package func counting(_ count: Int) -> IntegrityTally {
        var tally = self
        tally.count = count
        return tally
    }
}
