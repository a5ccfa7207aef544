/// One user as the duplicates scan sees it: 64-bit keys of the name, email and session values (no strings), the
/// creation time, and where the user stands in the scan. It travels through `ExternalSorter` as a record, so that a
/// pass holds only the users of one name or mailbox at a time.
struct SplitIdentityMember {
    /// Position in the scan of the user table (the order ties are broken by, as in `SplitIdentityReference`).
    var index: Int32
    /// The row locator, to read the user's rows back when a pair is explained.
    var rowid: Int64
    var nameKey: UInt64
    /// Milliseconds; `SplitIdentityScan.unknownTime` when unreadable.
    var created: Int64
    var mailbox: UInt64
    var domain: UInt64
    var relay: Bool
    /// `EmailKeys.lookalikeKeys` (0 and 0 for an all-ASCII email).
    var lookalike: UInt64
    var exact: UInt64
    /// Users sharing this user's normalised name (1 when none does).
    var groupSize: Int32 = 1
    /// Distinct non-empty IP address keys of the user's first 64 sessions (in session table order).
    var ips64: [UInt64] = []
    /// Distinct non-empty user agent keys of the first 64 sessions.
    var agents64: [UInt64] = []
    /// Distinct non-empty IP address keys of later sessions that are not in `ips64`.
    var laterIPs: [UInt64] = []

    /// Whether the two have a session IP address in common among their first 64 sessions.
    func sharesIP(with other: SplitIdentityMember) -> Bool { Self.intersect(ips64, other.ips64) }
    /// Whether the two have a session user agent in common among their first 64 sessions.
    func sharesAgent(with other: SplitIdentityMember) -> Bool { Self.intersect(agents64, other.agents64) }

    private static func intersect(_ a: [UInt64], _ b: [UInt64]) -> Bool {
        guard !a.isEmpty, !b.isEmpty else { return false }
        for x in a where b.contains(x) { return true }
        return false
    }

    func write(_ out: inout ByteWriter) {
        out.u32(UInt32(bitPattern: index)); out.i64(rowid); out.u64(nameKey); out.i64(created); out.u64(mailbox); out.u64(domain)
        out.u8(relay ? 1 : 0); out.u64(lookalike); out.u64(exact); out.u32(UInt32(bitPattern: groupSize))
        out.u32(UInt32(ips64.count))
        for key in ips64 { out.u64(key) }
        out.u32(UInt32(agents64.count))
        for key in agents64 { out.u64(key) }
        out.u32(UInt32(laterIPs.count))
        for key in laterIPs { out.u64(key) }
    }

    init(index: Int32, rowid: Int64, nameKey: UInt64, created: Int64, mailbox: UInt64, domain: UInt64, relay: Bool, lookalike: UInt64, exact: UInt64) {
        self.index = index; self.rowid = rowid; self.nameKey = nameKey; self.created = created; self.mailbox = mailbox
        self.domain = domain; self.relay = relay; self.lookalike = lookalike; self.exact = exact
    }

    init(_ reader: inout ByteReader) {
        index = Int32(bitPattern: reader.u32()); rowid = reader.i64(); nameKey = reader.u64(); created = reader.i64()
        mailbox = reader.u64(); domain = reader.u64(); relay = reader.u8() != 0; lookalike = reader.u64(); exact = reader.u64()
        groupSize = Int32(bitPattern: reader.u32())
        func keys() -> [UInt64] {
            let count = Int(reader.u32())
            guard count > 0 else { return [] }
            return (0..<count).map { _ in reader.u64() }
        }
        ips64 = keys(); agents64 = keys(); laterIPs = keys()
    }
}
