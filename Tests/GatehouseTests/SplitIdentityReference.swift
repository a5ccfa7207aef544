@testable import Gatehouse
import Storage

/// An in-memory duplicates scan, the reference `SplitIdentityScan` is tested against (`SplitIdentityEquivalenceTests`:
/// the same report on stores with tricky data, on both engines). It holds every user's keys in arrays (about 100 bytes
/// a user) and visits every time-window pair of a common name, so its memory grows with the users and its time with
/// the square of a name's popularity: a test oracle, not part of the product.
enum SplitIdentityReference {
    /// The scan, with the pairs best first, as `SplitIdentityScan.run` returns it.
    static func run(_ store: Store, merged: Set<String>, windowMs: Int64, minPoints: Int) throws -> SplitIdentityScanResult {
        var population = try Population.load(store, merged: merged)
        population.windowMs = windowMs
        var scorer = PairScorer(population: population, minPoints: minPoints)
        scorer.scoreNameGroups()
        scorer.scoreMailboxGroups()
        scorer.scoreLookalikeEmails()
        var pairs = scorer.found
        pairs.sort { ($0.points, $1.first, $1.second) > ($1.points, $0.first, $0.second) }
        let final = scorer.population
        var result = SplitIdentityScanResult(usersScanned: population.count, sessionsScanned: population.sessionCount, nameGroups: scorer.nameGroups,
                                             pairsScored: scorer.pairsScored, pairsFound: pairs.count, excluded: population.excludedCount)
        var position = 0
        result.nextPair = {
            guard position < pairs.count else { return nil }
            let pair = pairs[position]
            position += 1
            return ScoredPair(first: pair.first, second: pair.second, points: pair.points, firstRowid: final.rowids[Int(pair.first)],
                              secondRowid: final.rowids[Int(pair.second)], groupSize: final.groupSize[Int(pair.first)])
        }
        return result
    }
}

/// A pair that reached the minimum score, by population index.
struct ReferencePair: Sendable {
    let first: Int32
    let second: Int32
    let points: Int
}

/// Every user reduced to a few 64-bit keys, plus each user's session IP and user-agent keys.
struct Population: Sendable {
    var rowids: [Int64] = []
    var nameKey: [UInt64] = []
    var created: [Int64] = []
    var mailboxKey: [UInt64] = []
    var domainKey: [UInt64] = []
    var relay: [Bool] = []
    /// Non-ASCII emails only (rare): user index → (lookalike key, exact key), see `EmailKeys.lookalike`.
    var lookalike: [Int32: (UInt64, UInt64)] = [:]
    var excluded: [Bool] = []
    var groupSize: [Int32] = []
    /// Sessions of user i are `sessionStart[i]..<sessionStart[i+1]` in `ipKeys` / `agentKeys`.
    var sessionStart: [Int32] = []
    var ipKeys: [UInt64] = []
    var agentKeys: [UInt64] = []
    var excludedCount = 0
    var windowMs: Int64 = 30 * 86_400_000

    var count: Int { rowids.count }
    var sessionCount: Int { ipKeys.count }

    /// Unknown creation times sort first and are never "close" to anything.
    static let unknownTime = SplitIdentityScan.unknownTime

    static func load(_ store: Store, merged: Set<String>) throws -> Population {
        let s = store.schema, db = store.db
        var population = Population()
        var normalizer = NameNormalizer()
        // Sessions are read on a second connection meanwhile (both cores); its snapshot may be a moment newer,
        // and a session whose user this scan did not see is skipped, as a session of a missing user always is.
        let background = SecondConnection(store.location, caller: db) { db in try SessionKeys.read(db, schema: s) }
        let userCount = Int(try db.scalar("SELECT count(*) FROM \(s.user.sql)").int64 ?? 0)
        var indexByID = UserKeyTable(capacity: userCount)
        for array in [\Population.nameKey, \.mailboxKey, \.domainKey] { population[keyPath: array].reserveCapacity(userCount) }
        population.rowids.reserveCapacity(userCount)
        population.created.reserveCapacity(userCount)

        let dialect = db.dialect
        try db.scan(s.user.sql, columns: [dialect.rowLocatorColumn, s.user.col(.id), s.user.col(.name), s.user.col(.email), s.user.col(.createdAt)],
                    where: nil, [], orderedBy: nil) { users in
            guard let id = users[1].string else { return }
            let index = Int32(population.rowids.count)
            indexByID.set(FNV1a.hash(id), index)
            population.rowids.append(dialect.rowLocator(users[0]) ?? 0)
            let isMerged = !merged.isEmpty && merged.contains(id)
            population.excluded.append(isMerged)
            if isMerged { population.excludedCount += 1 }
            population.nameKey.append(normalizer.key(users[2].string ?? ""))
            let emailText = users[3].string ?? ""
            let email = EmailKeys(emailText)
            population.relay.append(email.isPrivateRelay)
            population.mailboxKey.append(email.mailbox)
            population.domainKey.append(email.domain)
            if let keys = EmailKeys.lookalikeKeys(emailText) { population.lookalike[index] = (keys.lookalike, keys.exact) }
            population.created.append(createdMilliseconds(users[4]))
        }

        // Sessions: keys only, then grouped by user (a counting sort).
        let sessionKeys: SessionKeys
        do {
            sessionKeys = try background.wait()
        } catch {
            sessionKeys = try SessionKeys.read(db, schema: s) // no second connection (e.g. a read-only folder): one core
        }
        var owner: [Int32] = [], ips: [UInt64] = [], agents: [UInt64] = []
        owner.reserveCapacity(sessionKeys.owners.count)
        ips.reserveCapacity(sessionKeys.owners.count)
        agents.reserveCapacity(sessionKeys.owners.count)
        for position in sessionKeys.owners.indices {
            guard let index = indexByID.value(sessionKeys.owners[position]) else { continue }
            owner.append(index)
            ips.append(sessionKeys.ips[position])
            agents.append(sessionKeys.agents[position])
        }
        var start = [Int32](repeating: 0, count: population.count + 1)
        for index in owner { start[Int(index) + 1] += 1 }
        for index in 0..<population.count { start[index + 1] += start[index] }
        var cursor = start
        population.ipKeys = [UInt64](repeating: 0, count: owner.count)
        population.agentKeys = [UInt64](repeating: 0, count: owner.count)
        for (position, index) in owner.enumerated() {
            let slot = Int(cursor[Int(index)])
            population.ipKeys[slot] = ips[position]
            population.agentKeys[slot] = agents[position]
            cursor[Int(index)] += 1
        }
        population.sessionStart = start
        population.groupSize = [Int32](repeating: 1, count: population.count)
        return population
    }

    /// A creation time in milliseconds (`unknownTime` when unreadable), read as the streaming scan reads it.
    static func createdMilliseconds(_ value: SQLValue) -> Int64 { SplitIdentityScan.createdMilliseconds(value) }

    /// Whether users a and b have a session IP address in common.
    func shareIP(_ a: Int, _ b: Int) -> Bool { sessionStart.withUnsafeBufferPointer { start in ipKeys.withUnsafeBufferPointer { Self.share($0, start, a, b) } } }

    /// Whether users a and b have a session user agent in common.
    func shareAgent(_ a: Int, _ b: Int) -> Bool { sessionStart.withUnsafeBufferPointer { start in agentKeys.withUnsafeBufferPointer { Self.share($0, start, a, b) } } }

    /// Whether users a and b have a session key in common (0 means "none recorded"), among their first 64 sessions.
    /// Called for every scored pair (tens of millions): it reads the arrays in place, without retaining them.
    private static func share(_ keys: UnsafeBufferPointer<UInt64>, _ sessionStart: UnsafeBufferPointer<Int32>, _ a: Int, _ b: Int) -> Bool {
        let aStart = Int(sessionStart[a]), aEnd = min(Int(sessionStart[a + 1]), aStart + 64)
        let bStart = Int(sessionStart[b]), bEnd = min(Int(sessionStart[b + 1]), bStart + 64)
        guard aStart < aEnd, bStart < bEnd else { return false }
        for i in aStart..<aEnd where keys[i] != 0 {
            for j in bStart..<bEnd where keys[i] == keys[j] { return true }
        }
        return false
    }

    /// Whether users a and b have emails that differ only by Unicode normalisation (`EmailKeys.lookalike`).
    func unicodeLookalikes(_ a: Int, _ b: Int) -> Bool {
        guard let x = lookalike[Int32(a)], let y = lookalike[Int32(b)] else { return false }
        return x.0 == y.0 && x.1 != y.1
    }

    func close(_ a: Int, _ b: Int) -> Bool {
        created[a] != Self.unknownTime && created[b] != Self.unknownTime && abs(created[a] - created[b]) <= windowMs
    }
}

/// Scores the pairs the blocking proposes and keeps those at or above the threshold.
struct PairScorer {
    var population: Population
    let minPoints: Int
    var found: [ReferencePair] = []
    var pairsScored = 0
    var nameGroups = 0

    init(population: Population, minPoints: Int) {
        self.population = population
        self.minPoints = minPoints
    }

    private mutating func score(_ a: Int, _ b: Int) {
        pairsScored += 1
        var points = 0
        if population.nameKey[a] != 0 && population.nameKey[a] == population.nameKey[b] {
            points += population.groupSize[a] <= Int32(SplitIdentityFinder.Points.uncommonNameLimit)
                ? SplitIdentityFinder.Points.uncommonName : SplitIdentityFinder.Points.commonName
        }
        if population.close(a, b) { points += SplitIdentityFinder.Points.createdClose }
        if population.relay[a] != population.relay[b] { points += SplitIdentityFinder.Points.relayPair }
        if !population.lookalike.isEmpty, population.unicodeLookalikes(a, b) { points += SplitIdentityFinder.Points.sameEmailUnicode }
        if population.mailboxKey[a] != 0 && population.mailboxKey[a] == population.mailboxKey[b] && population.domainKey[a] != population.domainKey[b] {
            points += SplitIdentityFinder.Points.sameMailbox
        }
        // The session checks cost the most: skip them when they cannot lift the pair over the threshold.
        if points + SplitIdentityFinder.Points.sharedIP + SplitIdentityFinder.Points.sharedUserAgent < minPoints { return }
        if population.shareIP(a, b) { points += SplitIdentityFinder.Points.sharedIP }
        // Once the pair is kept, the user agent is checked too, so that its rank matches its explained score.
        if points + SplitIdentityFinder.Points.sharedUserAgent >= minPoints, population.shareAgent(a, b) {
            points += SplitIdentityFinder.Points.sharedUserAgent
        }
        if points >= minPoints {
            found.append(ReferencePair(first: Int32(min(a, b)), second: Int32(max(a, b)), points: min(points, 100)))
        }
    }

    /// Groups by normalised name; inside a group, pairs created within the window (a sliding window
    /// over the group sorted by time) and pairs sharing a session IP address.
    mutating func scoreNameGroups() {
        let nameKey = population.nameKey, created = population.created
        // Sorting the keys themselves (not indexes into the key arrays) keeps the comparisons in cache.
        var keyed: [(UInt64, Int64, Int32)] = []
        keyed.reserveCapacity(population.count)
        for index in 0..<population.count where nameKey[index] != 0 && !population.excluded[index] {
            keyed.append((nameKey[index], created[index], Int32(index)))
        }
        keyed.sort { $0 < $1 }
        let order = keyed.map(\.2)
        keyed = []
        var groups: [Range<Int>] = []
        var start = 0
        while start < order.count {
            var end = start + 1
            while end < order.count && nameKey[Int(order[end])] == nameKey[Int(order[start])] { end += 1 }
            if end - start >= 2 {
                groups.append(start..<end)
                for member in order[start..<end] { population.groupSize[Int(member)] = Int32(end - start) }
            }
            start = end
        }
        nameGroups = groups.count
        // Groups are independent: every other one is scored on the second core, by a scorer of its own that
        // shares the (no longer changing) population. The pairs are sorted by score later, so the order in
        // which the two halves are found does not show.
        let population = self.population, minPoints = self.minPoints, groupRanges = groups
        let odd = BackgroundJob { () -> ([ReferencePair], Int) in
            var scorer = PairScorer(population: population, minPoints: minPoints)
            for k in stride(from: 1, to: groupRanges.count, by: 2) { scorer.scoreGroup(order[groupRanges[k]].map(Int.init)) }
            return (scorer.found, scorer.pairsScored)
        }
        for k in stride(from: 0, to: groups.count, by: 2) { scoreGroup(order[groups[k]].map(Int.init)) }
        let (found, scored) = odd.wait()
        self.found += found
        pairsScored += scored
    }

    private mutating func scoreGroup(_ group: [Int]) {
        if group.count <= SplitIdentityFinder.Points.uncommonNameLimit {
            // An uncommon name is evidence on its own: every pair of the group is scored.
            for i in 0..<group.count { for j in (i + 1)..<group.count { score(group[i], group[j]) } }
            return
        }
        if group.count <= SplitIdentityFinder.maxGroupForTimePairs {
            for i in 0..<group.count {
                var j = i + 1
                while j < group.count && population.close(group[i], group[j]) {
                    score(group[i], group[j])
                    j += 1
                }
            }
        }
        // Pairs sharing an IP address but created further apart than the window.
        var byIP: [(UInt64, Int)] = []
        for member in group {
            for slot in Int(population.sessionStart[member])..<Int(population.sessionStart[member + 1]) where population.ipKeys[slot] != 0 {
                byIP.append((population.ipKeys[slot], member))
            }
        }
        guard byIP.count >= 2 else { return }
        byIP.sort { $0 < $1 }
        var seen = Set<UInt64>()
        var start = 0
        while start < byIP.count {
            var end = start + 1
            while end < byIP.count && byIP[end].0 == byIP[start].0 { end += 1 }
            var members: [Int] = []
            for k in start..<end where members.last != byIP[k].1 { members.append(byIP[k].1) }
            if members.count >= 2 && members.count <= SplitIdentityFinder.maxUsersPerSharedIP {
                for i in 0..<members.count {
                    for j in (i + 1)..<members.count {
                        let a = members[i], b = members[j]
                        if population.close(a, b) { continue } // already scored by the time window
                        if seen.insert(UInt64(min(a, b)) << 32 | UInt64(max(a, b))).inserted { score(a, b) }
                    }
                }
            }
            start = end
        }
    }

    /// Pairs users whose (non-ASCII) emails differ only by Unicode normalisation; pairs already found are skipped.
    mutating func scoreLookalikeEmails() {
        guard !population.lookalike.isEmpty else { return }
        var seen = Set(found.map { UInt64(UInt32($0.first)) << 32 | UInt64(UInt32($0.second)) })
        let byKey = Dictionary(grouping: population.lookalike.filter { !population.excluded[Int($0.key)] }, by: { $0.value.0 })
        for (_, members) in byKey where members.count >= 2 && members.count <= SplitIdentityFinder.maxUsersPerMailbox {
            let indexes = members.map { Int($0.key) }.sorted()
            for i in 0..<indexes.count {
                for j in (i + 1)..<indexes.count where population.unicodeLookalikes(indexes[i], indexes[j]) {
                    let (a, b) = (indexes[i], indexes[j])
                    if seen.insert(UInt64(a) << 32 | UInt64(b)).inserted { score(a, b) }
                }
            }
        }
    }

    /// Groups by email mailbox (`ana.costa` at two domains); pairs the name pass already scored are skipped.
    mutating func scoreMailboxGroups() {
        let mailbox = population.mailboxKey
        var keyed: [(UInt64, Int32)] = []
        for index in 0..<population.count where mailbox[index] != 0 && !population.excluded[index] {
            keyed.append((mailbox[index], Int32(index)))
        }
        keyed.sort { $0 < $1 }
        let order = keyed.map(\.1)
        keyed = []
        var start = 0
        while start < order.count {
            var end = start + 1
            while end < order.count && mailbox[Int(order[end])] == mailbox[Int(order[start])] { end += 1 }
            if end - start >= 2 && end - start <= SplitIdentityFinder.maxUsersPerMailbox {
                for i in start..<end {
                    for j in (i + 1)..<end {
                        let a = Int(order[i]), b = Int(order[j])
                        guard population.domainKey[a] != population.domainKey[b] else { continue }
                        let sameName = population.nameKey[a] != 0 && population.nameKey[a] == population.nameKey[b]
                        let scoredByName = population.groupSize[a] <= Int32(SplitIdentityFinder.Points.uncommonNameLimit)
                            || population.close(a, b) || population.shareIP(a, b)
                        if sameName && scoredByName { continue }
                        score(a, b)
                    }
                }
            }
            start = end
        }
    }
}
