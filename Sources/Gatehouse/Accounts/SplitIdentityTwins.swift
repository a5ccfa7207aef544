import Foundation
import Storage

/// The likely twins of one user (`GET /api/users/:id/duplicates`, the user page's "Likely duplicates" card): the pairs
/// `SplitIdentityFinder.find` would score for this user, found by indexed lookups instead of a scan of the store. The
/// scan pairs users inside a name group or a mailbox group; here those groups are read for one user: the users whose
/// normalized name is this user's (`NameSearch`, through the name index), whose email has the same mailbox at another
/// domain (a range on the email index), or whose email is this one in another Unicode normalisation form (equality
/// on the email index). Each pair is then explained and scored as the scan's are, whichever side was asked about.
///
///     let twins = try SplitIdentityFinder(store: store).twins(of: BetterAuthUserID("u_42"))
extension SplitIdentityFinder {
    /// Users sharing a name beyond this are read no further: the name is common, and the scan pairs such groups by
    /// shared IP addresses only.
    static let maxNameGroupForTwins = 200

    /// The pairs of `id` with a score of at least `minScore`, best first, at most `limit`; empty for an unknown user and
    /// for a user of an applied merge (the scan leaves those out too).
    public func twins(of id: BetterAuthUserID, minScore: Double = 0.7, limit: Int = 10, windowDays: Int = 30) throws -> [SplitIdentityCandidate] {
        guard minScore.isFinite, (0...1).contains(minScore) else {
            throw GatehouseError.invalid("the minimum score must be between 0 and 1, got \(minScore)", fix: "use e.g. \(field: .minScore) 0.7")
        }
        let minPoints = Int((minScore * 100).rounded()), windowMs = Int64(windowDays) * 86_400_000
        return try store.db.read {
            let merged = try MergeLedger.mergedUserIDs(store.db)
            guard !merged.contains(id.rawValue), let me = try facts(ids: [id])[id] else { return [] }
            var normalizer = NameNormalizer()
            let nameKey = normalizer.key(me.user.name)
            var others = Set<BetterAuthUserID>()
            var nameGroup: [BetterAuthUserID] = []
            if nameKey != 0 {
                // Users whose normalized name contains this one's; `explain` keeps those whose name is equal.
                nameGroup = try NameSearch(db: store.db, schema: store.schema).ids(matching: me.user.name, limit: Self.maxNameGroupForTwins).ids
                others.formUnion(nameGroup)
            }
            others.formUnion(try sameMailbox(me.address))
            others.formUnion(try sameEmailOtherForm(me.user.email))
            others.remove(id)
            others = others.filter { !merged.contains($0.rawValue) }
            var found: [BetterAuthUserID: Facts] = [:]
            let sorted = others.sorted()
            for start in stride(from: 0, to: sorted.count, by: 2 * Self.pairsPerRead) {
                found.merge(try facts(ids: Array(sorted[start..<min(sorted.count, start + 2 * Self.pairsPerRead)])), uniquingKeysWith: { a, _ in a })
            }
            // The name group's size as the scan counts it: this user and every user whose normalized name is equal.
            let groupSize = nameGroup.count >= Self.maxNameGroupForTwins ? Self.maxNameGroupForTwins
                : 1 + nameGroup.filter { $0 != id && found[$0].map { normalizer.key($0.user.name) == nameKey } == true }.count
            let candidates = sorted.compactMap { other in
                found[other].flatMap { explain(me, $0, nameGroupSize: groupSize, windowMs: windowMs, minPoints: minPoints) }
            }
            return Array(candidates.sorted { $0.score > $1.score }.prefix(limit))
        }
    }

    /// Users with the same mailbox at another domain (not relay addresses), unless the mailbox is generic (more than
    /// `maxUsersPerMailbox` users share it).
    private func sameMailbox(_ address: EmailAddress) throws -> [BetterAuthUserID] {
        guard address.isPresent, !address.isPrivateRelay else { return [] }
        // Better Auth lowercases emails; the range is the index's order (bytes), as the email prefix search reads it.
        let prefix = address.mailbox.lowercased() + "@"
        let email = store.db.dialect.byteOrdered(store.schema.user.col(.email))
        var sql = "SELECT \(store.schema.user.col(.id)), \(store.schema.user.col(.email)) FROM \(store.schema.user.sql) WHERE \(email) >= ?"
        var arguments: [SQLBindable] = [prefix]
        if let upper = UserQuery.prefixUpperBound(prefix) {
            sql += " AND \(email) < ?"
            arguments.append(upper)
        }
        sql += " ORDER BY \(email) LIMIT ?"
        arguments.append(Self.maxUsersPerMailbox + 1)
        let rows = try store.db.rows(sql, arguments)
        guard rows.count <= Self.maxUsersPerMailbox else { return [] }
        return rows.compactMap { $0[0].string.map(BetterAuthUserID.init) }
    }

    /// Users whose email is `email` in another Unicode normalisation form (composed or decomposed).
    private func sameEmailOtherForm(_ email: String) throws -> [BetterAuthUserID] {
        // Compared by code units: Swift's `==` (and so a `Set`) takes canonically equivalent forms for one string.
        var forms: [String] = []
        for form in [email.precomposedStringWithCanonicalMapping, email.decomposedStringWithCanonicalMapping]
        where !JavaScriptString.strictEquals(form, email) && !forms.contains(where: { JavaScriptString.strictEquals($0, form) }) {
            forms.append(form)
        }
        guard !forms.isEmpty else { return [] }
        let placeholders = Array(repeating: "?", count: forms.count).joined(separator: ", ")
        return try store.db.rows("SELECT \(store.schema.user.col(.id)) FROM \(store.schema.user.sql) WHERE \(store.schema.user.col(.email)) IN (\(placeholders))",
                                 forms.map { $0 as SQLBindable }).compactMap { $0[0].string.map(BetterAuthUserID.init) }
    }
}
