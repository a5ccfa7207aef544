import Storage

/// Why a pair of users looks like one person, and how much that counts.
public struct SplitIdentityReason: Sendable, Codable, Equatable {
    /// `name_match`, `shared_ip`, `same_email_unicode`, `same_mailbox`, `created_close`, `relay_pair`, `shared_user_agent`.
    public let code: String
    /// Points out of 100 this reason adds to the score.
    public let points: Int
    public let detail: String
}

/// One side of a candidate pair.
public struct SplitIdentityUser: Sendable, Codable, Equatable {
    public let id: BetterAuthUserID
    public let name: String
    public let email: String
    public let createdAt: Timestamp?
    public let providers: [String]
    public let privateRelay: Bool
}

/// Two users who are probably one person split in two.
public struct SplitIdentityCandidate: Sendable, Codable, Equatable {
    /// 0 to 1: the sum of the reasons' points, capped at 100, over 100.
    public let score: Double
    /// The user created first (typically the Apple one, kept by a merge).
    public let earlier: SplitIdentityUser
    public let later: SplitIdentityUser
    /// Best first.
    public let reasons: [SplitIdentityReason]
}

/// What `users duplicates` found.
public struct SplitIdentityReport: Sendable, Codable, Equatable {
    public let usersScanned: Int
    public let sessionsScanned: Int
    /// Groups of two or more users sharing a normalised name.
    public let nameGroups: Int
    /// Pairs scored (the blocking keeps this far below n²).
    public let pairsScored: Int
    /// Pairs at or above the minimum score; `candidates` holds the best `limit` of them.
    public let pairsFound: Int
    public let minScore: Double
    public let windowDays: Int
    /// Whether merge records exist and were used to leave merged users out.
    public let mergeRecordsChecked: Bool
    public let usersExcludedAsMerged: Int
    public let candidates: [SplitIdentityCandidate]
}

/// Finds likely split identities: the same human as two Better Auth users, typically an Apple user
/// behind a private-relay email and a Google user created days later (see the iOS sign-in plan).
///
/// Built for a million users in seconds and well under 500 MB: one scan of `user` and one of
/// `session` fill compact arrays of 64-bit keys (no strings kept); users are grouped by normalised
/// name (and, separately, by email mailbox); only pairs inside a group that were created within the
/// window or share a session IP address are scored. The best pairs are then re-read and explained.
///
///     let report = try SplitIdentityFinder(store: store).find(minScore: 0.7, limit: 20)
public struct SplitIdentityFinder {
    public let store: Store

    public init(store: Store) { self.store = store }

    /// Points per reason (out of 100).
    public enum Points {
        /// Same normalised name, shared by at most `uncommonNameLimit` users.
        public static let uncommonName = 40
        /// Same normalised name, shared by more users: weaker evidence.
        public static let commonName = 25
        public static let uncommonNameLimit = 5
        public static let sharedIP = 30
        public static let sameMailbox = 30
        /// Emails a person reads as one that Better Auth takes for two: equal after JavaScript's `toLowerCase()` and
        /// Unicode normalisation, different in code units (`é` composed and decomposed). Better Auth compares with
        /// `===` and never normalises, so implicit linking could not find the first user.
        public static let sameEmailUnicode = 60
        public static let createdClose = 15
        public static let relayPair = 15
        public static let sharedUserAgent = 5
    }

    /// A session IP shared by more members of one name group than this is a NAT or a carrier, not evidence.
    static let maxUsersPerSharedIP = 50
    /// A mailbox (`info`, `admin`) used by more users than this is generic, not evidence.
    static let maxUsersPerMailbox = 20
    /// Name groups larger than this are paired by shared IPs only, not by creation time.
    static let maxGroupForTimePairs = 20_000

    /// Finds candidate pairs with a score of at least `minScore`, best first, at most `limit`.
    public func find(minScore: Double = 0.7, limit: Int = 50, windowDays: Int = 30) throws -> SplitIdentityReport {
        guard minScore.isFinite, (0...1).contains(minScore) else {
            throw GatehouseError.invalid("the minimum score must be between 0 and 1, got \(minScore)", fix: "use e.g. \(field: .minScore) 0.7")
        }
        guard (1...3650).contains(windowDays) else {
            throw GatehouseError.invalid("the window must be 1 to 3650 days, got \(windowDays)")
        }
        let minPoints = Int((minScore * 100).rounded())
        return try store.db.read {
            let merged = try MergeLedger.mergedUserIDs(store.db)
            let mergeTable = try store.db.tableExists(MergeLedger.table)
            var population = try Population.load(store, merged: merged)
            population.windowMs = Int64(windowDays) * 86_400_000
            var scorer = PairScorer(population: population, minPoints: minPoints)
            scorer.scoreNameGroups()
            scorer.scoreMailboxGroups()
            scorer.scoreLookalikeEmails()
            var pairs = scorer.found
            pairs.sort { ($0.points, $1.first, $1.second) > ($1.points, $0.first, $0.second) }
            var candidates: [SplitIdentityCandidate] = []
            for pair in pairs {
                guard candidates.count < limit else { break }
                if let candidate = try explain(pair, population: scorer.population, minPoints: minPoints) { candidates.append(candidate) }
            }
            candidates.sort { $0.score > $1.score } // stable: a collision-corrected score never reorders equals
            return SplitIdentityReport(usersScanned: population.count, sessionsScanned: population.sessionCount,
                                       nameGroups: scorer.nameGroups, pairsScored: scorer.pairsScored, pairsFound: pairs.count,
                                       minScore: Double(minPoints) / 100, windowDays: windowDays, mergeRecordsChecked: mergeTable,
                                       usersExcludedAsMerged: population.excludedCount, candidates: candidates)
        }
    }

    // MARK: - explaining one pair from the store's rows

    private struct Facts {
        let user: SplitIdentityUser
        let ips: [String]
        let agents: [String]
        let address: EmailAddress
    }

    private func facts(rowid: Int64) throws -> Facts? {
        let s = store.schema, db = store.db
        guard let row = try db.row("SELECT \(s.user.col(.id)), \(s.user.col(.name)), \(s.user.col(.email)), \(s.user.col(.createdAt)) FROM \(s.user.sql) WHERE \(db.dialect.rowLocatorCondition)", [db.dialect.rowLocatorArgument(rowid)]),
              let id = row[0].string else { return nil }
        let providers = try db.rows("SELECT DISTINCT \(s.account.col(.providerId)) FROM \(s.account.sql) WHERE \(s.account.col(.userId)) = ? ORDER BY 1", [id])
            .compactMap { $0[0].string }
        var ips: [String] = [], agents: [String] = []
        try db.forEach("SELECT \(s.session.col(.ipAddress)), \(s.session.col(.userAgent)) FROM \(s.session.sql) WHERE \(s.session.col(.userId)) = ?", [id]) { session in
            if let ip = session[0].string, !ip.isEmpty, !ips.contains(ip) { ips.append(ip) }
            if let agent = session[1].string, !agent.isEmpty, !agents.contains(agent) { agents.append(agent) }
        }
        let email = row[2].string ?? ""
        let address = EmailAddress(email)
        return Facts(user: SplitIdentityUser(id: BetterAuthUserID(id), name: row[1].string ?? "", email: email, createdAt: DateEncoding.decode(row[3]),
                                             providers: providers, privateRelay: address.isPrivateRelay),
                     ips: ips, agents: agents, address: address)
    }

    private func explain(_ pair: ScoredPair, population: Population, minPoints: Int) throws -> SplitIdentityCandidate? {
        guard var first = try facts(rowid: population.rowids[Int(pair.first)]),
              var second = try facts(rowid: population.rowids[Int(pair.second)]) else { return nil }
        if (second.user.createdAt ?? Timestamp(milliseconds: .max)) < (first.user.createdAt ?? Timestamp(milliseconds: .max)) { swap(&first, &second) }
        var reasons: [SplitIdentityReason] = []
        var normalizer = NameNormalizer()
        let nameKey = normalizer.key(first.user.name)
        if nameKey != 0 && nameKey == normalizer.key(second.user.name) {
            let size = Int(population.groupSize[Int(pair.first)])
            reasons.append(size <= Points.uncommonNameLimit
                ? SplitIdentityReason(code: "name_match", points: Points.uncommonName, detail: "same name \"\(first.user.name)\"")
                : SplitIdentityReason(code: "name_match", points: Points.commonName, detail: "same name \"\(first.user.name)\" (common: \(size) users share it)"))
        }
        let sharedIPs = first.ips.filter(second.ips.contains)
        if !sharedIPs.isEmpty {
            reasons.append(SplitIdentityReason(code: "shared_ip", points: Points.sharedIP,
                                               detail: "sessions from the same IP address\(sharedIPs.count > 1 ? "es" : "") \(sharedIPs.prefix(3).joined(separator: ", "))"))
        }
        if JavaScriptString.differOnlyByNormalisation(first.user.email, second.user.email) {
            reasons.append(SplitIdentityReason(code: "same_email_unicode", points: Points.sameEmailUnicode,
                                               detail: "the same email \"\(first.user.email)\" as a person reads it, in different code units (Unicode normalisation): Better Auth compares toLowerCase() with ===, so sign-in made a second user"))
        }
        // Compared as Better Auth compares (code units, no normalisation), not with Swift's canonical `==`.
        if first.address.isPresent, second.address.isPresent, !first.address.isPrivateRelay, !second.address.isPrivateRelay,
           JavaScriptString.strictEquals(first.address.mailbox, second.address.mailbox),
           !JavaScriptString.strictEquals(first.address.domain, second.address.domain) {
            reasons.append(SplitIdentityReason(code: "same_mailbox", points: Points.sameMailbox,
                                               detail: "same mailbox \"\(first.address.mailbox)\" at \(first.address.domain) and \(second.address.domain)"))
        }
        if let a = first.user.createdAt, let b = second.user.createdAt, b.milliseconds - a.milliseconds <= population.windowMs {
            reasons.append(SplitIdentityReason(code: "created_close", points: Points.createdClose, detail: "created \(Self.describe(milliseconds: b.milliseconds - a.milliseconds)) apart"))
        }
        if first.user.privateRelay != second.user.privateRelay {
            let relay = first.user.privateRelay ? first : second
            reasons.append(SplitIdentityReason(code: "relay_pair", points: Points.relayPair,
                                               detail: "one private-relay email (\(relay.user.providers.joined(separator: "+").isEmpty ? "no account" : relay.user.providers.joined(separator: "+"))) and one real address: auto-linking could not match them"))
        }
        let sharedAgents = first.agents.filter(second.agents.contains)
        if let agent = sharedAgents.first {
            reasons.append(SplitIdentityReason(code: "shared_user_agent", points: Points.sharedUserAgent, detail: "same user agent \"\(agent.prefix(80))\""))
        }
        let points = min(100, reasons.reduce(0) { $0 + $1.points })
        guard points >= minPoints else { return nil } // a 64-bit key collision, caught on the real rows
        let order = ["same_email_unicode", "name_match", "shared_ip", "same_mailbox", "created_close", "relay_pair", "shared_user_agent"]
        reasons.sort { ($0.points, order.firstIndex(of: $1.code) ?? 0) > ($1.points, order.firstIndex(of: $0.code) ?? 0) }
        return SplitIdentityCandidate(score: Double(points) / 100, earlier: first.user, later: second.user, reasons: reasons)
    }

    static func describe(milliseconds: Int64) -> String {
        let hours = milliseconds / 3_600_000
        if hours < 48 { return hours == 1 ? "1 hour" : "\(hours) hours" }
        return "\(hours / 24) days"
    }
}

/// A pair that reached the minimum score, by population index.
struct ScoredPair: Sendable {
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
    static let unknownTime = Int64.min / 4

    static func load(_ store: Store, merged: Set<String>) throws -> Population {
        let s = store.schema, db = store.db
        var population = Population()
        var normalizer = NameNormalizer()
        // Sessions are read on a second connection meanwhile (both cores); its snapshot may be a moment newer,
        // and a session whose user this scan did not see is skipped, as a session of a missing user always is.
        let background = SecondConnection(store.location) { db in try SessionKeys.read(db, schema: s) }
        let userCount = Int(try db.scalar("SELECT count(*) FROM \(s.user.sql)").int64 ?? 0)
        var indexByID = UserKeyTable(capacity: userCount)
        for array in [\Population.nameKey, \.mailboxKey, \.domainKey] { population[keyPath: array].reserveCapacity(userCount) }
        population.rowids.reserveCapacity(userCount)
        population.created.reserveCapacity(userCount)

        let dialect = db.dialect
        try db.forEach("SELECT \(dialect.rowLocatorColumn), \(s.user.col(.id)), \(s.user.col(.name)), \(s.user.col(.email)), \(s.user.col(.createdAt)) FROM \(s.user.sql)", []) { users in
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

    /// A creation time in milliseconds (`unknownTime` when unreadable). Better Auth's own form,
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, is read in place; every other form goes through `DateEncoding`.
    static func createdMilliseconds(_ value: SQLValue) -> Int64 {
        if case .text(var text) = value, let milliseconds = text.withUTF8(isoMilliseconds) { return milliseconds }
        return DateEncoding.decode(value)?.milliseconds ?? unknownTime
    }

    /// Milliseconds of exactly `YYYY-MM-DDTHH:MM:SS.mmmZ`, with the ranges `Timestamp(iso8601:)` accepts; nil otherwise.
    static func isoMilliseconds(_ utf8: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard utf8.count == 24, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-"), utf8[10] == UInt8(ascii: "T"),
              utf8[13] == UInt8(ascii: ":"), utf8[16] == UInt8(ascii: ":"), utf8[19] == UInt8(ascii: "."), utf8[23] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ start: Int, _ width: Int) -> Int64? {
            var value: Int64 = 0
            for offset in start..<(start + width) {
                let digit = utf8[offset] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
              let minute = number(14, 2), let second = number(17, 2), let fraction = number(20, 3),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        return Timestamp.days(year: year, month: month, day: day) * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + fraction
    }

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
    var found: [ScoredPair] = []
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
            found.append(ScoredPair(first: Int32(min(a, b)), second: Int32(max(a, b)), points: min(points, 100)))
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
        let odd = BackgroundJob { () -> ([ScoredPair], Int) in
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
