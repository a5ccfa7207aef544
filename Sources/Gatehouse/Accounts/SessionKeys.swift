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
    static func read(_ db: Database, schema: AuthSchema) throws -> SessionKeys {
        let s = schema.session
        var keys = SessionKeys()
        let statement = try db.statement("SELECT \(s.col(.userId)), \(s.col(.ipAddress)), \(s.col(.userAgent)) FROM \(s.sql)")
        try statement.bind([])
        defer { statement.reset() }
        while try statement.step() {
            guard let userID = statement.value(at: 0).string else { continue }
            let ip = statement.value(at: 1).string ?? "", agent = statement.value(at: 2).string ?? ""
            keys.owners.append(FNV1a.hash(userID))
            keys.ips.append(ip.isEmpty ? 0 : FNV1a.hash(ip))
            keys.agents.append(agent.isEmpty ? 0 : FNV1a.hash(agent))
        }
        return keys
    }
}
