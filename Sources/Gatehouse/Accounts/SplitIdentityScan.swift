import Storage

/// A pair that reached the minimum score: the users' scan positions (`first` < `second`), their row locators, and
/// the size of the first user's name group (for the explanation).
struct ScoredPair: Sendable, Equatable {
    let first: Int32
    let second: Int32
    let points: Int
    let firstRowid: Int64
    let secondRowid: Int64
    let groupSize: Int32
}

/// What a duplicates scan counted, and its pairs best first (points, then scan positions).
struct SplitIdentityScanResult {
    var usersScanned = 0
    var sessionsScanned = 0
    var nameGroups = 0
    var pairsScored = 0
    var pairsFound = 0
    var excluded = 0
    /// The next pair, best first; nil at the end.
    var nextPair: () throws -> ScoredPair? = { nil }
}

/// The duplicates scan in bounded memory: every user and session is reduced to 64-bit keys and passed through
/// `ExternalSorter`s (in memory while small, temporary-file runs and a k-way merge when large), so that only one name
/// group, mailbox or lookalike email is held at a time:
///
/// 1. users by id key, sessions by user id key (on a second connection meanwhile), merged to attach each user's
///    session keys (`SplitIdentityMember`);
/// 2. members by (name key, creation time, scan position): each name group is scored as it streams past, then its
///    members go on to
/// 3. members by (mailbox key, position), and the few with non-ASCII emails by (lookalike key, position);
/// 4. the pairs found, by (points descending, positions).
///
/// The blocking and the scoring are those of the tests' in-memory oracle (`SplitIdentityReference`), pair for pair, so the report is
/// the same: tested on both engines. One difference in the work, not the result: inside a common name's group, when
/// the threshold is above what a common name, the time window, a relay/real pair and a shared user agent add up to,
/// only window pairs that also share an IP address, a mailbox or a lookalike email are visited (the others are
/// counted in `pairsScored`, as scored, without being visited). That keeps the time about linear in the users where
/// visiting every window pair grew with the square of a name's popularity. Kept for ops/bench's `users duplicates`
/// row (< 10 s at 1M, < 60 s and < 500 MB at 10M).
///
/// Memory is the sorters' buffers (`sorterBudget` each, four at most filling at once) plus the largest name group
/// (about 150 bytes a member: a name shared by a million users would hold 150 MB). The temporary file takes about
/// 300 bytes a user at its largest (818 MB at 3M users), in `TMPDIR`.
struct SplitIdentityScan {
    let store: Store
    let merged: Set<String>
    let windowMs: Int64
    let minPoints: Int
    /// Memory each sorter may buffer before it writes a run (up to four are filling at once, and Swift's arrays
    /// may hold twice what they use while they grow).
    var sorterBudget = Self.defaultSorterBudget

    static let defaultSorterBudget = 40 << 20

    typealias Points = SplitIdentityFinder.Points

    /// Unknown creation times sort first and are never "close" to anything.
    static let unknownTime = Int64.min / 4

    /// The most a pair of one common name's time window can score without a shared IP, mailbox or lookalike email.
    static let densePoints = Points.commonName + Points.createdClose + Points.relayPair + Points.sharedUserAgent

    func run() throws -> SplitIdentityScanResult {
        var result = SplitIdentityScanResult()
        let s = store.schema, db = store.db, budget = sorterBudget

        let byName = ExternalSorter(budgetBytes: budget)
        let forward = Forwarder(budget: budget)
        do { // the user and session sorters (and their temporary file) are released when the join is done
            // 1. Sessions on a second connection, users on this one, each into a sorter by user id key.
            let background = SecondConnection(store.location, caller: db) { db in try Self.sortSessions(db, schema: s, budget: budget) }
            let users = ExternalSorter(budgetBytes: budget)
            var normalizer = NameNormalizer()
            let dialect = db.dialect
            var index: Int32 = 0
            try db.scan(s.user.sql, columns: [dialect.rowLocatorColumn, s.user.col(.id), s.user.col(.name), s.user.col(.email), s.user.col(.createdAt)],
                        where: nil, [], orderedBy: nil) { row in
                guard let id = row[1].string else { return }
                let isMerged = !merged.isEmpty && merged.contains(id)
                if isMerged { result.excluded += 1 }
                let emailText = row[3].string ?? ""
                let email = EmailKeys(emailText)
                let lookalike = EmailKeys.lookalikeKeys(emailText)
                let member = SplitIdentityMember(index: index, rowid: dialect.rowLocator(row[0]) ?? 0, nameKey: normalizer.key(row[2].string ?? ""),
                                                 created: Self.createdMilliseconds(row[4]), mailbox: email.mailbox, domain: email.domain,
                                                 relay: email.isPrivateRelay, lookalike: lookalike?.lookalike ?? 0, exact: lookalike?.exact ?? 0)
                // The merged flag rides in the key's last part; a merged user still takes its sessions (as in the reference), then is dropped.
                try users.append(ExternalSorter.Key(FNV1a.hash(id), UInt64(UInt32(bitPattern: index)), isMerged ? 1 : 0)) { member.write(&$0) }
                index += 1
            }
            result.usersScanned = Int(index)
            let sessions: ExternalSorter
            do {
                sessions = try background.wait()
            } catch {
                sessions = try Self.sortSessions(db, schema: s, budget: budget) // no second connection (e.g. a read-only folder): one core
            }

            // 2. Join, and sort by name.
            let userStream = try users.sorted(), sessionStream = try sessions.sorted()
            typealias Session = (user: UInt64, ip: UInt64, agent: UInt64)
            func nextSession() throws -> Session? { try sessionStream.next { key, reader in (key.a, reader.u64(), reader.u64()) } }
            func nextUser() throws -> (key: ExternalSorter.Key, member: SplitIdentityMember)? {
                try userStream.next { key, reader in (key, SplitIdentityMember(&reader)) }
            }
            var session = try nextSession()
            var pending = try nextUser()
            while let (key, user) = pending {
                var member = user
                pending = try nextUser()
                // Two ids with one 64-bit key: the sessions go to the later user, as the in-memory table's last write did.
                if let following = pending, following.key.a == key.a {
                    if key.c == 0 { try route(member, byName: byName, forward: forward) }
                    continue
                }
                while let current = session, current.user < key.a { session = try nextSession() }
                var count = 0, later: [UInt64] = []
                while let current = session, current.user == key.a {
                    if count < 64 {
                        if current.ip != 0 && !member.ips64.contains(current.ip) { member.ips64.append(current.ip) }
                        if current.agent != 0 && !member.agents64.contains(current.agent) { member.agents64.append(current.agent) }
                    } else if current.ip != 0 {
                        later.append(current.ip)
                    }
                    count += 1
                    session = try nextSession()
                }
                if !later.isEmpty {
                    later.sort()
                    var last: UInt64 = 0
                    for ip in later where ip != last {
                        last = ip
                        if !member.ips64.contains(ip) { member.laterIPs.append(ip) }
                    }
                }
                result.sessionsScanned += count
                if key.c == 0 { try route(member, byName: byName, forward: forward) }
            }
        }

        // 3. Name groups, one at a time; their members go on to the mailbox and lookalike sorters.
        var scorer = GroupScorer(windowMs: windowMs, minPoints: minPoints, budget: budget)
        let nameStream = try byName.sorted()
        var group: [SplitIdentityMember] = []
        func finishGroup() throws {
            if group.count >= 2 {
                result.nameGroups += 1
                for position in group.indices { group[position].groupSize = Int32(group.count) }
                try scorer.scoreNameGroup(group)
            }
            for member in group { try forward.add(member) }
            group.removeAll(keepingCapacity: group.count < 100_000)
        }
        while let member = try nameStream.next({ _, reader in SplitIdentityMember(&reader) }) {
            if let first = group.first, first.nameKey != member.nameKey { try finishGroup() }
            group.append(member)
        }
        try finishGroup()

        // 4. Mailbox groups (2 to 20 users), then lookalike emails.
        try scorer.scoreMailboxes(try forward.byMailbox.sorted())
        try scorer.scoreLookalikes(try forward.byLookalike.sorted())

        result.pairsScored = scorer.pairsScored
        result.pairsFound = scorer.found.count
        let found = try scorer.found.sorted()
        result.nextPair = {
            try found.next { key, reader in
                ScoredPair(first: Int32(truncatingIfNeeded: key.b), second: Int32(truncatingIfNeeded: key.c), points: 100 - Int(key.a),
                           firstRowid: reader.i64(), secondRowid: reader.i64(), groupSize: Int32(bitPattern: reader.u32()))
            }
        }
        return result
    }

    /// A member with a name goes to the name sorter; one without goes straight on to the mailbox and lookalike passes.
    private func route(_ member: SplitIdentityMember, byName: ExternalSorter, forward: Forwarder) throws {
        if member.nameKey != 0 {
            try byName.append(ExternalSorter.Key(member.nameKey, ExternalSorter.ordered(member.created), UInt64(UInt32(bitPattern: member.index)))) {
                member.write(&$0)
            }
        } else {
            try forward.add(member)
        }
    }

    /// Every session's keys, sorted by (user id key, position in the session table).
    static func sortSessions(_ db: SQLDatabase, schema: AuthSchema, budget: Int) throws -> ExternalSorter {
        let s = schema.session
        let sorter = ExternalSorter(budgetBytes: budget)
        var position: UInt64 = 0
        try db.scan(s.sql, columns: [s.col(.userId), s.col(.ipAddress), s.col(.userAgent)], where: nil, [], orderedBy: nil) { row in
            guard let userID = row[0].string else { return }
            let ip = row[1].string ?? "", agent = row[2].string ?? ""
            let ipKey = ip.isEmpty ? 0 : FNV1a.hash(ip), agentKey = agent.isEmpty ? 0 : FNV1a.hash(agent)
            try sorter.append(ExternalSorter.Key(FNV1a.hash(userID), position, 0)) { $0.u64(ipKey); $0.u64(agentKey) }
            position += 1
        }
        return sorter
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
}

/// Sends members past the name pass on to the mailbox and lookalike sorters.
private struct Forwarder {
    let byMailbox: ExternalSorter
    let byLookalike: ExternalSorter

    init(budget: Int) {
        byMailbox = ExternalSorter(budgetBytes: budget)
        byLookalike = ExternalSorter(budgetBytes: budget / 4)
    }

    func add(_ member: SplitIdentityMember) throws {
        let position = UInt64(UInt32(bitPattern: member.index))
        if member.mailbox != 0 { try byMailbox.append(ExternalSorter.Key(member.mailbox, position, 0)) { member.write(&$0) } }
        if member.lookalike != 0 { try byLookalike.append(ExternalSorter.Key(member.lookalike, position, 0)) { member.write(&$0) } }
    }
}

/// Scores the pairs the blocking proposes, group by group, and keeps those at or above the threshold.
private struct GroupScorer {
    let windowMs: Int64
    let minPoints: Int
    var pairsScored = 0
    /// The pairs found, by (100 − points, first, second).
    let found: ExternalSorter
    /// Found pairs of two users who both have non-ASCII emails: the lookalike pass skips these, as it skipped every found pair.
    var foundLookalikePairs = Set<UInt64>()

    typealias Points = SplitIdentityFinder.Points
    typealias Member = SplitIdentityMember

    init(windowMs: Int64, minPoints: Int, budget: Int) {
        self.windowMs = windowMs
        self.minPoints = minPoints
        found = ExternalSorter(budgetBytes: budget / 2)
    }

    func close(_ a: Member, _ b: Member) -> Bool {
        a.created != SplitIdentityScan.unknownTime && b.created != SplitIdentityScan.unknownTime && abs(a.created - b.created) <= windowMs
    }

    /// The pair's points, or nil below the threshold: the in-memory finder's `score`, reason for reason.
    func points(_ a: Member, _ b: Member) -> Int? {
        var points = 0
        if a.nameKey != 0 && a.nameKey == b.nameKey {
            points += a.groupSize <= Int32(Points.uncommonNameLimit) ? Points.uncommonName : Points.commonName
        }
        if close(a, b) { points += Points.createdClose }
        if a.relay != b.relay { points += Points.relayPair }
        if a.lookalike != 0 && a.lookalike == b.lookalike && a.exact != b.exact { points += Points.sameEmailUnicode }
        if a.mailbox != 0 && a.mailbox == b.mailbox && a.domain != b.domain { points += Points.sameMailbox }
        if points + Points.sharedIP + Points.sharedUserAgent < minPoints { return nil }
        if a.sharesIP(with: b) { points += Points.sharedIP }
        if points + Points.sharedUserAgent >= minPoints, a.sharesAgent(with: b) { points += Points.sharedUserAgent }
        return points >= minPoints ? min(points, 100) : nil
    }

    /// Scores one pair (counted) and keeps it when it reaches the threshold.
    mutating func score(_ a: Member, _ b: Member) throws {
        pairsScored += 1
        try keep(a, b)
    }

    /// Scores one pair without counting it (already counted) and keeps it when it reaches the threshold.
    mutating func keep(_ a: Member, _ b: Member) throws {
        guard let points = points(a, b) else { return }
        let (first, second) = a.index < b.index ? (a, b) : (b, a)
        try found.append(ExternalSorter.Key(UInt64(100 - points), UInt64(UInt32(bitPattern: first.index)), UInt64(UInt32(bitPattern: second.index)))) {
            $0.i64(first.rowid); $0.i64(second.rowid); $0.u32(UInt32(bitPattern: first.groupSize))
        }
        if first.lookalike != 0 && second.lookalike != 0 { foundLookalikePairs.insert(Self.pairKey(first.index, second.index)) }
    }

    static func pairKey(_ a: Int32, _ b: Int32) -> UInt64 { UInt64(UInt32(bitPattern: min(a, b))) << 32 | UInt64(UInt32(bitPattern: max(a, b))) }

    /// One name group, sorted by (creation time, scan position): every pair of an uncommon name; pairs created within
    /// the window; pairs sharing a session IP address further apart.
    mutating func scoreNameGroup(_ group: [Member]) throws {
        if group.count <= Points.uncommonNameLimit {
            for i in 0..<group.count { for j in (i + 1)..<group.count { try score(group[i], group[j]) } }
            return
        }
        if group.count <= SplitIdentityFinder.maxGroupForTimePairs {
            if minPoints > SplitIdentityScan.densePoints {
                try scoreWindowPairsSharingEvidence(group)
            } else {
                for i in 0..<group.count {
                    var j = i + 1
                    while j < group.count && close(group[i], group[j]) {
                        try score(group[i], group[j])
                        j += 1
                    }
                }
            }
        }
        // Pairs sharing an IP address (any session) but created further apart than the window.
        var byIP: [(ip: UInt64, index: Int32, position: Int32)] = []
        for (position, member) in group.enumerated() {
            for ip in member.ips64 { byIP.append((ip, member.index, Int32(position))) }
            for ip in member.laterIPs { byIP.append((ip, member.index, Int32(position))) }
        }
        guard byIP.count >= 2 else { return }
        byIP.sort { ($0.ip, $0.index) < ($1.ip, $1.index) }
        var seen = Set<UInt64>()
        var start = 0
        while start < byIP.count {
            var end = start + 1
            while end < byIP.count && byIP[end].ip == byIP[start].ip { end += 1 }
            if end - start >= 2 && end - start <= SplitIdentityFinder.maxUsersPerSharedIP {
                let members = byIP[start..<end].map { group[Int($0.position)] }
                for i in 0..<members.count {
                    for j in (i + 1)..<members.count {
                        let a = members[i], b = members[j]
                        if close(a, b) { continue } // already scored by the time window
                        if seen.insert(Self.pairKey(a.index, b.index)).inserted { try score(a, b) }
                    }
                }
            }
            start = end
        }
    }

    /// The window pairs of a common name when the threshold is above `densePoints`: only a pair that also shares an
    /// IP address (first 64 sessions), a mailbox or a lookalike email can reach it, so only those are visited; the
    /// rest are counted.
    private mutating func scoreWindowPairsSharingEvidence(_ group: [Member]) throws {
        // Count every window pair (two pointers over the creation times).
        var j = 0
        for i in 0..<group.count where group[i].created != SplitIdentityScan.unknownTime {
            if j < i + 1 { j = i + 1 }
            while j < group.count && group[j].created - group[i].created <= windowMs { j += 1 }
            pairsScored += j - i - 1
        }
        // (evidence kind, key, position): 0 an IP address, 1 a mailbox, 2 a lookalike email.
        var keyed: [(kind: UInt8, key: UInt64, position: Int32)] = []
        for (position, member) in group.enumerated() where member.created != SplitIdentityScan.unknownTime {
            for ip in member.ips64 { keyed.append((0, ip, Int32(position))) }
            if member.mailbox != 0 { keyed.append((1, member.mailbox, Int32(position))) }
            if member.lookalike != 0 { keyed.append((2, member.lookalike, Int32(position))) }
        }
        keyed.sort { ($0.kind, $0.key, $0.position) < ($1.kind, $1.key, $1.position) }
        var pairs: [UInt64] = []
        var start = 0
        while start < keyed.count {
            var end = start + 1
            while end < keyed.count && keyed[end].key == keyed[start].key && keyed[end].kind == keyed[start].kind { end += 1 }
            for x in start..<end {
                let a = group[Int(keyed[x].position)]
                for y in (x + 1)..<end {
                    let b = group[Int(keyed[y].position)]
                    guard b.created - a.created <= windowMs else { break }
                    if keyed[y].position != keyed[x].position { pairs.append(UInt64(UInt32(keyed[x].position)) << 32 | UInt64(UInt32(keyed[y].position))) }
                }
            }
            start = end
        }
        pairs.sort()
        var last = UInt64.max
        for pair in pairs where pair != last {
            last = pair
            try keep(group[Int(pair >> 32)], group[Int(pair & 0xffff_ffff)])
        }
    }

    /// Calls `body` with each run of records sharing a key that holds 2 to `SplitIdentityFinder.maxUsersPerMailbox`
    /// members, in key order; a larger run is generic and skipped, its members past the limit not even decoded.
    private static func forEachSmallRun(_ stream: ExternalSorter.SortedStream, _ body: ([Member]) throws -> Void) throws {
        let limit = SplitIdentityFinder.maxUsersPerMailbox
        var run: [Member] = [], runKey: UInt64? = nil, overflow = false
        while let (key, member) = try stream.next({ key, reader -> (UInt64, Member?) in
            (key.a, key.a == runKey && overflow ? nil : Member(&reader))
        }) {
            if key != runKey {
                if !overflow && run.count >= 2 { try body(run) }
                run.removeAll(keepingCapacity: true)
                overflow = false
                runKey = key
            }
            guard let member, !overflow else { continue }
            run.append(member)
            if run.count > limit { overflow = true; run.removeAll(keepingCapacity: true) }
        }
        if !overflow && run.count >= 2 { try body(run) }
    }

    /// Groups by email mailbox (2 to 20 users); pairs the name pass already scored are skipped.
    mutating func scoreMailboxes(_ stream: ExternalSorter.SortedStream) throws {
        var runs: [[Member]] = []
        try Self.forEachSmallRun(stream) { runs.append($0); if runs.count >= 4096 { try scoreMailboxRuns(&runs) } }
        try scoreMailboxRuns(&runs)
    }

    private mutating func scoreMailboxRuns(_ runs: inout [[Member]]) throws {
        for run in runs {
            for i in 0..<run.count {
                for j in (i + 1)..<run.count {
                    let a = run[i], b = run[j]
                    guard a.domain != b.domain else { continue }
                    let sameName = a.nameKey != 0 && a.nameKey == b.nameKey
                    let scoredByName = a.groupSize <= Int32(Points.uncommonNameLimit) || close(a, b) || a.sharesIP(with: b)
                    if sameName && scoredByName { continue }
                    try score(a, b)
                }
            }
        }
        runs.removeAll(keepingCapacity: true)
    }

    /// Pairs users whose (non-ASCII) emails differ only by Unicode normalisation; pairs already found are skipped.
    mutating func scoreLookalikes(_ stream: ExternalSorter.SortedStream) throws {
        var runs: [[Member]] = []
        try Self.forEachSmallRun(stream) { runs.append($0) } // rare: emails with non-ASCII characters that share a lookalike key
        var seen = foundLookalikePairs
        for run in runs {
            for i in 0..<run.count {
                for j in (i + 1)..<run.count where run[i].exact != run[j].exact {
                    if seen.insert(Self.pairKey(run[i].index, run[j].index)).inserted { try score(run[i], run[j]) }
                }
            }
        }
    }
}
