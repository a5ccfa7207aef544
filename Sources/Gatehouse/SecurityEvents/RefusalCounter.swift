import Foundation
import Storage

/// What carried a provider's security event to Gatehouse: its receiver (`apple notifications serve`,
/// `google risc serve`), or `… ingest` for a body another transport stored.
public enum SecurityEventTransport: String, Sendable, Codable {
    case listener, ingest
}

/// Refused security tokens (Apple's notifications, Google's security event tokens), counted per reason and source in
/// one row per pair rather than one row each: anyone can POST a forged token, and a row each would let a flood grow
/// the store without bound. Past `maxCounters` rows, a new source is counted under "TRANSPORT (other sources)".
///
/// The table has the columns reason, source, transport, count, first_seen, last_seen, last_detail, with
/// reason and source unique together (`gatehouse_apple_refusals`, `gatehouse_google_refusals`).
struct RefusalCounter {
    let table: String

    static let apple = RefusalCounter(table: "gatehouse_apple_refusals")
    static let google = RefusalCounter(table: "gatehouse_google_refusals")

    /// The most counters kept apart by source.
    static let maxCounters = 1000
    /// The longest refusal text a counter keeps.
    static let maxDetail = 300

    /// Where refusals are counted from: the transport, and the sender's address (an IPv6 peer by its /64, which one
    /// sender holds whole).
    struct Source {
        let transport: SecurityEventTransport
        let key: String

        init(transport: SecurityEventTransport, address: String?) {
            self.transport = transport
            key = address.map { "\(transport.rawValue) \(Self.network(of: $0))" } ?? transport.rawValue
        }

        /// The counter's source past `maxCounters`.
        var others: String { "\(transport.rawValue) (other sources)" }

        /// An IPv4 address as it is; an IPv6 address as its /64; anything else cut to 64 characters.
        static func network(of address: String) -> String {
            var v6 = in6_addr()
            guard address.contains(":"), inet_pton(AF_INET6, address, &v6) == 1 else { return String(address.prefix(64)) }
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                return bytes[12...].map(String.init).joined(separator: ".")
            }
            let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            return groups.joined(separator: ":") + "::/64"
        }
    }

    /// Adds one refusal of `reason` from `source` to its counter (upserted, with the last refusal's words, never the
    /// token); returns the counter's count with this one.
    func count(reason: String, description: String, source: Source, in db: any SQLDatabase, now: Timestamp) throws -> Int64 {
        let detail = String(OperatorText.visible(description, keepLineBreaks: false).prefix(Self.maxDetail))
        // The count is read before the upsert, never after it: a write may not read back its own rows (D1).
        return try db.write {
            var key = source.key
            var counted = try db.row("SELECT count FROM \(table) WHERE reason = ? AND source = ?", [reason, key])
            if counted == nil, try db.scalar("SELECT count(*) FROM \(table)").int64 ?? 0 >= Int64(Self.maxCounters) {
                key = source.others
                counted = try db.row("SELECT count FROM \(table) WHERE reason = ? AND source = ?", [reason, key])
            }
            try db.execute("""
                INSERT INTO \(table) (reason, source, transport, count, first_seen, last_seen, last_detail) VALUES (?, ?, ?, 1, ?, ?, ?)
                ON CONFLICT (reason, source) DO UPDATE SET count = \(table).count + 1, last_seen = excluded.last_seen,
                    last_detail = excluded.last_detail
                """, [reason, key, source.transport.rawValue, now.iso8601, now.iso8601, detail])
            return (counted?["count"].int64 ?? 0) + 1
        }
    }
}
