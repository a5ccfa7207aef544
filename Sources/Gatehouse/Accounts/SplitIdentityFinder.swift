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
/// Built for ten million users in bounded memory: one scan of `user` and one of `session` reduce every row to
/// 64-bit keys (no strings kept), which `SplitIdentityScan` sorts by normalised name (and, separately, by email
/// mailbox) in temporary-file runs once they outgrow memory, so only one group is held at a time; only pairs inside
/// a group that were created within the window or share a session IP address are scored. The best pairs are then
/// re-read and explained.
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
        return try find(minPoints: Int((minScore * 100).rounded()), limit: limit, windowDays: windowDays, sorterBudget: SplitIdentityScan.defaultSorterBudget)
    }

    /// `find` with the bounded-memory scan, each of its sorters buffering up to `sorterBudget` bytes before it writes
    /// a run to a temporary file.
    func find(minPoints: Int, limit: Int, windowDays: Int, sorterBudget: Int) throws -> SplitIdentityReport {
        try find(minPoints: minPoints, limit: limit, windowDays: windowDays) { [store] merged, windowMs in
            try SplitIdentityScan(store: store, merged: merged, windowMs: windowMs, minPoints: minPoints, sorterBudget: sorterBudget).run()
        }
    }

    /// `find` with the pairs found by `scan`, given the ids of users left out as merged and the window in
    /// milliseconds (tests hand it a reference scan to compare reports).
    func find(minPoints: Int, limit: Int, windowDays: Int,
              scan: (_ merged: Set<String>, _ windowMs: Int64) throws -> SplitIdentityScanResult) throws -> SplitIdentityReport {
        try store.db.read {
            let merged = try MergeLedger.mergedUserIDs(store.db)
            let mergeTable = try store.db.tableExists(MergeLedger.table)
            let windowMs = Int64(windowDays) * 86_400_000
            let result = try scan(merged, windowMs)
            var candidates: [SplitIdentityCandidate] = []
            // Pairs are explained a few at a time, their users' rows read in one snapshot (one request on D1).
            while candidates.count < limit {
                var pairs: [ScoredPair] = []
                while pairs.count < min(limit - candidates.count, Self.pairsPerRead), let pair = try result.nextPair() { pairs.append(pair) }
                if pairs.isEmpty { break }
                let facts = try self.facts(rowids: pairs.flatMap { [$0.firstRowid, $0.secondRowid] })
                for pair in pairs where candidates.count < limit {
                    if let candidate = try explain(pair, facts, windowMs: windowMs, minPoints: minPoints) { candidates.append(candidate) }
                }
            }
            candidates.sort { $0.score > $1.score } // stable: a collision-corrected score never reorders equals
            return SplitIdentityReport(usersScanned: result.usersScanned, sessionsScanned: result.sessionsScanned,
                                       nameGroups: result.nameGroups, pairsScored: result.pairsScored, pairsFound: result.pairsFound,
                                       minScore: Double(minPoints) / 100, windowDays: windowDays, mergeRecordsChecked: mergeTable,
                                       usersExcludedAsMerged: result.excluded, candidates: candidates)
        }
    }

    // MARK: - explaining one pair from the store's rows

    struct Facts {
        let user: SplitIdentityUser
        let ips: [String]
        let agents: [String]
        let address: EmailAddress
    }

    /// Pairs whose users are read in one snapshot: three statements a user, under D1's and libpq's batch sizes.
    static let pairsPerRead = 16

    /// What the store holds of each user (by row locator), read in one snapshot; a user gone since the scan is absent.
    private func facts(rowids: [Int64]) throws -> [Int64: Facts] {
        try facts(rowids, where: store.db.dialect.rowLocatorCondition) { store.db.dialect.rowLocatorArgument($0) }
    }

    /// What the store holds of each user (by id), read in one snapshot; an absent user is absent.
    func facts(ids: [BetterAuthUserID]) throws -> [BetterAuthUserID: Facts] {
        try facts(ids, where: "\(store.schema.user.col(.id)) = ?") { $0.rawValue }
    }

    /// What the store holds of the users that `condition` finds, one key (bound as `argument(key)`) each.
    private func facts<Key: Hashable & Comparable>(_ keys: [Key], where condition: String,
                                                   argument: (Key) -> SQLBindable) throws -> [Key: Facts] {
        let s = store.schema, db = store.db
        let located = "\(s.user.sql) WHERE \(condition)"
        let owner = "(SELECT \(s.user.col(.id)) FROM \(located))"
        let unique = Array(Set(keys)).sorted()
        let statements = unique.flatMap { key -> [SQLStatement] in
            let locator = argument(key)
            return [SQLStatement("SELECT \(s.user.col(.id)), \(s.user.col(.name)), \(s.user.col(.email)), \(s.user.col(.createdAt)) FROM \(located)", [locator]),
                    SQLStatement("SELECT DISTINCT \(s.account.col(.providerId)) FROM \(s.account.sql) WHERE \(s.account.col(.userId)) = \(owner) ORDER BY 1", [locator]),
                    SQLStatement("SELECT \(s.session.col(.ipAddress)), \(s.session.col(.userAgent)) FROM \(s.session.sql) WHERE \(s.session.col(.userId)) = \(owner)", [locator])]
        }
        let read = try db.snapshot(statements)
        var found: [Key: Facts] = [:]
        for (position, rowid) in unique.enumerated() {
            guard let row = read[3 * position].first, let id = row[0].string else { continue }
            let providers = read[3 * position + 1].compactMap { $0[0].string }
            var ips: [String] = [], agents: [String] = []
            for session in read[3 * position + 2] {
                if let ip = session[0].string, !ip.isEmpty, !ips.contains(ip) { ips.append(ip) }
                if let agent = session[1].string, !agent.isEmpty, !agents.contains(agent) { agents.append(agent) }
            }
            let email = row[2].string ?? ""
            let address = EmailAddress(email)
            found[rowid] = Facts(user: SplitIdentityUser(id: BetterAuthUserID(id), name: row[1].string ?? "", email: email, createdAt: DateEncoding.decode(row[3]),
                                                         providers: providers, privateRelay: address.isPrivateRelay),
                                 ips: ips, agents: agents, address: address)
        }
        return found
    }

    private func explain(_ pair: ScoredPair, _ facts: [Int64: Facts], windowMs: Int64, minPoints: Int) throws -> SplitIdentityCandidate? {
        guard let first = facts[pair.firstRowid], let second = facts[pair.secondRowid] else { return nil }
        return explain(first, second, nameGroupSize: Int(pair.groupSize), windowMs: windowMs, minPoints: minPoints)
    }

    /// The pair's reasons and score (the user created first as `earlier`), or nil below `minPoints`. A name shared by
    /// more than `Points.uncommonNameLimit` users (`nameGroupSize`) counts as common.
    func explain(_ one: Facts, _ other: Facts, nameGroupSize: Int, windowMs: Int64, minPoints: Int) -> SplitIdentityCandidate? {
        var first = one, second = other
        if (second.user.createdAt ?? Timestamp(milliseconds: .max)) < (first.user.createdAt ?? Timestamp(milliseconds: .max)) { swap(&first, &second) }
        var reasons: [SplitIdentityReason] = []
        var normalizer = NameNormalizer()
        let nameKey = normalizer.key(first.user.name)
        if nameKey != 0 && nameKey == normalizer.key(second.user.name) {
            let size = nameGroupSize
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
        if let a = first.user.createdAt, let b = second.user.createdAt, b.milliseconds - a.milliseconds <= windowMs {
            reasons.append(SplitIdentityReason(code: "created_close", points: Points.createdClose, detail: "created \(Self.describe(milliseconds: b.milliseconds - a.milliseconds)) apart"))
        }
        if first.user.privateRelay != second.user.privateRelay {
            let relay = first.user.privateRelay ? first : second
            reasons.append(SplitIdentityReason(code: "relay_pair", points: Points.relayPair,
                                               detail: "one private-relay email (\(relay.user.providers.joined(separator: "+").isEmpty ? "no account" : relay.user.providers.joined(separator: "+"))) and one real address: auto-linking could not match them"))
        }
        let sharedAgents = first.agents.filter(second.agents.contains)
        if let agent = sharedAgents.first {
            reasons.append(SplitIdentityReason(code: "shared_user_agent", points: Points.sharedUserAgent, detail: "same user agent \"\(Self.shortened(agent, to: 80))\""))
        }
        let points = min(100, reasons.reduce(0) { $0 + $1.points })
        guard points >= minPoints else { return nil } // a 64-bit key collision, caught on the real rows
        let order = ["same_email_unicode", "name_match", "shared_ip", "same_mailbox", "created_close", "relay_pair", "shared_user_agent"]
        reasons.sort { ($0.points, order.firstIndex(of: $1.code) ?? 0) > ($1.points, order.firstIndex(of: $0.code) ?? 0) }
        return SplitIdentityCandidate(score: Double(points) / 100, earlier: first.user, later: second.user, reasons: reasons)
    }

    /// `text` cut to at most `limit` characters at a word's end, with "…" where it was cut.
    static func shortened(_ text: String, to limit: Int) -> String {
        guard text.count > limit else { return text }
        let head = text.prefix(limit)
        var cut = head.lastIndex(of: " ").map { head[..<$0] } ?? head
        while cut.last == " " { cut = cut.dropLast() }
        return cut + "…"
    }

    static func describe(milliseconds: Int64) -> String {
        let hours = milliseconds / 3_600_000
        if hours < 48 { return hours == 1 ? "1 hour" : "\(hours) hours" }
        return "\(hours / 24) days"
    }
}

