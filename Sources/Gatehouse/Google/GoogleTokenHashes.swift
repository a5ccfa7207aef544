import Storage

/// Google accounts by the hash Google's `token-revoked` event may name their refresh token with
/// (`hash_base64_sha512_sha512`). A hash cannot be looked up in Better Auth's account table, so each Google account's
/// hash is kept in `gatehouse_google_token_hashes` with the token's first 16 characters, which tell a token Better
/// Auth has replaced since. A lookup reads that table's index and checks the account's current token; when the hash is
/// not there, the accounts whose token is new or changed are hashed and recorded, in pages, and it looks again. The
/// first lookup on a store hashes every Google refresh token once.
struct GoogleTokenHashes {
    let store: Store

    /// The most accounts one page hashes and records.
    static let pageRows = 2_000

    /// The Google account (its `columns`, and `refresh`) whose current refresh token hashes to `hash`.
    func account(hash: String, columns: String) throws -> Row? {
        if let row = try recorded(hash, columns: columns) { return row }
        guard try record() > 0 else { return nil }
        return try recorded(hash, columns: columns)
    }

    private func recorded(_ hash: String, columns: String) throws -> Row? {
        let account = store.schema.account
        let ids = try store.db.rows("SELECT account_id FROM gatehouse_google_token_hashes WHERE hash = ? ORDER BY account_id LIMIT 8", [hash])
            .compactMap { $0.optionalString("account_id") }
        for id in ids {
            guard let row = try store.db.row("""
                SELECT \(columns), \(account.col(.refreshToken)) AS refresh FROM \(account.sql)
                WHERE \(account.col(.id)) = ? AND \(account.col(.providerId)) = 'google'
                """, [id]), let refresh = row.optionalString("refresh"),
                  GoogleSecurityEvent.TokenIdentifier.doubleSHA512(of: refresh) == hash else { continue }
            return row
        }
        return nil
    }

    /// Hashes and records every Google account whose refresh token is not recorded as it is now; returns how many.
    @discardableResult
    func record() throws -> Int {
        let account = store.schema.account
        let id = "a.\(account.col(.id))", refresh = "a.\(account.col(.refreshToken))"
        let page = min(store.engine.rowsPerWrite ?? Self.pageRows, Self.pageRows)
        var after = "", hashed = 0
        while true {
            let rows = try store.db.rows("""
                SELECT \(id) AS id, \(refresh) AS refresh, substr(\(refresh), 1, 16) AS prefix
                FROM \(account.sql) a LEFT JOIN gatehouse_google_token_hashes h ON h.account_id = \(id)
                WHERE a.\(account.col(.providerId)) = 'google' AND \(refresh) IS NOT NULL AND \(id) > ?
                  AND (h.account_id IS NULL OR h.token_prefix <> substr(\(refresh), 1, 16))
                ORDER BY \(id) LIMIT \(page)
                """, [after])
            guard let last = rows.last?.optionalString("id") else { break }
            after = last
            let statements = rows.compactMap { row -> SQLStatement? in
                guard let accountID = row.optionalString("id"), let token = row.optionalString("refresh"), let prefix = row.optionalString("prefix") else { return nil }
                return SQLStatement("""
                    INSERT INTO gatehouse_google_token_hashes (account_id, token_prefix, hash) VALUES (?, ?, ?)
                    ON CONFLICT (account_id) DO UPDATE SET token_prefix = excluded.token_prefix, hash = excluded.hash
                    """, [accountID, prefix, GoogleSecurityEvent.TokenIdentifier.doubleSHA512(of: token)])
            }
            try store.db.write { _ = try store.db.batch(statements) }
            hashed += statements.count
            if rows.count < page { break }
        }
        return hashed
    }
}
