import Foundation
import Storage

/// Fills a store with deterministic, realistic demo data, written exactly as Better Auth writes it:
/// 32-character ids, dates in each column's own encoding, booleans as 0/1, lowercased emails.
///
/// The population: Apple users (about a third behind Hide My Email relays), Google users,
/// email/password users, people linked to both providers, and a few percent of split identities —
/// one person as an Apple-relay user and, days later, a separate Google user with the same name
/// and similar sessions. Sync `users` rows (a few unprovisioned), workspaces, subscriptions and
/// allow-list roles complete it.
public struct DemoSeeder: Sendable {
    /// What was written.
    public struct Report: Sendable, Codable {
        public var users = 0
        public var accounts = 0
        public var sessions = 0
        public var syncUsers = 0
        public var workspaces = 0
        public var subscriptions = 0
        public var roles = 0
        public var splitIdentities = 0
        public var verifications = 0
        public var seconds = 0.0
        /// The seed stopped early (`shouldStop`) after a whole batch: what is written is consistent.
        public var interrupted = false

        mutating func add(_ other: Report) {
            users += other.users; accounts += other.accounts; sessions += other.sessions; syncUsers += other.syncUsers
            workspaces += other.workspaces; subscriptions += other.subscriptions; roles += other.roles
            splitIdentities += other.splitIdentities; verifications += other.verifications
        }
        public var rows: Int { users + accounts + sessions + syncUsers + workspaces + subscriptions + roles + verifications }
    }

    public let seed: UInt64
    /// The "now" the data is built around; the same seed and anchor give the same rows.
    public let anchor: Timestamp

    /// The anchors whose data stays within 1970…9999 (the dates Better Auth's ISO-8601 text and epoch columns hold):
    /// rows are dated up to two years (730 days and an hour) before the anchor and up to about 60 days after it, so
    /// a year of margin each side: 1973-01-01 to 9998-01-01.
    public static let anchorRange = Timestamp(milliseconds: 94_694_400_000)...Timestamp(milliseconds: 253_339_228_800_000)
    /// Users per write transaction.
    public var batchSize = 4_000
    /// The caller created the store for this seed, so nobody else has it open: the engine may bulk-load it (SQLite's
    /// journal in memory, see `SQLiteDemoSeedLoad`). Off, a SQLite seed runs in WAL, as a store that others may open
    /// is always written. (On Postgres a store without users is always bulk-loaded.)
    public var bulkLoad = false
    /// Asked between batches; true stops the seed there (an interrupt: the store keeps the whole batches written).
    public var shouldStop: @Sendable () -> Bool = { false }

    public init(seed: UInt64, anchor: Timestamp) {
        self.seed = seed
        self.anchor = anchor
    }

    static let firstNames = ["Maria", "José", "Aiko", "Liam", "Olivia", "Noah", "Emma", "Mateo", "Sofia", "Lucas", "Chloé", "Yusuf",
                             "Amara", "Chen", "Priya", "Ivan", "Fatima", "Oliver", "Ingrid", "Kwame", "Hana", "Diego", "Elena", "Tomás",
                             "Zoe", "Arjun", "Nadia", "Felix", "Leila", "Jonas", "Mei", "Samuel", "Ava", "Omar", "Freya", "Luca",
                             "Isabel", "Kenji", "Ana", "Erik", "Sara", "Marco", "Nina", "Pablo", "Rosa", "Theo", "Yara", "Dmitri"]
    static let lastNames = ["García", "Smith", "Tanaka", "Müller", "Rossi", "Dubois", "Kowalski", "Nguyen", "Okafor", "Silva", "Johansson",
                            "Patel", "Kim", "Hernández", "Novak", "O'Brien", "Haddad", "Schmidt", "Moreau", "Ivanova", "Costa", "Larsen",
                            "Yamamoto", "Fischer", "Brown", "Lopez", "Jensen", "Wójcik", "Ahmed", "Bianchi", "Walsh", "Sato", "Martin",
                            "Andersson", "Cohen", "Popescu", "Reyes", "Murphy", "Chowdhury", "Kaya"]
    static let mailDomains = ["gmail.com", "outlook.com", "icloud.com", "proton.me", "yahoo.com", "fastmail.com", "hey.com", "web.de"]
    static let userAgents = [
        "ZudoText/3.4.1 (iPhone; iOS 18.1; Scale/3.00)",
        "ZudoText/3.4.0 (iPad; iOS 17.6; Scale/2.00)",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
        "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
        "ZudoText-Desktop/2.9.0 (macOS 15.1; arm64)",
        "ZudoText-Desktop/2.9.0 (Windows 11; x64)",
    ]
    static let plans = ["pro-monthly", "pro-yearly", "team-monthly"]

    /// The kinds of person the demo population holds.
    enum Kind { case apple, google, email, linked, split }

    /// One batch of rows and what it adds to the report.
    struct Batch: Sendable {
        let rows: SeedBatch
        let report: Report
    }

    /// Throws, naming the way round, when `store` cannot take the seed: call it before changing anything else.
    public static func checkCanSeed(_ store: Store) throws {
        try store.engine.checkCanSeedDemo(store)
    }

    /// Seeds `count` users (a split identity counts as two). One thread builds rows while this one inserts
    /// them, a batch per write transaction, so the two cores share the work. How the batches go in is the engine's
    /// (`StoreEngine.demoSeedLoad`: SQLite's journal in memory for a store created for the seed, Postgres's one
    /// transaction with the indexes set aside for a store without users).
    public func seed(_ store: Store, users count: Int, progress: ((Int) -> Void)? = nil) throws -> Report {
        let started = Timestamp.now()
        let db = store.db
        try Self.checkCanSeed(store)
        let firstPerson = try db.scalar("SELECT count(*) FROM \(store.schema.user.sql)").int64.map(Int.init) ?? 0
        let round = try db.scalar("SELECT count(*) FROM gatehouse_audit WHERE action = 'demo.seed'").int64.map(Int.init) ?? 0
        var shapes = SeedLayout(schema: store.schema)
        let engineLoad = try store.engine.demoSeedLoad(store, tables: shapes.tables, firstPerson: firstPerson, createdForTheSeed: bulkLoad)
        defer { engineLoad.end() }
        shapes.nameKeys = engineLoad.buildsNameKeys
        let layout = shapes
        let inserter = try SeedInserter(store: store, layout: layout)
        let queue = BoundedQueue<Batch>(capacity: 1)
        let done = DispatchSemaphore(value: 0)
        let producer = Thread { [self] in
            build(count: count, firstPerson: firstPerson, round: round, layout: layout, into: queue)
            done.signal()
        }
        producer.stackSize = 1 << 20
        producer.start()
        var report = Report()
        do {
            try engineLoad.load(inserter) {
                while let batch = queue.pop() {
                    if shouldStop() {
                        report.interrupted = true
                        queue.cancel()
                        break
                    }
                    try db.write { try inserter.insert(batch.rows) }
                    report.add(batch.report)
                    progress?(report.users)
                }
            }
        } catch {
            queue.cancel()
            done.wait()
            guard report.users > 0 else { throw error }
            let cause = GatehouseError.operatorFacing(error, storePath: store.path) ?? GatehouseError("\(error)")
            if engineLoad.isOneTransaction {
                // The bulk load is one transaction: the batches loaded so far went with it.
                let message = cause.message.hasSuffix(".") ? String(cause.message.dropLast()) : cause.message
                throw GatehouseError("\(message); the seed was one transaction and nothing of it was written (the store is as before the seed)",
                                     fix: cause.fix, code: cause.code)
            }
            // Earlier batches are committed: say how much the store now holds, not "nothing was written", and bring the
            // name search index up to date for them (a bulk load dropped it; otherwise their users are pending), or say
            // which command does when the store takes no more writes now.
            let indexed = (try? engineLoad.beforeIndexing()) != nil && (try? UserSearchIndex.ensure(db, schema: store.schema)) != nil
            let rest = "seed the rest once the cause is fixed: \(run: .demoSeed, .option(.users, "\(count - report.users)")) (another seed adds new people; it never duplicates)"
            throw GatehouseError("\(cause.message), after \(report.users) of \(count) users were committed; the failed batch was rolled back and the store holds every batch before it"
                                    + (indexed ? ", name search index included" : "; the name search index does not cover them yet"),
                                 fix: indexed ? rest : "bring the name search index up to date with \(run: .accountsIndex), then \(rest)",
                                 code: cause.code)
        }
        done.wait()
        try engineLoad.beforeIndexing()
        try UserSearchIndex.ensure(db, schema: store.schema)
        try store.audit.append(db, actor: Actor("demo-seeder"), action: "demo.seed", subject: store.path, details: [
            "users": .int(Int64(report.users)), "seed": .string(String(seed)), "anchor": .string(anchor.iso8601),
            "interrupted": .bool(report.interrupted),
        ])
        report.seconds = Double(Timestamp.now().milliseconds - started.milliseconds) / 1000
        return report
    }

    /// The producer: builds batches of `batchSize` users and hands them over until `count` are built.
    /// `round` counts the seeds this store had before.
    func build(count: Int, firstPerson: Int, round: Int, layout: SeedLayout, into queue: BoundedQueue<Batch>) {
        defer { queue.finish() }
        // A store seeded before continues with a stream of its own: the same seed again must not repeat the ids
        // it wrote the first time. The first seed of a store gets exactly the seed's stream.
        var random = DemoRandom(seed: round == 0 ? seed : seed ^ (UInt64(round) &* 0xD6E8_FEB8_6659_FD93))
        let writer = SeedRowBuilder(layout: layout)
        // Emails carry the person's number (`DemoPeople`): its position in the store, in a block per seed (seeds
        // below 1,000), so that seeds running into one store at the same time never write the same address.
        let block = Int((seed &- 1) % UInt64(DemoPeople.blocks))
        var position = firstPerson
        var built = 0
        while built < count {
            var report = Report()
            let batchEnd = min(count, built + batchSize)
            while built + report.users < batchEnd {
                position += 1
                seedPerson(DemoPeople.number(block: block, position: position), room: batchEnd - built - report.users, random: &random, writer: writer, report: &report)
            }
            built += report.users
            guard queue.push(Batch(rows: writer.takeBatch(), report: report)) else { return }
        }
    }

    private func seedPerson(_ index: Int, room: Int, random: inout DemoRandom, writer: SeedRowBuilder, report: inout Report) {
        let roll = random.below(1000)
        var kind: Kind = roll < 300 ? .apple : roll < 620 ? .google : roll < 820 ? .email : roll < 960 ? .linked : .split
        if kind == .split && room < 2 { kind = .google }
        let first = random.pick(Self.firstNames), last = random.pick(Self.lastNames)
        let name = "\(first) \(last)"
        let local = Self.emailLocal(first, last) + ".\(index)"
        let domain = random.pick(Self.mailDomains)
        // Created within the last two years; the anchor is "now".
        let created = Timestamp(milliseconds: anchor.milliseconds - Int64(random.below(730 * 86_400_000)) - 3_600_000)
        let ip = Self.ipAddress(&random)
        let agent = random.pick(Self.userAgents)

        switch kind {
        case .apple:
            let relay = random.chance(0.34)
            let email = relay ? Self.relayAddress(index, &random) : "\(local)@\(domain)"
            let id = writer.user(name: name, email: email, verified: true, created: created, random: &random)
            writer.account(user: id, provider: "apple", created: created, random: &random)
            finishUser(id, created: created, ip: ip, agent: agent, random: &random, writer: writer, report: &report, accounts: 1)
        case .google:
            let id = writer.user(name: name, email: "\(local)@gmail.com", verified: true, created: created, random: &random)
            writer.account(user: id, provider: "google", created: created, random: &random)
            finishUser(id, created: created, ip: ip, agent: agent, random: &random, writer: writer, report: &report, accounts: 1)
        case .email:
            let id = writer.user(name: name, email: "\(local)@\(domain)", verified: random.chance(0.7), created: created, random: &random)
            writer.account(user: id, provider: "credential", created: created, random: &random)
            finishUser(id, created: created, ip: ip, agent: agent, random: &random, writer: writer, report: &report, accounts: 1)
        case .linked:
            let id = writer.user(name: name, email: "\(local)@gmail.com", verified: true, created: created, random: &random)
            writer.account(user: id, provider: "google", created: created, random: &random)
            writer.account(user: id, provider: "apple", created: notAfterAnchor(created.adding(seconds: Int64(random.below(60 * 86_400)))), random: &random)
            finishUser(id, created: created, ip: ip, agent: agent, random: &random, writer: writer, report: &report, accounts: 2)
        case .split:
            // The same human twice: Apple with Hide My Email on iOS, then Google on the desktop days later.
            let apple = writer.user(name: name, email: Self.relayAddress(index, &random), verified: true, created: created, random: &random)
            writer.account(user: apple, provider: "apple", created: created, random: &random)
            finishUser(apple, created: created, ip: ip, agent: Self.userAgents[0], random: &random, writer: writer, report: &report, accounts: 1)
            // Never after the hour before the anchor, as every other person's creation.
            let later = notAfterAnchor(created.adding(seconds: Int64(2 + random.below(19)) * 86_400 + Int64(random.below(86_400))), margin: 3_600)
            let google = writer.user(name: name, email: "\(local)@gmail.com", verified: true, created: later, random: &random)
            writer.account(user: google, provider: "google", created: later, random: &random)
            finishUser(google, created: later, ip: ip, agent: Self.userAgents[6], random: &random, writer: writer, report: &report, accounts: 1)
            report.splitIdentities += 1
        }
    }

    private func finishUser(_ id: String, created: Timestamp, ip: String, agent: String, random: inout DemoRandom,
                            writer: SeedRowBuilder, report: inout Report, accounts: Int) {
        report.users += 1
        report.accounts += accounts
        let sessions = random.below(4)
        for number in 0..<sessions {
            // Most sessions come from the person's usual address and device; some from elsewhere.
            let sessionIP = number == 0 || random.chance(0.6) ? ip : Self.ipAddress(&random)
            let sessionAgent = number == 0 || random.chance(0.7) ? agent : random.pick(Self.userAgents)
            let start = Timestamp(milliseconds: max(created.milliseconds, anchor.milliseconds - Int64(random.below(20 * 86_400)) * 1000))
            writer.session(user: id, created: start, expires: start.adding(seconds: 7 * 86_400), ip: sessionIP, agent: sessionAgent, random: &random)
        }
        report.sessions += sessions
        // A few older users were never provisioned on the sync server (they signed up before signup was wired to
        // provisionBetterAuthUser); every recent signup is.
        let provisioned = random.chance(0.97) || created.milliseconds > anchor.milliseconds - AccountHealthChecks.recentWindow.value * 1000
        guard provisioned else { return }
        let syncID = writer.syncUser(sub: "better_auth|" + id, created: created.adding(seconds: 2))
        report.syncUsers += 1
        let workspaces = random.chance(0.85) ? 1 + (random.chance(0.15) ? random.below(3) : 0) : 0
        for number in 0..<workspaces {
            writer.workspace(owner: syncID, name: number == 0 ? "Personal" : "Project \(number)", created: notAfterAnchor(created.adding(seconds: 60 + Int64(number) * 86_400)), random: &random)
        }
        report.workspaces += workspaces
        if random.chance(0.25) {
            let status = random.pick(["active", "active", "active", "trialing", "past_due", "canceled"])
            writer.subscription(user: syncID, plan: random.pick(Self.plans), status: status,
                                    periodEnd: anchor.adding(seconds: Int64(random.below(30 * 86_400))), created: created.adding(seconds: 3600), random: &random)
            report.subscriptions += 1
        }
        if random.chance(0.002) {
            writer.role(sub: "better_auth|" + id, role: random.chance(0.3) ? "admin" : "dev", granted: notAfterAnchor(created.adding(seconds: 86_400)))
            report.roles += 1
        }
        if random.chance(0.01), writer.verification(identifier: "email-verification", created: anchor, random: &random) {
            report.verifications += 1
        }
    }

    /// `time`, or the anchor less `margin` seconds when `time` is later: the data never lies after its "now" (expiry
    /// dates aside). The random draws stay as they were, so the same seed gives the same rows otherwise.
    private func notAfterAnchor(_ time: Timestamp, margin: Int64 = 0) -> Timestamp {
        let latest = anchor.adding(seconds: -margin)
        return time.milliseconds > latest.milliseconds ? latest : time
    }

    static func emailLocal(_ first: String, _ last: String) -> String {
        let folded = (first + "." + last).lowercased().applyingFold()
        return String(folded.unicodeScalars.filter { ($0.value >= 97 && $0.value <= 122) || $0 == "." }.map(Character.init))
    }

    /// Person `number`'s Hide My Email address (`DemoPeople.relayAddress(of:)`): one person's alone, never a random
    /// draw that may meet another's. It still takes one draw from the stream, as a random address would, so every
    /// other value of the seed keeps its place in the stream.
    static func relayAddress(_ number: Int, _ random: inout DemoRandom) -> String {
        _ = random.next()
        return DemoPeople.relayAddress(of: number)
    }

    static func ipAddress(_ random: inout DemoRandom) -> String {
        let prefixes = ["81.2", "89.204", "176.12", "203.0", "73.158", "98.207", "2.56", "185.199", "62.30", "101.53"]
        return "\(random.pick(prefixes)).\(random.below(256)).\(1 + random.below(254))"
    }
}

private let accentFolds: [Character: String] = [
    "á": "a", "à": "a", "ä": "a", "é": "e", "è": "e", "í": "i", "ó": "o", "ö": "o", "ú": "u", "ü": "u", "ñ": "n", "ç": "c",
    "ł": "l", "ń": "n", "ś": "s", "'": "", "ø": "o", "å": "a", "ć": "c",
]

private extension String {
    /// Strips accents for email local parts (García → garcia).
    func applyingFold() -> String {
        String(flatMap { accentFolds[$0] ?? String($0) })
    }
}
