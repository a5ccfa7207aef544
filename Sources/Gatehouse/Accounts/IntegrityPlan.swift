import Storage

/// How one engine answers `accounts check` faster than one SQL anti-join per check (`StoreEngine.integrityPlan`):
/// SQLite walks the sorted indexes (`IntegrityMergeScan`), Postgres tells the server how to join
/// (`PostgresIntegrityPlan`). The checker runs every check the plan leaves out as its anti-join; an engine without a
/// plan of its own hands out nil, and every check is its anti-join.
package protocol IntegrityPlan {
    /// Inside the checker's read transaction, before anything else is read in it: the tallies of the checks this
    /// engine answers its own way, by check code. `antiJoins` holds each check's SQL by code, for a plan that runs
    /// some of them as they are (on a second connection, say).
    func tallies(antiJoins: [String: String]) throws -> [String: IntegrityTally]
    /// Before the checker runs the anti-join of the check `code` itself.
    func beforeAntiJoin(_ code: String) throws
    /// After the check, however it ended: puts back what the plan changed on the connection.
    func end()
}
