import Storage
import Gatehouse

/// `health`'s account walk on SQLite: the user ids, account user ids and sync subs read in order and merged
/// (`IntegrityMergeScan`, as `accounts check` does).
struct SQLiteAccountSweep: AccountSweep {
    /// One ordered walk of the user ids, account user ids and sync subs (`IntegrityMergeScan`), two statements
    /// stepped in turn on one connection (`IndexOrderCursor`); nil where a column is not in byte order.
    func window(_ store: Store, from start: String?, since: SQLValue, stride: Int, shouldStop: () -> Bool) throws -> AccountSweepWindow? {
        let user = store.schema.user
        let createdSince = "SELECT \(user.col(.createdAt)) >= ? FROM \(user.sql) WHERE \(user.col(.id)) = ?"
        var recent: Int64 = 0
        do {
            let walked = try store.db.read {
                try IntegrityMergeScan(db: store.db, schema: store.schema, sampleLimit: 0)
                    .accountLinksWindow(from: start, stride: stride, shouldStop: shouldStop) { id in
                        if try store.db.scalar(createdSince, [since, id]).int64 == 1 { recent += 1 }
                    }
            }
            return AccountSweepWindow(dangling: walked.dangling, unprovisioned: walked.unprovisioned, recent: recent, users: walked.users, next: walked.next)
        } catch is IndexOrderUnavailable {
            return nil
        }
    }
}
