import Storage

/// Every session reduced to three 64-bit keys (its user id's, its IP address's and its user agent's; 0 for
/// an empty value), in table order: the session half of the duplicates scan.
///
/// It runs on a `SecondConnection` while the calling thread scans users, so that the two scans use both cores.
struct SessionKeys {
    var owners: [UInt64] = []
    var ips: [UInt64] = []
    var agents: [UInt64] = []

    /// Reads the keys through `db`.
    static func read(_ db: SQLDatabase, schema: AuthSchema) throws -> SessionKeys {
        let s = schema.session
        var keys = SessionKeys()
        try db.scan(s.sql, columns: [s.col(.userId), s.col(.ipAddress), s.col(.userAgent)], where: nil, [], orderedBy: nil) { row in
            guard let userID = row[0].string else { return }
            let ip = row[1].string ?? "", agent = row[2].string ?? ""
            keys.owners.append(FNV1a.hash(userID))
            keys.ips.append(ip.isEmpty ? 0 : FNV1a.hash(ip))
            keys.agents.append(agent.isEmpty ? 0 : FNV1a.hash(agent))
        }
        return keys
    }
}
